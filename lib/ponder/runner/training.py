"""One training loop for every experiment.

AdamW, linear warmup then cosine decay, gradient clipping, a tqdm bar, CUDA when there is one,
seeds for python/numpy/torch, and checkpoints into the run cache so an interrupted run resumes
and ends bit-for-bit where an uninterrupted one would.

Data comes from ``batches(step)``, a function of the step alone (e.g. a generator seeded with
``(seed, step)``): that is what makes resuming exact without saving a data-loader state.

Under ``torchrun`` (``WORLD_SIZE > 1``) the model is wrapped in DistributedDataParallel and each
process trains on its slice ``[rank::world]`` of every global batch; rank 0 writes the cache.
"""

import math
import os
import random
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.distributed as dist
from tqdm.auto import tqdm

from ..checks import check_int, check_positive
from .gpu.cuda_graphs import CapturedStep, lr_on_device, set_lr
from .runs import Run

Batch = tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings; part of every run's cache key."""

    steps: int
    batch_size: int
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.05  # fraction of the steps spent warming up
    min_lr_ratio: float = 0.1  # the cosine decays to lr * min_lr_ratio
    grad_clip: float = 1.0
    seed: int = 0
    checkpoint_every: int = 200
    log_every: int = 50
    hold: str = ""  # parameters whose name starts with this keep their initial values ...
    hold_for: float = 0.0  # ... for this fraction of the steps (e.g. ACT's halting unit: "depth.halting")

    def __post_init__(self):
        check_int("steps", self.steps, minimum=1)
        check_int("batch_size", self.batch_size, minimum=1)
        check_positive("lr", self.lr)
        if not 0 <= self.warmup < 1:
            raise ValueError(f"warmup={self.warmup} must be a fraction in [0, 1)")
        check_int("checkpoint_every", self.checkpoint_every, minimum=1)
        check_int("log_every", self.log_every, minimum=1)
        if not 0 <= self.hold_for < 1:
            raise ValueError(f"hold_for={self.hold_for} must be a fraction in [0, 1)")

    def as_dict(self) -> dict:
        return asdict(self)


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch (CPU and every GPU)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@contextmanager
def num_threads(n: int):
    """Run the block (or decorated function) with ``n`` CPU intra-op threads, then restore.

    The quick profile's models are tiny: one thread beats several on the CPU, by far on a busy
    machine where idle threads spin. The thread count does not change what is computed.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(check_int("n", n, minimum=1))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def cores() -> int:
    """The CPU cores this process may use (``import ponder`` pins torch to one thread: timing
    benchmarks ask for more with :func:`num_threads`)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def default_device() -> torch.device:
    """``cuda`` (this process's GPU under torchrun) when available, else ``cpu``.

    On the GPU float32 matrix products use TF32 (10-bit mantissa inputs, float32 accumulation):
    several times the float32 rate on an H100, and far below the noise of any result here.
    """
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    return torch.device("cpu")


def world() -> tuple[int, int]:
    """``(rank, world_size)``; ``(0, 1)`` outside torchrun."""
    size = int(os.environ.get("WORLD_SIZE", 1))
    if size > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return (dist.get_rank(), size) if size > 1 else (0, 1)


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate at ``step``: linear warmup to ``lr``, then cosine to ``lr * min_lr_ratio``."""
    warmup = int(cfg.warmup * cfg.steps)
    if step < warmup:
        return cfg.lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, cfg.steps - warmup)
    cosine = 0.5 * (1 + math.cos(math.pi * progress))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cosine)


def hold_parameters(model: torch.nn.Module, step: int, cfg: TrainConfig) -> None:
    """Before ``int(cfg.hold_for * cfg.steps)`` steps, the parameters named ``cfg.hold...`` get no
    gradient, so the optimizer leaves them (and their moments) as they are; later they train."""
    if cfg.hold:
        frozen = step < int(cfg.hold_for * cfg.steps)
        for name, p in model.named_parameters():
            if name.startswith(cfg.hold):
                p.requires_grad_(not frozen)


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig, capturable: bool = False) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only (not on biases, norms or embeddings' 1-d params).

    The fused kernel, on the GPU and on the CPU alike: one pass over each parameter instead of a
    dozen small operations per parameter (the small models here are bound by per-operation
    overhead; on the CPU it makes the optimizer step about 10x faster than the default loop).
    ``capturable`` (CUDA): step counts stay on the GPU, so the step can be recorded as a CUDA graph
    (:mod:`ponder.runner.gpu.cuda_graphs`).
    """
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.ndim >= 2], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.lr, fused=True, capturable=capturable)


def optimizer_step(
    loss: torch.Tensor, model: torch.nn.Module, optimizer: torch.optim.Optimizer, grad_clip: float
) -> None:
    """One update from ``loss``: fresh gradients, clipped to norm ``grad_clip``, then the optimizer's step."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()


def update_function(
    net: torch.nn.Module,
    loss_fn,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    grad_clip: float,
    capture: bool = False,
) -> Callable[[Batch], torch.Tensor]:
    """One training update ``batch -> loss`` of ``net`` (``model``, or its DistributedDataParallel
    wrapper); with ``capture``, recorded as a CUDA graph after its warm-up (:class:`CapturedStep`:
    the optimizer must be capturable; its learning rates are moved to the device here, after any
    restore of its state), and again whenever the set of parameters that train changes
    (:func:`hold_parameters`)."""
    if capture:
        lr_on_device(optimizer)

    def update(batch: Batch) -> torch.Tensor:
        loss = loss_fn(net, batch)
        optimizer_step(loss, model, optimizer, grad_clip)
        return loss

    return CapturedStep(update, phase=lambda: tuple(p.requires_grad for p in model.parameters())) if capture else update


@torch.enable_grad()
def train(
    model: torch.nn.Module,
    loss_fn: Callable[[torch.nn.Module, Batch], torch.Tensor],
    batches: Callable[[int], Batch],
    cfg: TrainConfig,
    run: Run | None = None,
    desc: str = "train",
    capture: bool = False,
) -> list[dict]:
    """Train ``model`` in place for ``cfg.steps`` steps; return the loss history.

    ``loss_fn(model, batch)`` returns a scalar loss; ``batches(step)`` returns the global batch of
    that step as a tuple of tensors (moved to the model's device here). With a ``run``, the state
    is checkpointed every ``cfg.checkpoint_every`` steps and training resumes from it.
    ``capture``: the step has fixed shapes and no host synchronisation, so on one GPU it is
    recorded as a CUDA graph and replayed (:mod:`ponder.runner.gpu.cuda_graphs`); on the CPU it changes nothing.
    Gradients are on whatever the caller's grad mode: an analysis that evaluates under ``torch.no_grad`` may be
    the first to ask for a run (with one worker, :func:`ponder.runner.parallel.prefetch` trains nothing ahead).
    """
    rank, size = world()
    device = default_device()
    capture = capture and device.type == "cuda" and size == 1
    model.to(device)
    optimizer = make_optimizer(model, cfg, capturable=capture)
    seed_everything(cfg.seed)
    start, history = 0, []
    if run is not None and (state := run.load_tensors("checkpoint")) is not None:
        start, history = _restore(state, model, optimizer)
    net = torch.nn.parallel.DistributedDataParallel(model) if size > 1 else model
    update = update_function(net, loss_fn, model, optimizer, cfg.grad_clip, capture)
    quiet = {"disable": True} if rank != 0 else {}  # elsewhere TQDM_DISABLE=1 silences it (CI)
    bar = tqdm(range(start, cfg.steps), desc=desc, initial=start, total=cfg.steps, leave=False, **quiet)
    model.train()
    for step in bar:
        set_lr(optimizer, lr_at(step, cfg))
        batch = tuple(t[rank::size].to(device) for t in batches(step))
        hold_parameters(model, step, cfg)
        loss = update(batch)
        if (step + 1) % cfg.log_every == 0 or step + 1 == cfg.steps:
            history.append({"step": step + 1, "loss": loss.item()})
            bar.set_postfix(loss=f"{history[-1]['loss']:.3f}")
        if run is not None and rank == 0 and (step + 1) % cfg.checkpoint_every == 0 and step + 1 < cfg.steps:
            _checkpoint(run, step + 1, history, model, optimizer)
    bar.close()
    model.eval()
    return history


def train_run(
    run: Run,
    make_model: Callable[[], torch.nn.Module],
    loss_fn: Callable[[torch.nn.Module, Batch], torch.Tensor],
    batches: Callable[[int], Batch],
    cfg: TrainConfig,
    evaluate: Callable[[torch.nn.Module], dict] | None = None,
    capture: bool = False,
) -> tuple[torch.nn.Module, dict]:
    """The cached version of :func:`train`: ``(model, metrics)``, trained only if not cached.

    ``metrics`` holds the loss ``history`` and whatever ``evaluate(model)`` returns. ``capture``:
    see :func:`train` (the run's code should then name ``ponder.runner.gpu.cuda_graphs``).
    """
    seed_everything(cfg.seed)
    model = make_model()
    cached = lambda: (run.load_model(model).to(default_device()).eval(), run.metrics())  # noqa: E731
    if run.done:
        return cached()
    # another process may be training this very run: wait for it (not under torchrun, whose
    # ranks train each run together)
    with run.lock() if world()[1] == 1 else nullcontext():
        if run.done:
            return cached()
        history = train(model, loss_fn, batches, cfg, run=run, desc=run.name, capture=capture)
        metrics = {"history": history}
        if evaluate is not None:
            with torch.no_grad():
                metrics.update(evaluate(model))
        if world()[0] == 0:
            run.finish(metrics, model)
    return model, metrics


# -- checkpoints: model, optimizer and RNG state as safetensors --------------------------------
def _checkpoint(run: Run, step: int, history: list, model, optimizer) -> None:
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    opt = optimizer.state_dict()
    for index, state in opt["state"].items():
        for name, value in state.items():
            tensors[f"optim.{index}.{name}"] = torch.as_tensor(value)
    tensors["rng.cpu"] = torch.get_rng_state()
    if torch.cuda.is_available():
        tensors["rng.cuda"] = torch.cuda.get_rng_state()
    run.save_tensors("checkpoint", tensors, meta={"step": step, "history": history})


def _restore(state: tuple[dict, dict], model, optimizer) -> tuple[int, list]:
    tensors, meta = state
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    opt_state: dict[int, dict] = {}
    for key, value in tensors.items():
        if key.startswith("optim."):
            _, index, name = key.split(".", 2)
            opt_state.setdefault(int(index), {})[name] = value
    # the groups' settings are the run's config (the learning rate is set at every step), so the
    # optimizer keeps its own: also its ``capturable``, where a run resumes on another device
    optimizer.load_state_dict({"state": opt_state, "param_groups": optimizer.state_dict()["param_groups"]})
    torch.set_rng_state(tensors["rng.cpu"])
    if "rng.cuda" in tensors and torch.cuda.is_available():
        torch.cuda.set_rng_state(tensors["rng.cuda"])
    return meta["step"], meta["history"]
