"""Hyper-UT analysis: the C-PVR runs' frames (:mod:`ponder.experiments.hyper_ut`) turned into the numbers the
claims are checked on: accuracy in and out of the training hops per seed, which runs fit their training hops, the
depth a hop count needs (hut-2), the router ablation (hut-10), compute spent where accuracy is matched (hut-4), the
shortcut hut-7 is read against.

Nothing here trains, so nothing here is part of a run's cache key (:func:`ponder.runs.import_closure`): an edit
retrains no run."""

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from ..experiments.hyper_ut import test_set, train_cpvr
from ..models.classifier import ACTDepth, Classifier
from ..models.hyper import HyperCore
from ..models.hyper_block import HyperBlockCore
from ..models.kinds import ACT_KINDS, KINDS, LABELS, build, parameter_count
from ..profiles import by_profile
from ..sizes.hyper_ut import SIZES
from ..tasks import cpvr, cpvr_decoys
from ..training import default_device
from . import verdicts
from .convergence import FIT
from .verdicts import Claim

# the scores of a C-PVR learning-rate grid (``experiments.hyper_ut.lr_choices``) and the digits the ledger shows them
# to (:func:`ponder.analysis.tuning.describe_choices`)
LR_SCORES = {"accuracy": 2, "loss": 3}


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


# the rules :func:`baselines` draws (of :func:`ponder.tasks.cpvr_decoys.decoy_baselines`' columns)
BASELINES = ("majority label", "best position-only rule", "pruning, 2 rounds", "one of the two ends")


def decoy_rules(length: int, hops: Sequence[int], n: int) -> pd.DataFrame:
    """Per test hop count (``hops``), the accuracy of rules that do not follow the chain (:data:`BASELINES`) on the
    fixed decoy test set of ``n`` examples per hop count (:func:`ponder.tasks.cpvr.fixed_test_set`): the majority
    label, the best "answer ``x[j]``" for a fixed ``j`` chosen per hop count (an upper bound on any one-position
    shortcut), pruning dead ends for two rounds and picking one of the two chain ends, the real one or the decoy's
    (:func:`ponder.tasks.cpvr_decoys.decoy_baselines`)."""
    table = cpvr_decoys.decoy_baselines(*cpvr.fixed_test_set(cpvr_decoys.sample, length, hops, n))
    return table[["hops", *BASELINES]]


def baselines(profile: str) -> pd.DataFrame:
    """:func:`decoy_rules` on the profile's C-PVR test set (hut-2, hut-3, hut-10)."""
    sizes = by_profile(SIZES, profile)
    return decoy_rules(sizes["length"], sizes["test_hops"], sizes["n_test"])


def two_ends_rule(length: int, hops: Sequence[int], n: int) -> pd.DataFrame:
    """Per test hop count, the accuracy of picking one of the two chain ends (:func:`decoy_rules`): what a model
    scores that finds the chains' ends without following the chain from position 0 (hut-7)."""
    return decoy_rules(length, hops, n)[["hops", "one of the two ends"]]


def per_seed(frame: pd.DataFrame, train_max: int) -> pd.DataFrame:
    """Per model and seed: mean accuracy in / out of distribution (hop counts weighted equally),
    mean steps, the slope of steps against hop count, and the parameter count."""
    rows = []
    for (model, seed), part in frame.groupby(["model", "seed"], sort=False):
        inside = part["hops"] <= train_max
        rows.append(
            {
                "model": model,
                "seed": seed,
                "in distribution": part.loc[inside, "accuracy"].mean(),
                "out of distribution": part.loc[~inside, "accuracy"].mean(),
                "steps": part["steps"].mean(),
                "steps slope": float(np.polyfit(part["hops"].to_numpy(float), part["steps"].to_numpy(), 1)[0]),
                "params": int(part["params"].iloc[0]),
            }
        )
    return pd.DataFrame(rows)


def summarize(frame: pd.DataFrame, train_max: int) -> pd.DataFrame:
    """Per model: :func:`per_seed`'s numbers, mean over seeds, with the standard error of the accuracies."""
    seeds = per_seed(frame, train_max).drop(columns="seed")
    summary = seeds.groupby("model", sort=False).mean()
    for split in ("in distribution", "out of distribution"):
        summary[f"{split} se"] = np.nan_to_num(seeds.groupby("model", sort=False)[split].sem())
    summary["params"] = summary["params"].astype(int)
    return summary


def with_fit(seeds: pd.DataFrame, frame: pd.DataFrame, train_max: int, level: float = FIT) -> pd.DataFrame:
    """``seeds`` (one row per model and seed, :func:`per_seed`) with a column ``fits``: whether
    the run reaches ``level`` accuracy at every training hop count 1..``train_max`` of ``frame``
    (``hops``, ``accuracy`` per model and seed). A run that does not has not learned the task it is
    then tested beyond, so its out-of-distribution accuracy says little about extrapolation."""
    worst = frame[frame["hops"] <= train_max].groupby(["model", "seed"], sort=False)["accuracy"].min()
    return seeds.merge(
        (worst >= level).rename("fits").reset_index(), on=["model", "seed"], how="left", validate="one_to_one"
    )


def fit_counts(seeds: pd.DataFrame, order: list[str]) -> str:
    """``"Transformer 3/3, UT 2/3, ..."``: per model, the seeds whose run fits its training hops (:func:`with_fit`)."""
    return ", ".join(
        f"{m} {int(seeds.loc[seeds['model'] == m, 'fits'].sum())}/{int((seeds['model'] == m).sum())}" for m in order
    )


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


def by_router(variants: pd.DataFrame, generator: str, pool_size: int, train_max: int) -> dict[str, pd.DataFrame]:
    """hut-10's router ablation from :func:`ponder.experiments.hyper_ut.pool_sizes`' rows: mean accuracy per seed
    (rows) and router (columns ``True``: it reads the step) of ``generator`` at ``pool_size``, on the training hops
    (``"in"``) and beyond them (``"out"``)."""
    runs = variants[(variants.generator == generator) & (variants.pool_size == pool_size)]
    return {
        split: runs[inside].groupby(["router_step", "seed"])["accuracy"].mean().unstack("router_step")
        for split, inside in (("in", runs.hops <= train_max), ("out", runs.hops > train_max))
    }


def ood_per_seed(runs: pd.DataFrame, train_max: int, column: str) -> pd.DataFrame:
    """hut-10: mean accuracy beyond the training hops per seed (rows) and value of ``column`` (columns: the
    generator, the pool size), from :func:`ponder.experiments.hyper_ut.pool_sizes`' rows (a value trained on fewer
    seeds has ``NaN`` on the others)."""
    beyond = runs[runs["hops"] > train_max]
    return beyond.groupby([column, "seed"])["accuracy"].mean().unstack(column)


def routing_entropy(frame: pd.DataFrame) -> pd.DataFrame:
    """Entropy (nats) of the mean routing distribution per (hops, step)."""

    def entropy(w):
        p = w.to_numpy()
        return float(-(p * np.log(np.clip(p, 1e-12, None))).sum())

    return frame.groupby(["hops", "step"])["weight"].apply(entropy).rename("entropy").reset_index()


@torch.no_grad()
def routing(profile: str, seed: int = 0) -> pd.DataFrame:
    """hut-6: Hyper-UT's routing weights over the pool, per step and test hop count.

    The core is stepped on the test set directly (ACT's masked loop computes the same states);
    a row is kept only for the steps each example actually took before halting.
    """
    sizes = by_profile(SIZES, profile)
    model, _ = train_cpvr("hyper_act", profile, seed)
    x, m, _ = test_set(sizes["length"], sizes["test_hops"], sizes["n_test"])
    device = default_device()
    x = x.to(device)
    used = model(x).steps.cpu()
    h = model.embedding(x)
    rows = []
    for t in range(model.core.max_steps):
        h = model.core.step(h, t)
        alpha = model.core.last_routing.cpu()
        ran = used > t
        for hops in sizes["test_hops"]:
            keep = ran & (m == hops)
            if keep.any():
                mean = alpha[keep].mean(0)
                rows += [{"step": t + 1, "hops": hops, "module": j, "weight": w} for j, w in enumerate(mean.tolist())]
    return pd.DataFrame(rows)


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


@torch.no_grad()
def ponder_trace(model: Classifier, x: torch.Tensor) -> dict:
    """One example ``x`` ``[L]`` through ``model``: its answer, steps and per-step halting.

    ``halting_probability`` is ``p^n`` of every step ``n`` the core can take (read from the
    state after step ``n``, as ACT does; empty for fixed-depth models); ``weights`` the
    halting weights ``w^n`` ACT actually gave; ``routing`` Hyper-UT's ``alpha_t`` per step.
    """
    model.eval()
    x = x[None].to(default_device())
    out = model(x)
    h, probabilities, routing = model.embedding(x), [], []
    for t in range(model.core.max_steps):
        h = model.core.step(h, t)
        if isinstance(model.depth, ACTDepth):
            probabilities.append(model.depth.halting(h.mean(dim=1)).item())
        if isinstance(model.core, (HyperCore, HyperBlockCore)):
            routing.append(model.core.last_routing[0].tolist())
    return {
        "answer": int(out.logits.argmax(-1)),
        "confidence": float(out.logits.softmax(-1).max()),
        "steps": float(out.steps),
        "halting_probability": probabilities,
        "weights": out.halting[0].tolist() if out.halting is not None else [],
        "routing": routing,
    }
