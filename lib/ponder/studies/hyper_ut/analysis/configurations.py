"""The configurations Hyper-UT's C-PVR figures compare (hut-9): every model's width, depth or steps, pool size,
parameters and ACT settings, and hut-9's row stated from them.

Nothing here trains, so nothing here is part of a run's cache key: an edit retrains no run."""

import pandas as pd

from ....ledger.verdicts import Claim
from ....models.kinds import ACT_KINDS, KINDS, LABELS, build, parameter_count
from ....profiles import by_profile
from ..sizes.cpvr import SIZES


def configurations(profile: str) -> pd.DataFrame:
    """hut-9: every model's width, depth or steps, pool size, parameters and ACT settings."""
    sizes = by_profile(SIZES, profile)
    m = sizes["model"]
    rows = []
    for kind in KINDS:
        net = build(kind, sizes["length"], m)
        uses_pool = kind.startswith("hyper")
        rows.append(
            {
                "model": LABELS[kind],
                "width x heads": f"{m['dim']} x {m['heads']}",
                "depth / max steps": m["steps"],
                "weights shared in depth": kind != "transformer",
                "pool size N": m["pool_size"] if uses_pool else "—",
                "generated": (
                    f"the block (code dim {m['code_dim']})"
                    if m["generator"] == "block"
                    else f"MLP delta (code dim {m['code_dim']}, rank {m['rank']})"
                )
                if uses_pool
                else "—",
                "parameters": parameter_count(net),
                "ACT (bias, eps, tau, level)": f"{m['act_bias']}, {m['act_eps']}, {m['tau']}, {m['act_level']}"
                if kind in ACT_KINDS
                else "—",
            }
        )
    return pd.DataFrame(rows)


def configuration_claims(table: pd.DataFrame) -> list[Claim]:
    """hut-9's row from :func:`configurations`' table (one row per model): the Transformer's and Hyper-UT's parameter
    counts (describes)."""
    params = table.set_index("model")["parameters"]
    return [
        Claim(
            "hut-9",
            "configuration table of every model (parameters: Transformer vs Hyper-UT)",
            ours=f"{params['Transformer']:,} vs {params['Hyper-UT']:,}",
            verdict=None,
        )
    ]
