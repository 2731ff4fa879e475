"""acm-8's and acm-10's analysis: the diversities of the gates' choices per pre-training setting (acm-8), the
robustness to corruptions and the appendix's variants (acm-10), and their ledger rows (``*_claims``).

Nothing here trains a run it does not find in the run cache, so nothing here is part of a run's cache key."""

import pandas as pd
import torch
from torch import nn

from ....ledger.verdicts import Claim, above, below, every
from ....tasks import images
from ..phases import TEST_COPIES, evaluate_acm, sizes, test_set


def diversity(maps: torch.Tensor, per_sample: torch.Tensor) -> dict:
    """acm-8: spatial diversity (mean over samples of the spread of compute over patches) and
    per-sample diversity (spread of the per-sample compute), both as standard deviations."""
    return {"spatial": maps.flatten(1).std(1).mean().item(), "per_sample": per_sample.std().item()}


def diversity_margins(stats):
    """acm-8: per setting (a row of ``stats``, a DataFrame with :func:`diversity`'s columns), the
    smaller of its two diversities relative to their median over the settings, minus 1: at least 0
    when both diversities are at or above the median."""
    both = stats[["spatial", "per_sample"]]
    return (both / both.median()).min(axis=1) - 1


def ablation_frame(ablations: dict, spent: dict) -> pd.DataFrame:
    """acm-8, one row per seed and loss setting: the two diversities (:func:`diversity`), accuracy and realised
    ``beta``. ``ablations``: ``{(seed, setting): (model, metrics)}``; ``spent``: ``{(seed, setting): (maps,
    costs)}`` (:func:`spending`)."""
    rows = [
        {"seed": s, "setting": name, **diversity(*spent[s, name]), "accuracy": m["accuracy"], "beta": m["beta"]}
        for (s, name), (_, m) in ablations.items()
    ]
    return pd.DataFrame(rows)


def margins_per_seed(frame: pd.DataFrame) -> pd.DataFrame:
    """acm-8, ``[seed, setting]``: :func:`diversity_margins` within each seed of :func:`ablation_frame`'s
    ``frame``."""
    seeds = frame["seed"].unique()
    return pd.DataFrame({s: diversity_margins(frame[frame.seed == s].set_index("setting")) for s in seeds}).T


def robustness(model: nn.Module, profile: str, severities=range(6)) -> list[dict]:
    """acm-10: accuracy, MACs and realised β under each corruption of :data:`images.CORRUPTIONS` at each severity,
    on the first ``robustness_copies`` renderings of every test digit."""
    x, y = test_set(profile)
    count = (
        len(x) * sizes(profile)["robustness_copies"] // TEST_COPIES
    )  # the test set holds every digit once, then again, ...
    x, y = x[:count], y[:count]
    clean = evaluate_acm(model, x, y)  # severity 0 leaves the images as they are: evaluated once
    rows = []
    for kind in images.CORRUPTIONS:
        for severity in severities:
            metrics = (
                clean if severity == 0 else evaluate_acm(model, images.corrupt(x, kind, severity, seed=severity), y)
            )
            rows.append({"corruption": kind, "severity": severity, **metrics})
    return rows


def diverse_settings(margins: pd.DataFrame) -> list[str]:
    """The settings (columns of :func:`margins_per_seed`' ``[seed, setting]``) whose mean margin is at least 0: both
    diversities at or above the median."""
    return [name for name in margins.columns if margins[name].mean() >= 0]


def diversity_claims(margins: pd.DataFrame) -> list[Claim]:
    """acm-8's row from :func:`margins_per_seed`' ``[seed, setting]``: only ``all`` (the three auxiliary losses) has
    both diversities at or above the median (margin above 0; every other setting's below)."""
    only_all = every(
        [above(margins["all"], 0)] + [below(margins[name], 0) for name in margins.columns if name != "all"]
    )
    return [
        Claim(
            "acm-8",
            "only all three auxiliary losses give both spatial and per-sample diversity (both >= the median over the "
            "5 settings, digits stand-in)",
            ", ".join(diverse_settings(margins)) or "none",
            only_all,
            paper="only all three",
        )
    ]


def appendix_claims(granular: dict, variants: dict, robust: pd.DataFrame, budget: float) -> list[Claim]:
    """acm-10's rows, each describing what is seen: the most accurate number of learners (``granular``: ``{N: (model,
    metrics)}``), the accuracy of each pre-training variant (``variants``: ``{variant: (model, metrics)}`` in the order
    of :data:`ponder.studies.acm.ablations.PRETRAINING`) and the beta=``budget`` model's accuracy clean and at
    severity 5 (``robust``: :func:`robustness`' rows, columns ``corruption``, ``severity``, ``accuracy``). The rows
    of the learner counts and of the variants are left out where the profile trains only one of them."""
    clean, worst = (robust[robust.severity == s].accuracy.mean() for s in (0, 5))
    claims = []
    if len(granular) > 1:
        best_n = max(granular, key=lambda n: granular[n][1]["accuracy"])
        claims.append(
            Claim(
                "acm-10",
                "number of learners N at equal cost: most accurate N (describes what is seen, digits stand-in)",
                f"N={best_n}",
                None,
            )
        )
    if len(variants) > 1:
        claims.append(
            Claim(
                "acm-10",
                "pre-training phases: accuracy with both / without phase I / without either (describes, digits "
                "stand-in)",
                " / ".join(f"{m['accuracy']:.3f}" for _, m in variants.values()),
                None,
            )
        )
    return claims + [
        Claim(
            "acm-10",
            f"robustness: accuracy of the beta={budget} model, clean vs severity 5 averaged over corruptions "
            "(describes, digits stand-in)",
            f"{clean:.3f} -> {worst:.3f}",
            None,
        ),
    ]
