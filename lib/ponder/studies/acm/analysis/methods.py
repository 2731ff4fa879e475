"""ACM's methods compared: the trained runs of :mod:`ponder.studies.acm` read as the claims read them: acm-3/acm-4's
points per method and their leads over the baselines, the realised budgets and the learning-rate grids' evidence; and
the ledger rows stated from those (``*_claims``). Where the gates spend (acm-1's maps, acm-6, acm-7):
:mod:`.spending`; how many learners a token needs after phase I (acm-5): :mod:`.learners`; acm-8 and acm-10:
:mod:`.ablations`; acm-9: :mod:`.latency`.

Nothing here trains a run it does not find in :mod:`ponder.studies.acm`, so nothing here is part of a run's cache
key (:func:`ponder.runner.runs.import_closure`): an edit retrains no run."""

import numpy as np
import pandas as pd
import torch

from ....ledger.tuning import describe_choices
from ....ledger.verdicts import Claim, Estimate, Verdict, above, every, greater, unconverged
from ..baselines import avit_depths
from ..phases import base_model, budgets, seeds
from ..tuning import (
    METHODS,
    TUNE_SEED,
    TUNING_BUDGET,
    acm_model,
    chosen_lr,
    dense,
    early_exits,
    grid,
    halting,
    lr_scores,
    moefied,
)

# the score of an ACM learning-rate grid (:func:`lr_choices`) and the digits the ledger shows it to
# (:func:`ponder.ledger.tuning.describe_choices`)
LR_SCORES = {"validation": 2}


def mean_points(per_seed: list[list[tuple[float, float]]]) -> list[tuple[float, float, float, float]]:
    """Point by point over seeds (the same setting at each index): ``(cost, quality, cost s.e., quality s.e.)``
    (s.e. 0 for one seed)."""
    out = []
    for same in zip(*per_seed):
        cost, quality = (Estimate.of(values) for values in zip(*same))
        out.append((cost.mean, quality.mean, 0.0 if cost.n < 2 else cost.se, 0.0 if quality.n < 2 else quality.se))
    return out


def best_at(cost: float, points: list[tuple[float, float]]) -> float:
    """The best quality among ``points (cost, quality)`` costing at most ``cost``; ``nan`` if none is that cheap."""
    return max([q for c, q in points if c <= cost], default=float("nan"))


def leads(ours: list[tuple[float, float]], others: list[tuple[float, float]]) -> list[float]:
    """For each of ``ours`` (sorted by cost): its quality minus the best of ``others`` at no more cost; ``nan``
    where no other point is that cheap (nothing to compare it with, not a lead over chance)."""
    return [q - best_at(c, others) for c, q in sorted(ours)]


def compared(lead: np.ndarray) -> list[int]:
    """The columns of ``lead [seed, point]`` (:func:`leads` per seed) that have a point to compare on every seed."""
    return [i for i in range(lead.shape[1]) if np.isfinite(lead[:, i]).all()]


def tradeoff(profile: str, seed: int = 0, task: str = "digits") -> dict[str, list[tuple[float, float]]]:
    """acm-3 (digits) or acm-4 (speech) for one seed: ``{method: [(MMACs, accuracy), ...]}``: ACM at each of
    :func:`budgets`, MoEfication at each top-k, on the digits A-ViT at each target depth and ZTW at each
    threshold, the ``base`` model and it fine-tuned densely for the same steps (``dense, fine-tuned``,
    :func:`~ponder.studies.acm.tuning.dense`)."""
    point = lambda m: (m["macs"] / 1e6, m["accuracy"])  # noqa: E731
    methods = {
        "ACM": [point(acm_model(profile, b, seed, task=task)[1]) for b in budgets(profile, task)],
        "MoEfication": [point(p) for p in moefied(profile, seed, task)[1]["curve"]],
    }
    if task == "digits":
        methods |= {
            "A-ViT": [point(halting(profile, d, seed)[1]) for d in avit_depths(profile)],
            "ZTW": [point(p) for p in early_exits(profile, seed)[1]["curve"]],
        }
    return methods | {
        "dense, fine-tuned": [point(dense(profile, seed, task)[1])],
        "base": [point(base_model(profile, seed, task)[1])],
    }


def realised_betas(profile: str, seed: int = 0, task: str = "digits"):
    """The realised compute fraction at evaluation (arg-max gates) of every phase-III model of ``task``: a DataFrame
    with a row per seed of :func:`seeds` and target of :func:`budgets` (columns ``seed``, ``target``, ``realised``)."""
    return pd.DataFrame(
        [
            {"seed": s, "target": b, "realised": acm_model(profile, b, s, task=task)[1]["beta"]}
            for s in seeds(profile, seed)
            for b in budgets(profile, task)
        ]
    )


@torch.no_grad()
def lr_choices(profile: str, task: str = "digits") -> pd.DataFrame:
    """Per method of acm-3 or acm-4: the validation score at each rate of the grid (columns ``validation <lr>``) and the
    rate chosen (``chosen``), for :func:`ponder.ledger.tuning.describe_choices`."""
    rows = [
        {"method": method, **{f"validation {lr:g}": v for lr, v in lr_scores(method, profile, task).items()}}
        | {"chosen": chosen_lr(method, profile, task)}
        for method in METHODS[task]
    ]
    return pd.DataFrame(rows).set_index("method")


def describe_tuning(profile: str, task: str = "digits") -> str:
    """The learning rates of acm-3's (``digits``) or acm-4's (``speech``) methods in one line for the ledger: the grid
    and each choice with its validation scores (:func:`lr_choices`); with one rate, that every method trains at it;
    without a grid, each method's own rate."""
    rates = grid(profile, task)
    if len(rates) > 1:
        return describe_choices(lr_choices(profile, task), LR_SCORES)
    if rates:
        return f"every method at {rates[0]:g}, not tuned"
    return "not tuned, each method at its own rate: " + ", ".join(
        f"{method} {chosen_lr(method, profile, task):g}" for method in METHODS[task]
    )


def _tuning_claim(target: str, examples: str, described: str) -> Claim:
    """``target``'s row describing the learning rates (``described``: :func:`describe_tuning`), each chosen on a
    validation set of ``examples``."""
    return Claim(
        target,
        f"every method at the learning rate of the grid with the best score on a validation set of {examples} "
        f"(seed {TUNE_SEED}; ACM at beta={TUNING_BUDGET}; describes the tuning: rate chosen, validation accuracy per "
        "rate)",
        described,
        None,
    )


def _front(lead: np.ndarray, budgets: list[float]) -> tuple[list[int], str, list[Verdict]]:
    """The budgets of ``lead [seed, budget]`` (:func:`leads` per seed) compared on every seed (:func:`compared`), the
    smallest mean lead over them for the ledger, and per budget compared the verdict that ACM leads there."""
    judged = compared(lead)
    least = f"min mean lead {lead[:, judged].mean(0).min():+.3f} over beta={', '.join(str(budgets[i]) for i in judged)}"
    return judged, least, [above(lead[:, i], 0) for i in judged]


def pareto_claims(
    lead: np.ndarray, budgets: list[float], base: dict[str, str], tuning: str, realised: pd.Series
) -> list[Claim]:
    """acm-3's rows. ``lead [seed, budget]``: per seed, each ACM budget's accuracy minus the best other method's at no
    more MACs (:func:`leads`, cheapest budget first, ``budgets`` in that order); ``base``: the base models that did not
    finish learning (:func:`ponder.ledger.convergence.unfinished`), which make the judged rows inconclusive.
    ACM is on the front (it leads at every budget compared) and leads most at the lowest budget compared (its lead
    there above its lead at each other budget compared, per seed); then
    described: the learning rates (``tuning``, :func:`describe_tuning`) and the realised compute fraction per target
    (``realised``, a Series indexed by target)."""
    judged, least, front = _front(lead, budgets)
    low, high = judged[0], judged[-1]
    return [
        Claim(
            "acm-3",
            "ACM on the Pareto front of accuracy vs MACs (digits stand-in; the budgets some other point is as cheap "
            "as)",
            least,
            unconverged(every(front), base),
            paper="on the front",
        ),
        Claim(
            "acm-3",
            "ACM's lead over the baselines is largest at the lowest budget compared (digits stand-in)",
            f"lead {lead[:, low].mean():+.3f} at beta={budgets[low]} vs {lead[:, high].mean():+.3f} at {budgets[high]}",
            unconverged(every([greater(lead[:, low], lead[:, i]) for i in judged[1:]]), base),
            paper="largest below 12.5 GFLOPs",
        ),
        _tuning_claim("acm-3", "training digits", tuning),
        Claim(
            "acm-3",
            "realised compute fraction at evaluation (arg-max gates) per target, mean over seeds (describes)",
            ", ".join(f"{b}: {r:.2f}" for b, r in realised.items()),
            None,
        ),
    ]


def moefication_claims(lead: np.ndarray, budgets: list[float], base: dict[str, str], tuning: str) -> list[Claim]:
    """acm-4's rows. ``lead [seed, budget]``: per seed, each ACM budget's 1 - error minus the best MoEfication point's
    at no more MACs (:func:`leads`, cheapest budget first, ``budgets`` in that order); ``base``: the base models that
    did not finish learning (:func:`ponder.ledger.convergence.unfinished`), which make the judged row inconclusive.
    ACM leads at every budget compared; then the learning rates (``tuning``, :func:`describe_tuning`), described."""
    _, least, front = _front(lead, budgets)
    return [
        Claim(
            "acm-4",
            "ACM better than MoEfication at every budget a MoEfication point is as cheap as (1 - error at no more "
            "MACs, eSpeak NG stand-in for CommonVoice)",
            least,
            unconverged(every(front), base),
            paper="lower WER at every budget",
        ),
        _tuning_claim("acm-4", "training utterances", tuning),
    ]
