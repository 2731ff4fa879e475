"""Hyper-UT's modules: the routing over the pool (hut-6) and the pool ablation (hut-10), from the C-PVR runs
(:mod:`ponder.studies.hyper_ut.cpvr`) to the ledger rows (``*_claims``): OOD accuracy by pool size and generator,
the router without the step, and the pool of one judged against UT+ACT.

Nothing here trains, so nothing here is part of a run's cache key (:func:`ponder.runner.runs.import_closure`): an edit
retrains no run."""

import numpy as np
import pandas as pd
import torch

from ....ledger import verdicts
from ....ledger.convergence import FIT
from ....ledger.tuning import describe_choices
from ....ledger.verdicts import Claim
from ....profiles import by_profile
from ....runner.training import default_device
from ..cpvr import test_set, train_cpvr
from ..sizes.cpvr import SIZES
from .cpvr import LR_SCORES, UNFIT

# hut-10's design check: the differences between the pool of one and UT+ACT that count (TARGETS.md), small beside the
# OOD gaps hut-3 compares and beside the validation cross-entropy of a model that has not fitted its training hops
POOL_OF_ONE_OOD, POOL_OF_ONE_LOSS = 0.05, 0.01


def by_router(variants: pd.DataFrame, generator: str, pool_size: int, train_max: int) -> dict[str, pd.DataFrame]:
    """hut-10's router ablation from ``hyper_ut.cpvr_targets.pool_sizes``' rows: mean accuracy per seed
    (rows) and router (columns ``True``: it reads the step) of ``generator`` at ``pool_size``, on the training hops
    (``"in"``) and beyond them (``"out"``)."""
    runs = variants[(variants.generator == generator) & (variants.pool_size == pool_size)]
    return {
        split: runs[inside].groupby(["router_step", "seed"])["accuracy"].mean().unstack("router_step")
        for split, inside in (("in", runs.hops <= train_max), ("out", runs.hops > train_max))
    }


def ood_per_seed(runs: pd.DataFrame, train_max: int, column: str) -> pd.DataFrame:
    """hut-10: mean accuracy beyond the training hops per seed (rows) and value of ``column`` (columns: the
    generator, the pool size), from ``hyper_ut.cpvr_targets.pool_sizes``' rows (a value trained on fewer
    seeds has ``NaN`` on the others)."""
    beyond = runs[runs["hops"] > train_max]
    return beyond.groupby([column, "seed"])["accuracy"].mean().unstack(column)


def pool_of_one_claims(variants: pd.DataFrame, ut_act: pd.DataFrame, generator: str, train_max: int) -> list[Claim]:
    """hut-10's design check, where the pool of one trains on more than one seed: it trains like UT+ACT, paired by
    seed, its OOD accuracy (mean over the hops beyond ``1..train_max``) within :data:`POOL_OF_ONE_OOD` and its
    validation cross-entropy within :data:`POOL_OF_ONE_LOSS` of UT+ACT's (:func:`~ponder.ledger.verdicts.alike`:
    four parts). ``variants``: every row of ``cpvr_targets.pool_sizes``; ``ut_act``: UT+ACT's rows of
    ``cpvr_targets.generalization``."""
    one = variants[(variants.generator == generator) & (variants.pool_size == 1) & variants.router_step]
    if one.seed.nunique() < 2:
        return []

    def per_seed(runs: pd.DataFrame) -> pd.DataFrame:
        beyond = runs[runs.hops > train_max].groupby("seed")["accuracy"].mean()
        return pd.DataFrame({"ood": beyond, "loss": runs.groupby("seed")["validation loss"].first()})

    pool, ut = per_seed(one), per_seed(ut_act)
    seeds = pool.index.intersection(ut.index)
    pool, ut = pool.loc[seeds], ut.loc[seeds]
    parts = verdicts.alike_parts(pool.ood, ut.ood, POOL_OF_ONE_OOD) + verdicts.alike_parts(
        pool.loss, ut.loss, POOL_OF_ONE_LOSS
    )
    return [
        Claim(
            "hut-10",
            f"the pool of one (a UT+ACT with its block reparametrised) trains like UT+ACT: OOD accuracy within "
            f"{POOL_OF_ONE_OOD:g} and validation cross-entropy within {POOL_OF_ONE_LOSS:g} (paired by seed)",
            ours=f"OOD {pool.ood.mean():.2f} vs {ut.ood.mean():.2f}; loss {pool.loss.mean():.4f} vs "
            f"{ut.loss.mean():.4f} (seeds: {len(seeds)})",
            verdict=verdicts.every(parts),
            kind="design check",
        )
    ]


def pool_ablation_claims(
    by_size: pd.DataFrame,
    generators: pd.DataFrame,
    ut_act: pd.DataFrame,
    variants: pd.DataFrame,
    choices: pd.DataFrame,
    *,
    generator: str,
    pool_size: int,
    train_max: int,
    seed: int,
) -> list[Claim]:
    """hut-10's rows. ``by_size``: ``hyper_ut.cpvr_targets.pool_sizes``' rows of ``generator`` on seed
    ``seed``, one run per pool size; ``generators``: :func:`ood_per_seed` by generator at ``pool_size``
    (``[seed, generator]``); ``ut_act``: UT+ACT's rows of ``cpvr_targets.generalization``; ``variants``: every
    row of ``pool_sizes`` (the router ablation, :func:`by_router`); ``choices``: the learning-rate grid's evidence per
    variant. Judged: generating the whole block beats a low-rank MLP delta beyond the training hops ``1..train_max``
    (inconclusive while a run of either does not reach :data:`FIT` on every training hop count);
    described: OOD accuracy by pool size, the pool of one against UT+ACT on the training hops, the router without the
    step, and the tuning."""
    by_pool_size = ood_per_seed(by_size, train_max, "pool_size").loc[seed]
    routers = by_router(variants, generator, pool_size, train_max)
    router_ood, router_in = routers["out"], routers["in"]
    block, delta = generators["block"], generators["delta"]
    compared = variants[variants.router_step & (variants.pool_size == pool_size) & (variants.hops <= train_max)]
    worst = compared.groupby(["generator", "seed"])["accuracy"].min()
    unfit = {f"{g}, seed {s}": UNFIT for (g, s), a in worst.items() if a < FIT}

    def on_training_hops(part: pd.DataFrame) -> str:
        return " / ".join(f"{a:.2f}" for a in part[(part.hops <= train_max) & (part.seed == seed)]["accuracy"])

    claims = [
        Claim(
            "hut-10",
            f"Hyper-UT OOD accuracy by pool size N (one run each, seed {seed})",
            ours=", ".join(f"N={n}: {a:.2f}" for n, a in by_pool_size.items()),
            verdict=None,
        ),
        Claim(
            "hut-10",
            "generating the whole block beats a low-rank MLP delta beyond the training hops (OOD accuracy, ours: "
            "which should be the default)",
            ours=f"block {block.mean():.2f} vs delta {delta.mean():.2f} (seeds: {block.count()} vs {delta.count()})",
            verdict=verdicts.unconverged(verdicts.greater(block, delta), unfit),
        ),
    ]
    if 1 in by_pool_size.index:  # the profile trains the pool of one
        claims.append(
            Claim(
                "hut-10",
                f"the pool of one (a UT+ACT with its block reparametrised) fits its training hops like UT+ACT "
                f"(accuracy at hops 1..{train_max}, seed {seed}; describes)",
                ours=f"N=1: {on_training_hops(by_size[by_size.pool_size == 1])}; UT+ACT: {on_training_hops(ut_act)}",
                verdict=None,
            )
        )
    claims += pool_of_one_claims(variants, ut_act, generator, train_max)
    if False in router_ood.columns:  # the profile trains the router without the step
        claims.append(
            Claim(
                "hut-10",
                "the router without the step (reads the state only; ablation): OOD and in-distribution accuracy "
                "against the default router (describes)",
                ours=f"OOD {router_ood[False].mean():.2f} vs {router_ood[True].mean():.2f}; in distribution "
                f"{router_in[False].mean():.2f} vs {router_in[True].mean():.2f} (seeds: {router_ood[False].count()})",
                verdict=None,
            )
        )
    return claims + [
        Claim(
            "hut-10",
            f"each variant at the learning rate of the grid with the lowest validation cross-entropy on hops "
            f"1..{train_max} (seed {seed}; describes the tuning)",
            ours=describe_choices(choices, LR_SCORES),
            verdict=None,
        ),
    ]


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


def routing_claims(routes: pd.DataFrame, pool_size: int) -> list[Claim]:
    """hut-6's row from :func:`routing`'s rows (``step, hops, module, weight``) over a pool of ``pool_size``: the mean
    entropy of the routing (against a uniform one's, log N), the number of distinct top modules per hop count and
    step, and the largest change of a module's weight across hop counts at one step (describes)."""
    entropy = routing_entropy(routes)["entropy"].mean()
    top = routes.loc[routes.groupby(["hops", "step"])["weight"].idxmax()]
    spread = routes.groupby(["step", "module"])["weight"].agg(lambda w: w.max() - w.min()).max()
    return [
        Claim(
            "hut-6",
            "routing over the pool: mean entropy (uniform = log N), distinct top modules, largest change across hop "
            "counts",
            ours=f"entropy {entropy:.2f} of {np.log(pool_size):.2f}; {top['module'].nunique()} top module(s); "
            f"{spread:.2f}",
            verdict=None,
        )
    ]
