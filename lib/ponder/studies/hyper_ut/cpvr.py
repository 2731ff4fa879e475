"""Hyper-UT on C-PVR (targets hut-2 … hut-6, hut-9, hut-10): the models and their runs (read in
:mod:`ponder.studies.hyper_ut.analysis.cpvr`).

Every model is a :class:`ponder.models.classifier.Classifier` named by a *kind*:

=================  =============================================  =========================
kind               core (``step(h, t)``)                          depth loop
=================  =============================================  =========================
``transformer``    ``LayerStack``: ``T`` different blocks         fixed ``T``
``ut``             ``UniversalCore``: one shared block            fixed ``T``
``ut_act``         ``UniversalCore``                              ACT, at most ``T``
``film_act``       ``FiLMCore``                                   ACT, at most ``T``
``hyper``          ``HyperCore``: routed pool -> generated MLP    fixed ``T`` (Hyper-UT w/o ACT)
``hyper_act``      ``HyperCore``                                  ACT, at most ``T`` (Hyper-UT)
=================  =============================================  =========================

The task is C-PVR with a decoy chain (:mod:`ponder.tasks.cpvr_decoys`): beside the real chain a
second one of ``M - 1`` links that only position 0's pointer tells apart, so that no rule short of
following the chain hop by hop (pruning dead ends included) scores far above one half beyond the
training hops. Training: hop counts ``1..K``, fresh samples every step, loss
``CE + tau * mean(N + R)`` for the ACT kinds. Evaluation: a fixed test set per hop count
``1..H``; accuracy and mean steps per hop count.
"""

from collections.abc import Sequence
from dataclasses import replace
from functools import partial

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from ...checks import check_choice
from ...models.classifier import Classifier
from ...models.kinds import ACT_KINDS, KINDS, LABELS, build, parameter_count  # noqa: F401  (LABELS: the notebooks' names)
from ...profiles import by_profile
from ...runner import parallel, streams
from ...runner.specs import Chosen, Recipe, Spec
from ...runner.training import TrainConfig, default_device
from ...tasks import cpvr, cpvr_decoys
from .sizes.cpvr import SIZES

# The kinds whose seeds train together where a profile says ``seeds_together`` (ponder.runner.gpu.ensemble).
# Hyper-UT's are
# left out: on CUDA its seeds trained together part from each seed trained alone by up to 9.7e-4 of the loss,
# reproducibly, while on the CPU they agree to 1.2e-7 (docs/gpu.md; tests/test_gpu.py keeps the case as a strict
# xfail), so its runs would depend on which seeds share a group.
TOGETHER_KINDS = tuple(k for k in KINDS if not k.startswith("hyper"))
TRAINER = "hyper_ut.train_cpvr"  # what the runs' times are recorded under (figures/TIMES.json)


def loss_fn(tau: float):
    """``CE(logits, label) + tau * mean(N + R)`` (the ponder term is zero without ACT)."""

    def loss(model, batch):
        x, _, label = batch
        out = model(x)
        return F.cross_entropy(out.logits, label) + tau * out.ponder.mean()

    return loss


def sample(
    n: int, length: int, hops: int | Sequence[int], seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``x, hops, label``: ``n`` C-PVR examples with a decoy chain (:func:`ponder.tasks.cpvr_decoys.sample`)."""
    return cpvr_decoys.sample(n, length, hops, seed)[:3]


STREAM = "ponder.tasks.cpvr_decoys:sample"  # what a C-PVR run's training stream draws (ponder.runner.streams)


def training_batches(cfg: TrainConfig, length: int, hops: Sequence[int]):
    """``batches(step)``: the ``x, hops, label`` of :func:`sample` at each step of a run trained with
    ``cfg`` (its seed for ``step``: :func:`ponder.runner.streams.seed_of`), read from the training
    stream that every C-PVR run of that seed, task and length draws (:mod:`ponder.runner.streams`)."""
    stream = streams.batches(
        STREAM, dict(n=cfg.batch_size, length=length, hops=tuple(hops)), cfg.seed, cfg.steps, cpvr_decoys.VERSION
    )
    return lambda step: stream(step)[:3]


def stream_chunks(profile: str, seed: int = 0, depth_grid: bool = False) -> list[parallel.Job]:
    """Jobs that draw the training streams of the profile's C-PVR runs on its seeds: of the main
    task (hut-3 ... hut-10 and the survey), or of hut-2's depth grid; drawn before the runs, on
    every core (:func:`ponder.runner.streams.chunk_jobs`)."""
    sizes = by_profile(SIZES, profile)
    hops, steps = (
        (sizes["depth_grid"]["hops"], sizes["depth_grid"]["steps"])
        if depth_grid
        else (sizes["train_hops"], sizes["steps"])
    )
    knobs = dict(n=sizes["batch_size"], length=sizes["length"], hops=tuple(hops))
    return [
        job for s in sizes["seeds"] for job in streams.chunk_jobs(STREAM, knobs, seed + s, steps, cpvr_decoys.VERSION)
    ]


def test_set(length: int, hops: Sequence[int], n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``x, hops, label``: ``n`` examples per hop count, fixed (:func:`ponder.tasks.cpvr.fixed_test_set` of
    :func:`ponder.tasks.cpvr_decoys.sample`)."""
    return cpvr.fixed_test_set(cpvr_decoys.sample, length, hops, n)[:3]


def validation_set(length: int, hops: Sequence[int], n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``x, hops, label``: ``n`` examples per training hop count, fixed, drawn apart from the test set
    (:data:`ponder.tasks.cpvr.VALIDATION_SEED`): what a learning rate is chosen on."""
    return cpvr.fixed_test_set(cpvr_decoys.sample, length, hops, n, first_seed=cpvr.VALIDATION_SEED)[:3]


@torch.no_grad()
def per_hop(
    model: Classifier, length: int, hops: Sequence[int], n: int, batch: int = 1000, examples: tuple | None = None
) -> dict:
    """``{"accuracy": {hops: acc}, "loss": {hops: mean cross-entropy}, "steps": {hops: mean steps}}`` on the
    fixed test set (or on ``examples``, ``x, hops, label``)."""
    model.eval()
    device = default_device()
    x, m, label = examples if examples is not None else test_set(length, hops, n)
    correct, losses, steps = [], [], []
    for i in range(0, len(x), batch):
        out = model(x[i : i + batch].to(device))
        logits = out.logits.cpu()
        correct.append((logits.argmax(-1) == label[i : i + batch]).float())
        losses.append(F.cross_entropy(logits, label[i : i + batch], reduction="none"))
        steps.append(out.steps.cpu())
    correct, losses, steps = torch.cat(correct), torch.cat(losses), torch.cat(steps)
    return {
        "accuracy": {str(h): correct[m == h].mean().item() for h in hops},
        "loss": {str(h): losses[m == h].mean().item() for h in hops},
        "steps": {str(h): steps[m == h].mean().item() for h in hops},
    }


def train_config(sizes: dict, seed: int, **overrides) -> TrainConfig:
    """The optimisation of a C-PVR run of a profile's ``sizes`` (``steps``, ``batch_size``, ``lr``, ``warmup``)."""
    return TrainConfig(
        **{
            "steps": sizes["steps"],
            "batch_size": sizes["batch_size"],
            "lr": sizes["lr"],
            "warmup": sizes["warmup"],
            "seed": seed,
            **overrides,
        }
    )


def cpvr_spec(
    kind: str,
    profile: str,
    seed: int,
    model: dict | None = None,
    train_hops: Sequence[int] | None = None,
    test_hops: Sequence[int] | None = None,
    steps: int | None = None,
    name: str = "hut/cpvr",
    lr: float | None = None,
    warmup: float | None = None,
    together: Sequence[int] = (),
) -> Spec:
    """One C-PVR run at a given learning rate, declared (:mod:`ponder.runner.specs`; see :func:`train_cpvr`): everything
    not given from ``SIZES[profile]``. Where the profile trains the kind's seeds together (:func:`trains_together`)
    the run is one of the group of seeds ``together`` (default: ``seed`` alone)."""
    sizes = by_profile(SIZES, profile)
    model_cfg = dict(sizes["model"], **(model or {}))
    hold = (
        {"hold": "depth.halting", "hold_for": model_cfg["act_hold"]}
        if kind in ACT_KINDS and model_cfg["act_hold"]
        else {}
    )
    rate = {"lr": lr} if lr else {}
    cfg = train_config(
        sizes, seed, steps=steps or sizes["steps"], **hold, **rate, **({"warmup": warmup} if warmup else {})
    )
    stacked = trains_together(profile, kind)
    config = {
        "kind": kind,
        "model": model_cfg,
        "length": sizes["length"],
        "train_hops": tuple(train_hops or sizes["train_hops"]),
        "test_hops": tuple(test_hops or sizes["test_hops"]),
        "n_test": sizes["n_test"],
        "train": cfg.as_dict(),
        **({"seeds_together": True} if stacked else {}),
    }
    spec = Spec(f"{name}/{kind}", config, profile, (__name__,), cpvr_recipe, TRAINER, capture=True)
    group = tuple(together) or (seed,)
    if not stacked or group == (seed,):
        return spec
    if seed not in group:
        raise ValueError(f"seed {seed} is not one of the seeds it trains together with: {group}")
    alone = dict(model=model, train_hops=train_hops, test_hops=test_hops, steps=steps, name=name, lr=lr, warmup=warmup)
    members = tuple(spec if s == seed else cpvr_spec(kind, profile, s, **alone) for s in group)
    return replace(spec, together=members)


def cpvr_recipe(config: dict) -> Recipe:
    """How a C-PVR run of ``config`` (:func:`cpvr_spec`) trains: the model of its kind, ``CE + tau * mean(N + R)``,
    the training stream of its seed (:func:`training_batches`); evaluated per test hop count (:func:`per_hop`) and
    on the training hops' validation set (``validation``, ``validation loss``)."""
    cfg, model_cfg, length = TrainConfig(**config["train"]), config["model"], config["length"]
    train_hops, n = config["train_hops"], config["n_test"]

    def evaluate(net):
        validation = per_hop(net, length, train_hops, n, examples=validation_set(length, train_hops, n))
        return {
            **per_hop(net, length, config["test_hops"], n),
            "validation": float(np.mean(list(validation["accuracy"].values()))),
            "validation loss": float(np.mean(list(validation["loss"].values()))),
            "params": parameter_count(net),
        }

    return Recipe(
        lambda: build(config["kind"], length, model_cfg),
        loss_fn(model_cfg["tau"]),
        training_batches(cfg, length, train_hops),
        cfg,
        evaluate,
    )


def cpvr_run(
    kind: str,
    profile: str,
    seed: int,
    model: dict | None = None,
    tune_seed: int | None = None,
    lr: float | None = None,
    warmup: float | None = None,
    **given,
) -> Spec | Chosen:
    """One C-PVR run, declared: at ``lr`` and ``warmup`` where they are given (:func:`cpvr_spec`, which ``given``
    is passed to), else at the pair of the profile's grid with the lowest validation loss for the kind and
    ``model`` on seed ``tune_seed`` (default: ``seed``; :func:`best_rate`), chosen on the grid's runs once they
    are finished (:class:`~ponder.runner.specs.Chosen`)."""
    if lr is not None:
        return cpvr_spec(kind, profile, seed, model, lr=lr, warmup=warmup, **given)
    tuned_on = seed if tune_seed is None else tune_seed
    grid = rate_grid_runs(kind, profile, tuned_on, model)
    declare = partial(at_best_rate, tuple(grid), kind, profile, seed, model, **given)
    if len(grid) < 2:
        return declare([])
    together = given.get("together") or (seed,)
    variant = "".join(
        f" {k}={v}" for k, v in sorted({**(model or {}), **given}.items()) if k != "together" and v is not None
    )
    label = f"hut/cpvr/{kind}{variant}, seed {seed}, at the rate chosen on seed {tuned_on}"
    return Chosen(tuple(grid.values()), declare, label, leads=together[0] == seed)


def at_best_rate(
    grid: Sequence["Rate"], kind: str, profile: str, seed: int, model: dict | None, metrics: list[dict], **given
) -> Spec:
    """:func:`cpvr_spec` at the point of ``grid`` whose run's ``metrics`` (in the grid's order) have the lowest
    validation loss (:func:`best_rate`); a one-point grid's point without its metrics."""
    lr, warmup = best_rate(grid_scores(profile, dict(zip(grid, metrics, strict=True)))) if metrics else grid[0]
    return cpvr_spec(kind, profile, seed, model, lr=lr, warmup=warmup, **given)


def train_cpvr(
    kind: str,
    profile: str,
    seed: int,
    model: dict | None = None,
    train_hops: Sequence[int] | None = None,
    test_hops: Sequence[int] | None = None,
    steps: int | None = None,
    name: str = "hut/cpvr",
    together: Sequence[int] = (),
    lr: float | None = None,
    tune_seed: int | None = None,
    warmup: float | None = None,
):
    """Train (or load from the cache) one C-PVR model; ``(model, metrics)``.

    Everything not given comes from ``SIZES[profile]``; ``metrics`` holds the loss history,
    ``accuracy``, ``loss`` and ``steps`` per test hop count, ``validation`` and ``validation loss`` (mean
    accuracy and cross-entropy on the training hops' validation set) and ``params``. ``lr`` and ``warmup``: the
    learning rate and the fraction of the steps it warms up over; by default the pair :func:`cpvr_run` chooses for
    the kind and ``model`` from the profile's grid on seed ``tune_seed`` (default: ``seed``). On a GPU the step is
    captured as a CUDA graph (:mod:`ponder.runner.gpu.cuda_graphs`; once more when ACT's halting unit stops being held).
    Where the profile trains the kind's seeds together (:func:`trains_together`), the run is one of the group
    of seeds ``together`` (default: ``seed`` alone), all trained in one vmap-ed step
    (:mod:`ponder.runner.gpu.ensemble`), each its own run; elsewhere ``together`` changes nothing.
    """
    given = dict(train_hops=train_hops, test_hops=test_hops, steps=steps, name=name, together=together)
    return cpvr_run(kind, profile, seed, model, tune_seed, lr, warmup, **given)()


# -- every kind tuned alike: a learning rate and warmup chosen per kind on in-distribution validation --
Rate = tuple[float, float]  # (learning rate, the fraction of the steps it warms up over)


def rates(profile: str) -> list[Rate]:
    """The grid every kind is tuned on: each learning rate of the profile's ``lr_grid`` with each warmup of its
    ``warmup_grid`` (default: its ``warmup`` alone)."""
    sizes = by_profile(SIZES, profile)
    return [(lr, warmup) for lr in sizes["lr_grid"] for warmup in sizes.get("warmup_grid", (sizes["warmup"],))]


def rate_label(rate: Rate, profile: str) -> str:
    """``"0.006"``, or ``"0.006 w0.1"`` where the profile's grid tries more than one warmup."""
    lr, warmup = rate
    return f"{lr:g}" if len({w for _, w in rates(profile)}) == 1 else f"{lr:g} w{warmup:g}"


def rate_grid_runs(kind: str, profile: str, seed: int, model: dict | None = None) -> dict[Rate, Spec]:
    """``{rate: spec}``: the run of ``kind`` (with ``model``'s overrides) at each point of the profile's grid
    (:func:`rates`), on seed ``seed``."""
    return {(lr, warmup): cpvr_spec(kind, profile, seed, model, lr=lr, warmup=warmup) for lr, warmup in rates(profile)}


def grid_scores(profile: str, metrics: dict[Rate, dict]) -> dict[Rate, dict[str, float]]:
    """``{rate: {"accuracy": validation accuracy, "loss": validation cross-entropy, "ood": accuracy beyond the
    training hops}}`` of the grid runs' ``metrics``. The OOD accuracy is shown beside the choice, never chosen on."""
    beyond = max(by_profile(SIZES, profile)["train_hops"])
    return {
        rate: {
            "accuracy": m["validation"],
            "loss": m["validation loss"],
            "ood": float(np.mean([a for h, a in m["accuracy"].items() if int(h) > beyond])),
        }
        for rate, m in metrics.items()
    }


def rate_grid(kind: str, profile: str, seed: int, model: dict | None = None) -> dict[Rate, dict[str, float]]:
    """:func:`grid_scores` of :func:`rate_grid_runs` (a one-point grid is not trained here: ``nan``)."""
    runs = rate_grid_runs(kind, profile, seed, model)
    if len(runs) < 2:
        return {rate: {"accuracy": np.nan, "loss": np.nan, "ood": np.nan} for rate in runs}
    return grid_scores(profile, {rate: spec.metrics() for rate, spec in runs.items()})


def best_rate(scores: dict[Rate, dict[str, float]]) -> Rate:
    """The point of :func:`rate_grid`'s ``scores`` with the lowest validation cross-entropy (ties and ``nan``: the
    first). The loss, not the accuracy: several rates fit the training hops at accuracy 1.00, and the loss still
    tells them apart."""
    return min(scores, key=lambda rate: (np.nan_to_num(scores[rate]["loss"], nan=np.inf), list(scores).index(rate)))


def trains_together(profile: str, kind: str) -> bool:
    """Whether ``profile`` trains the seeds of ``kind`` together (``seeds_together``, :data:`TOGETHER_KINDS`)."""
    return (
        bool(by_profile(SIZES, profile).get("seeds_together")) and check_choice("kind", kind, KINDS) in TOGETHER_KINDS
    )


def seed_groups(profile: str, kind: str, seeds: Sequence[int]) -> dict:
    """``train_cpvr``'s ``together`` for a run of ``kind`` and one of ``seeds``: the group where the
    profile trains that kind's seeds together, else nothing."""
    return {"together": tuple(seeds)} if trains_together(profile, kind) else {}


def leading(runs: dict[tuple, Spec | Chosen]) -> list[Spec | Chosen]:
    """The runs to prefetch of ``runs``: all of them, but of a group of seeds trained together only
    its first seed's (which trains the group; the others would wait for it)."""
    return [run for run in runs.values() if run.leads]


def frame(metrics: dict, **columns) -> pd.DataFrame:
    """One row per test hop count: ``hops``, ``accuracy``, ``steps``, the run's ``validation loss`` (cross-entropy on
    the training hops' validation set, where ``metrics`` has it) and the given constant columns."""
    run = {"validation loss": metrics["validation loss"]} if "validation loss" in metrics else {}
    rows = [
        {"hops": int(h), "accuracy": a, "steps": metrics["steps"][h], **run, **columns}
        for h, a in metrics["accuracy"].items()
    ]
    return pd.DataFrame(rows)


def tuning_jobs(profile: str, seed: int, configs: Sequence[tuple[str, dict | None]]) -> list[Spec]:
    """The lr-grid runs that choosing a learning rate for each ``(kind, model overrides)`` of ``configs``
    on seed ``seed`` needs (none for a one-value grid): upstream of the runs at the chosen rate."""
    if len(rates(profile)) < 2:
        return []
    return [job for kind, model in configs for job in rate_grid_runs(kind, profile, seed, model).values()]


def lr_choices(profile: str, seed: int, configs: dict[str, tuple[str, dict | None]]) -> pd.DataFrame:
    """Per named ``(kind, model overrides)``: the validation accuracy and loss and the OOD accuracy at each point
    of the grid (columns ``accuracy <rate>``, ``loss <rate>``, ``ood <rate>``, each rate by :func:`rate_label`)
    and the point chosen (``chosen``, its label), on seed ``seed``: the tuning's evidence."""
    rows = []
    for name, (kind, model) in configs.items():
        scores = rate_grid(kind, profile, seed, model)
        rows.append(
            {
                "model": name,
                **{
                    f"{what} {rate_label(rate, profile)}": v[what]
                    for what in ("accuracy", "loss", "ood")
                    for rate, v in scores.items()
                },
                "chosen": rate_label(best_rate(scores), profile),
            }
        )
    return pd.DataFrame(rows).set_index("model")
