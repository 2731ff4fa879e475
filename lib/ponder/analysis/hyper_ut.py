"""Hyper-UT analysis: compute spent where accuracy is matched (hut-4), the shortcut hut-7 is read against."""

from collections.abc import Sequence

import pandas as pd

from ..tasks import cpvr, cpvr_decoys


def steps_on_training_hops(frame: pd.DataFrame, train_max: int) -> pd.DataFrame:
    """``[seed, model]``: the mean ponder steps over the training hop counts ``1..train_max`` (hop
    counts weighted equally), from ``frame``'s rows of ``model, seed, hops, steps``."""
    inside = frame[frame["hops"] <= train_max]
    return inside.groupby(["seed", "model"], sort=False)["steps"].mean().unstack("model")


def unmatched(fits: pd.DataFrame, models: list[str]) -> dict[str, str]:
    """``{"model, seed s": why}`` for the runs of ``models`` that do not fit their training hops
    (``fits``: one row per model and seed with a bool column ``fits``): where one does not, fewer
    steps are not efficiency at matched accuracy (for :func:`ponder.analysis.verdicts.unconverged`)."""
    rows = fits[fits["model"].isin(models) & ~fits["fits"].astype(bool)]
    return {
        f"{r.model}, seed {r.seed}": "does not fit its training hops (accuracy < 0.95 at one of them)"
        for r in rows.itertuples()
    }


def two_ends_rule(length: int, hops: Sequence[int], n: int) -> pd.DataFrame:
    """Per test hop count (``hops``), the accuracy of picking one of the two chain ends, the real one or the decoy's,
    on the fixed decoy test set of ``n`` examples per hop count (:func:`ponder.tasks.cpvr.fixed_test_set`): what a
    model scores that finds the chains' ends without following the chain from position 0
    (:func:`ponder.tasks.cpvr_decoys.decoy_baselines`)."""
    table = cpvr_decoys.decoy_baselines(*cpvr.fixed_test_set(cpvr_decoys.sample, length, hops, n))
    return table[["hops", "one of the two ends"]]
