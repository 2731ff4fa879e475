"""The C-PVR runs and frames of each Hyper-UT target: hut-3/4/5's kinds at their chosen rates, hut-9's halting
sweep, hut-2's depths, hut-6 and hut-10's pools, each a function that declares the runs and one that reads them.

No run module imports this one, so choosing which runs a target reads retrains nothing; what each run computes is
in :mod:`ponder.studies.hyper_ut.cpvr`.
"""

from collections.abc import Sequence

import pandas as pd

from ...models.kinds import ACT_KINDS, GENERATORS, KINDS, LABELS
from ...profiles import by_profile
from ...runner.specs import Chosen, Spec
from .cpvr import cpvr_run, frame, seed_groups
from .sizes.cpvr import SIZES


def seeds_of(profile: str, name: str) -> tuple[int, ...]:
    """The seeds (offsets from the notebook's ``seed``) a kind or generator ``name`` trains on: the
    profile's ``seeds``, or its first one for the names in ``single_seed``."""
    sizes = by_profile(SIZES, profile)
    return sizes["seeds"][:1] if name in sizes["single_seed"] else sizes["seeds"]


def generalization_runs(
    profile: str, seed: int = 0, kinds: Sequence[str] = KINDS
) -> dict[tuple[str, int], Spec | Chosen]:
    """hut-3/4/5's runs: ``{(kind, seed): job}`` for every kind and its seeds (:func:`seeds_of`), each at
    the learning rate chosen for its kind on seed ``seed`` (:func:`cpvr_run`)."""
    return {
        (kind, seed + s): cpvr_run(
            kind,
            profile,
            seed + s,
            tune_seed=seed,
            **seed_groups(profile, kind, [seed + o for o in seeds_of(profile, kind)]),
        )
        for kind in kinds
        for s in seeds_of(profile, kind)
    }


def generalization(profile: str, seed: int = 0, kinds: Sequence[str] = KINDS) -> pd.DataFrame:
    """hut-3/4/5: every kind, every seed, trained on ``train_hops``: accuracy and steps per test hop count."""
    parts = []
    for (kind, s), run in generalization_runs(profile, seed, kinds).items():
        metrics = run.metrics()
        parts.append(frame(metrics, kind=kind, model=LABELS[kind], seed=s, params=metrics["params"]))
    return pd.concat(parts, ignore_index=True)


def halting_runs(profile: str, seed: int = 0) -> dict[tuple[str, float, int], Spec | Chosen]:
    """hut-4's sweep of the ponder cost's weight: ``{(kind, tau, seed): job}`` for every ACT kind and seed at each
    ``tau`` of the profile's ``tau_sweep`` (the model's own ``tau`` is hut-3's runs), each at the rate chosen for
    the kind at that ``tau`` on seed ``seed``."""
    sizes = by_profile(SIZES, profile)
    return {
        (kind, tau, seed + s): cpvr_run(
            kind,
            profile,
            seed + s,
            model={"tau": tau},
            tune_seed=seed,
            **seed_groups(profile, kind, [seed + o for o in seeds_of(profile, kind)]),
        )
        for tau in sizes["tau_sweep"]
        for kind in ACT_KINDS
        for s in seeds_of(profile, kind)
    }


def halting_sweep(profile: str, seed: int = 0) -> pd.DataFrame:
    """hut-4 at every ``tau`` of the sweep: the ACT kinds' rows of :func:`generalization` at the model's ``tau`` and
    those of :func:`halting_runs`, with a ``tau`` column."""
    default = generalization(profile, seed, ACT_KINDS).assign(tau=by_profile(SIZES, profile)["model"]["tau"])
    swept = [
        frame(metrics, kind=kind, model=LABELS[kind], seed=s, params=metrics["params"], tau=tau)
        for (kind, tau, s), metrics in ((key, run.metrics()) for key, run in halting_runs(profile, seed).items())
    ]
    return pd.concat([default, *swept], ignore_index=True)


def depth_runs(profile: str, seed: int = 0) -> dict[tuple[int, int], Spec | Chosen]:
    """hut-2's runs: ``{(depth, seed): job}``, a Transformer of each depth trained on every hop count of the grid."""
    sizes = by_profile(SIZES, profile)
    grid, hops = sizes["depth_grid"], sizes["depth_grid"]["hops"]
    group = seed_groups(profile, "transformer", [seed + s for s in sizes["seeds"]])
    return {
        (depth, seed + s): cpvr_run(
            "transformer",
            profile,
            seed + s,
            model={"steps": depth},
            train_hops=hops,
            test_hops=hops,
            steps=grid["steps"],
            name="hut/depth",
            lr=sizes["lr"],  # depths, not kinds, are compared: one rate for all
            **group,
        )
        for depth in grid["depths"]
        for s in sizes["seeds"]
    }


def depth_needed(profile: str, seed: int = 0) -> pd.DataFrame:
    """hut-2: Transformers of each depth trained on hop counts ``1..H`` together, accuracy per hop count and seed."""
    return pd.concat(
        [frame(run.metrics(), depth=depth, seed=s) for (depth, s), run in depth_runs(profile, seed).items()],
        ignore_index=True,
    )


def pool_configs(profile: str) -> dict[tuple[str, int, bool], dict | None]:
    """hut-10's Hyper-UT (with ACT) variants: ``{(generator, pool size, router reads the step): model
    overrides}``: both generators at the default pool size, the default generator at every pool
    size of the profile, and, where the profile has ``router_ablation``, the router without the step. The default
    model's overrides are ``None``: its runs are hut-3's."""
    sizes = by_profile(SIZES, profile)
    m = sizes["model"]
    keys = {(g, m["pool_size"], True) for g in GENERATORS} | {(m["generator"], n, True) for n in sizes["pool_sizes"]}
    keys |= {(m["generator"], m["pool_size"], False)} if sizes["router_ablation"] else set()
    overrides = {
        key: {k: v for k, v in zip(("generator", "pool_size", "router_step"), key, strict=True) if m[k] != v}
        for key in sorted(keys)
    }
    return {key: model or None for key, model in overrides.items()}


def pool_seeds(profile: str, key: tuple[str, int, bool]) -> tuple[int, ...]:
    """The seed offsets of a variant of :func:`pool_configs`: every seed of a generator at the
    default pool size (the comparisons, :func:`seeds_of`) and of the pool of one (judged against UT+ACT), the first
    of every other pool size."""
    m = by_profile(SIZES, profile)["model"]
    generator, n, _ = key
    return seeds_of(profile, generator) if n in (m["pool_size"], 1) else (0,)


def pool_runs(profile: str, seed: int = 0) -> dict[tuple[str, int, bool, int], Spec | Chosen]:
    """hut-10's runs: ``{(generator, pool size, router reads the step, seed): job}`` of every variant of
    :func:`pool_configs` on its seeds (:func:`pool_seeds`), each at the rate chosen for it on ``seed``."""
    runs = {}
    for key, model in pool_configs(profile).items():
        seeds = [seed + o for o in pool_seeds(profile, key)]
        for s in seeds:
            runs[(*key, s)] = cpvr_run(
                "hyper_act",
                profile,
                s,
                model=model,
                tune_seed=seed,
                **seed_groups(profile, "hyper_act", seeds),
            )
    return runs


def pool_sizes(profile: str, seed: int = 0) -> pd.DataFrame:
    """hut-10: Hyper-UT (with ACT) per generator, pool size, router and seed: accuracy and steps per
    test hop count (``router_step``: whether the router reads the step)."""
    parts = []
    for (g, n, step, s), run in pool_runs(profile, seed).items():
        metrics = run.metrics()
        parts.append(frame(metrics, generator=g, pool_size=n, router_step=step, seed=s, params=metrics["params"]))
    return pd.concat(parts, ignore_index=True)


def tuned_configs(profile: str) -> dict[str, tuple[str, dict | None]]:
    """Every C-PVR model whose learning rate is chosen on validation, by name: the six kinds (hut-3)
    and hut-10's variants."""
    variants = {
        f"Hyper-UT {g}, N={n}" + ("" if step else ", router without the step"): ("hyper_act", model)
        for (g, n, step), model in pool_configs(profile).items()
        if model is not None
    }
    return {LABELS[k]: (k, None) for k in KINDS} | variants
