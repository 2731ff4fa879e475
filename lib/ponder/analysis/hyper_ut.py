"""Hyper-UT analysis: compute spent where accuracy is matched (hut-4)."""

import pandas as pd


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
