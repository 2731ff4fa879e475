"""survey-1's runs (:mod:`ponder.experiments.survey_parity`) as the notebook reads them: one row per run and test
difficulty, one row per run with its success, and the runs paired by cell for the ledger's rule.

Nothing here trains a run it does not find in :mod:`ponder.experiments.survey_parity`, so nothing here is part of a
run's cache key (:func:`ponder.runs.import_closure`): an edit retrains no run."""

from collections.abc import Sequence

import pandas as pd

from ..experiments.survey_parity import KNOBS, LABELS, control_runs, grid_runs
from ..models.recurrent import HALTING
from ..profiles import by_profile
from ..sizes.survey_parity import PARITY

SYMBOLS = {"tau": "τ", "lambda_p": "λp"}
CONTROL = "GRU, 1 step"
SUCCESS = 0.95  # accuracy on the training difficulties of a run that trained


def run_frame(metrics: dict, train_max: int, **columns) -> pd.DataFrame:
    """One run: one row per test difficulty, in increasing order (the metrics' keys are strings):
    ``difficulty`` (int), ``accuracy``, ``steps``, ``in_training`` and the given constant columns."""
    rows = [
        {
            "difficulty": int(d),
            "accuracy": a,
            "steps": metrics["steps"][d],
            "in_training": int(d) <= train_max,
            **columns,
        }
        for d, a in metrics["accuracy"].items()
    ]
    return pd.DataFrame(rows).sort_values("difficulty", ignore_index=True)


def parity_frame(profile: str, seed: int = 0, methods: Sequence[str] = HALTING) -> pd.DataFrame:
    """survey-1's grid: one row per run and test difficulty, with ``method``, ``knob``, ``value``,
    ``cell`` (index of the value), ``seed`` and ``setting`` (e.g. ``"ACT τ=0.001"``)."""
    train_max = by_profile(PARITY, profile)["train_max"]
    parts = []
    for (h, s, j), job in grid_runs(profile, seed, methods).items():
        knob, value = KNOBS[h], job.keywords[KNOBS[h]]
        parts.append(
            run_frame(
                job()[1],
                train_max,
                method=LABELS[h],
                knob=knob,
                value=value,
                cell=j,
                seed=s,
                setting=f"{LABELS[h]} {SYMBOLS[knob]}={value:g}",
            )
        )
    return pd.concat(parts, ignore_index=True)


def control_frame(profile: str, seed: int = 0) -> pd.DataFrame:
    """The one-step control, as :func:`parity_frame` rows (``method`` and ``setting`` :data:`CONTROL`)."""
    train_max = by_profile(PARITY, profile)["train_max"]
    parts = [
        run_frame(job()[1], train_max, method=CONTROL, setting=CONTROL, seed=s)
        for s, job in control_runs(profile, seed).items()
    ]
    return pd.concat(parts, ignore_index=True)


def run_summary(frame: pd.DataFrame, threshold: float = SUCCESS) -> pd.DataFrame:
    """One row per run of ``frame`` (from :func:`parity_frame` or :func:`control_frame`): ``trained``
    and ``beyond`` (mean accuracy on and beyond the training difficulties), ``steps`` (mean over
    every test difficulty) and ``success`` = ``1[trained >= threshold]`` (0/1)."""
    keys = [c for c in ("method", "knob", "value", "cell", "seed") if c in frame]
    on = frame.groupby([*keys, "in_training"])["accuracy"].mean().unstack("in_training")
    out = pd.DataFrame({"trained": on[True], "beyond": on[False], "steps": frame.groupby(keys)["steps"].mean()})
    out["success"] = (out["trained"] >= threshold).astype(int)
    return out.reset_index()


def by_cell(summary: pd.DataFrame, column: str) -> pd.DataFrame:
    """``column`` of :func:`run_summary`, one row per cell ``(seed, cell)`` and one column per method:
    the paired values :func:`ponder.analysis.verdicts.greater` compares."""
    return summary.pivot(index=["seed", "cell"], columns="method", values=column)
