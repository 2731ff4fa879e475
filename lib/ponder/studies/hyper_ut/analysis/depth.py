"""Hyper-UT analysis of the depth sweep (the hyper_ut_depth notebook): the depth a fixed-depth Transformer needs per
hop count, and hut-2's row stated from it.

Nothing here trains, so nothing here is part of a run's cache key: an edit retrains no run."""

import pandas as pd

from ....ledger import verdicts
from ....ledger.verdicts import Claim


def depth_needed_per_hop(frame: pd.DataFrame, tolerance: float = 0.05) -> pd.DataFrame:
    """hut-2: per seed (rows) and hop count (columns), the smallest depth within ``tolerance`` of that
    seed's best depth at that hop count."""
    needed = {}
    for (seed, hops), part in frame.groupby(["seed", "hops"]):
        best = part["accuracy"].max()
        needed[seed, hops] = int(part.loc[part["accuracy"] >= best - tolerance, "depth"].min())
    return pd.Series(needed, name="depth needed").rename_axis(["seed", "hops"]).unstack("hops")


def depth_claims(needed: pd.DataFrame) -> list[Claim]:
    """hut-2's row from :func:`depth_needed_per_hop`'s ``[seed, hops]`` table: the depth needed at the most
    hops is larger than at the fewest, per seed."""
    few, most = needed.columns.min(), needed.columns.max()
    means = " ".join(f"{h}:{d:.1f}" for h, d in needed.mean().items())
    return [
        Claim(
            "hut-2",
            "a fixed-depth Transformer needs more layers for more hops (depth needed at the most hops minus at one "
            "hop, per seed)",
            ours=f"{means} (hops:mean depth needed)",
            verdict=verdicts.greater(needed[most], needed[few]),
        )
    ]
