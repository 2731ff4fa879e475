"""Has a reference converged? The rule a compared model must pass before a claim is judged against it.

A claim such as "HyperU-ViT matches ViT" or "every method beats the base model" says something
only if the reference was trained to the end of its learning: a reference stopped early makes any
method trained longer (or fine-tuned from it) look good. Two checks, each on what a run records:

* :func:`plateau` — the training loss (``metrics["history"]``, logged every ``log_every`` steps)
  has flattened: the mean of its last :data:`WINDOW` of the logged points is less than
  :data:`TOLERANCE` (relative) below the mean of the window before it; or, for a classifier's
  cross-entropy (``fitted_below=FIT_LOSS``), that mean is below :data:`FIT_LOSS`: the model fits its training
  distribution, and a loss near zero keeps falling by a large share of itself under a decaying learning rate
  while the model changes little;
* :func:`fit` — an accuracy the claim presupposes (e.g. ≥ 0.95 on the training hops) is reached.

:func:`ponder.ledger.verdicts.unconverged` turns a failed check into an *inconclusive* row that says so.
"""

import math
from collections.abc import Sequence

import numpy as np

WINDOW = 0.25  # the share of the logged losses in each of the two windows compared
TOLERANCE = 0.05  # the relative fall of the mean loss between them that still counts as flat
FIT = 0.95  # the in-distribution accuracy a claim about extrapolation presupposes
FIT_LOSS = -math.log(FIT)  # 0.051 nats: a cross-entropy that gives the right class 0.95 on (geometric) average


def _windows(history: Sequence[dict], window: float) -> tuple[float, float] | None:
    """The mean training loss of the second-to-last and of the last ``window`` of the logged points
    (``history``: ``[{"step", "loss"}, ...]``); ``None`` with fewer than 4 points."""
    losses = np.array([point["loss"] for point in history], dtype=float)
    size = int(len(losses) * window)
    if size < 2:
        return None
    return losses[-2 * size : -size].mean(), losses[-size:].mean()


def plateau_fall(history: Sequence[dict], window: float = WINDOW) -> float:
    """The relative fall of the mean training loss from the second-to-last to the last ``window`` of
    the logged points (``history``: ``[{"step", "loss"}, ...]``); ``nan`` with fewer than 4 points."""
    means = _windows(history, window)
    if means is None:
        return float("nan")
    before, last = means
    return float((before - last) / abs(before)) if before else 0.0


def plateau(
    history: Sequence[dict], tolerance: float = TOLERANCE, window: float = WINDOW, fitted_below: float | None = None
) -> str | None:
    """``None`` if the training loss of ``history`` has flattened (:func:`plateau_fall` below
    ``tolerance``) or, with ``fitted_below``, its last window's mean is below it; else why not."""
    fall = plateau_fall(history, window)
    if np.isnan(fall):
        return f"too few logged losses ({len(history)}) to see a plateau"
    last = _windows(history, window)[1]
    if fall >= tolerance and (fitted_below is None or last >= fitted_below):
        fitted = "" if fitted_below is None else f", to {last:.3f} (fitted: < {fitted_below:.3f})"
        return (
            f"its training loss still fell {fall:.0%} over its last {window:.0%} of training{fitted} "
            f"(plateau: < {tolerance:.0%})"
        )
    return None


def fit(accuracy: float, threshold: float = FIT, what: str = "in-distribution accuracy") -> str | None:
    """``None`` if ``accuracy`` reaches ``threshold``, else why not."""
    return None if accuracy >= threshold else f"its {what} is {accuracy:.2f}, below {threshold:.2f}"


def unfinished(histories: dict[str, Sequence[dict]], fitted_below: float | None = None) -> dict[str, str]:
    """``{reference: why}`` for the references (``{name: training history}``) whose loss has not
    flattened (:func:`plateau`, with ``fitted_below``; for :func:`ponder.ledger.verdicts.unconverged`)."""
    whys = {name: plateau(history, fitted_below=fitted_below) for name, history in histories.items()}
    return {name: why for name, why in whys.items() if why is not None}


def unfit(accuracies: dict[str, float], what: str = "in-distribution accuracy") -> dict[str, str]:
    """``{model: why}`` for the models (``{name: accuracy}``) below :data:`FIT` (:func:`fit`)."""
    return {name: why for name, accuracy in accuracies.items() if (why := fit(accuracy, what=what)) is not None}
