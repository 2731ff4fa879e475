"""Training steps per second of each model family, against the arithmetic limit of the device.

For one representative run of each family at the GPU profile's sizes (``quick`` on the CPU) this
times real training steps (data generation, forward, backward, clipping, AdamW) and reports

* ``steps_per_s``: one process alone;
* ``shared_steps_per_s``: the steps of ``P`` processes training side by side, summed, ``P`` =
  :func:`ponder.runner.parallel.worker_count` (what :func:`ponder.runner.parallel.prefetch` gets from sharing one
  GPU, or from the cores: on a 2-core CPU, ``shared_steps_per_s / steps_per_s`` below 2 is what
  two runs side by side lose to each other);
* ``captured_steps_per_s`` and ``captured_shared_steps_per_s``: the same with the step recorded as
  a CUDA graph (:mod:`ponder.runner.gpu.cuda_graphs`), for the families whose step has fixed shapes and no
  host synchronisation (:data:`CAPTURED`; on a GPU only), and ``captured_steps_per_s_batch_x4``
  alone with batches 4 times as large (what a profile trading steps for batch would get);
* ``together_steps_per_s`` (and on a GPU ``captured_together_steps_per_s``, alone, and
  ``captured_together_shared_steps_per_s``, ``P`` processes summed): run-steps per second of
  :data:`SEEDS` runs trained together in one step (:mod:`ponder.runner.gpu.ensemble`), for the families whose
  seeds a profile trains that way (:data:`TOGETHER`);
* ``data_s``: seconds per step spent on the batch on the CPU: generating it, or for the C-PVR
  families reading it from the runs' training stream (:mod:`ponder.runner.streams`, drawn once in the
  warm-up);
* the same for the variants of :data:`VARIANTS`, to decide whether the gpu profile's runs should
  train that way: the forward in bfloat16 autocast (rows ``"bf16 ..."``; their limit stays the
  float32/TF32 one), the loss compiled by ``torch.compile`` (rows ``"compiled ..."``,
  :mod:`ponder.runner.gpu.compilation`; what ``compiled=True`` does to a sraven run, and would to ACM's
  phase III and the language model), and compiled with its small batched products left to cuBLAS
  (rows ``"compiled-cublas ..."``: what the sums gain);
* ``limit_steps_per_s``: the step's floating-point operations (forward and backward, counted by
  :class:`torch.utils.flop_counter.FlopCounterMode`) at the rate of a large float32 (TF32 on a
  GPU) matrix product measured in the same run: what no implementation could beat.

``python -m ponder.bench train`` writes ``results/bench/train.json``.
"""

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager, nullcontext
from multiprocessing import get_context

import torch
from torch.utils.flop_counter import FlopCounterMode

from ..runner.gpu.ensemble import Stacked
from ..runner.parallel import worker_count
from ..runner.runs import write_json
from ..runner.timing import synchronize
from ..runner.training import TrainConfig, default_device, make_optimizer, num_threads, update_function
from . import RESULTS, write_result
from .steps import VARIANTS, base_family, families

STEPS, WARMUP = 60, 10
RESULT = RESULTS / "train.json"
# the families whose step can be captured (sraven's and C-PVR's runs train that way: ``train_run(..., capture=True)``),
# their variants with them
CAPTURED = ("sraven", "fuzzy", "ViT", "C-PVR", "digits U-ViT")
# the families whose seeds the gpu profile trains together (``hyper_ut.SIZES["gpu"]["seeds_together"]``), and how many
TOGETHER, SEEDS = ("C-PVR",), 3


def step_function(make: Callable, loss_fn: Callable, capture: bool, seeds: int = 1) -> Callable:
    """A real training update ``batch -> loss`` of a fresh model from ``make`` (AdamW, clipping at
    1); with ``seeds > 1``, of that many models stacked (:class:`ponder.runner.gpu.ensemble.Stacked`), whose
    batches are stacked too."""
    device = default_device()
    cfg = TrainConfig(steps=1, batch_size=1)
    models = []
    for seed in range(seeds):
        torch.manual_seed(seed)
        models.append(make().to(device).train())
    if seeds > 1:
        return Stacked(models, cfg, capturable=capture).update_function(loss_fn, capture)
    optimizer = make_optimizer(models[0], cfg, capturable=capture)
    return update_function(models[0], loss_fn, models[0], optimizer, cfg.grad_clip, capture)


def time_steps(
    profile: str,
    name: str,
    steps: int = STEPS,
    warmup: int = WARMUP,
    barrier=None,
    capture: bool = False,
    batch_scale: int = 1,
    seeds: int = 1,
) -> dict:
    """Seconds per training step of family ``name`` (after ``warmup`` steps), and of its data alone.
    ``barrier`` lines up processes that run side by side; ``capture`` (CUDA) replays the step as a
    CUDA graph, captured during the warm-up; ``batch_scale`` joins that many batches into one;
    ``seeds`` trains that many runs together in one step (:mod:`ponder.runner.gpu.ensemble`: a step is then
    one step of each)."""
    make, one_batch, loss_fn = families(profile)[name]

    def joined(step):
        return tuple(
            torch.cat(parts) for parts in zip(*(one_batch(step * batch_scale + j) for j in range(batch_scale)))
        )

    batches = (
        joined
        if seeds == 1
        else lambda step: tuple(torch.stack(parts) for parts in zip(*(joined(step * seeds + s) for s in range(seeds))))
    )
    device = default_device()
    update = step_function(make, loss_fn, capture, seeds)
    move = lambda step: tuple(t.to(device, non_blocking=True) for t in batches(step))  # noqa: E731
    for step in range(warmup):
        update(move(step))
    synchronize()
    if barrier is not None:
        barrier.wait()
    begin = time.perf_counter()
    for step in range(warmup, warmup + steps):
        update(move(step))
    synchronize()
    seconds = (time.perf_counter() - begin) / steps
    begin = time.perf_counter()
    for step in range(steps):
        batches(step)
    return {"step_s": seconds, "data_s": (time.perf_counter() - begin) / steps}


def flops_per_step(profile: str, name: str) -> float:
    """Floating-point operations of one forward and backward pass (2 per multiply-add), counted on
    the family's eager float32 step (a variant's operations are the same)."""
    make, batches, loss_fn = families(profile, variants=False)[base_family(name)]
    device = default_device()
    torch.manual_seed(0)
    model = make().to(device).train()
    batch = tuple(t.to(device) for t in batches(0))
    with FlopCounterMode(display=False) as counter:
        loss_fn(model, batch).backward()
    return float(counter.get_total_flops())


def matmul_rate(size: int = 4096, repeats: int = 20) -> float:
    """Measured float32 (TF32 on a GPU) matrix-product rate in FLOP/s: the arithmetic ceiling."""
    device = default_device()
    if device.type == "cpu":
        size = 1024
    a, b = torch.randn(size, size, device=device), torch.randn(size, size, device=device)
    for _ in range(3):
        a @ b
    synchronize()
    begin = time.perf_counter()
    for _ in range(repeats):
        a @ b
    synchronize()
    return 2 * size**3 * repeats / (time.perf_counter() - begin)


def _worker(profile: str, name: str, barrier, capture: bool, seeds: int) -> dict:
    with num_threads(1):
        return time_steps(profile, name, barrier=barrier, capture=capture, seeds=seeds)


@contextmanager
def side_by_side(processes: int) -> Iterator[tuple[ProcessPoolExecutor, object]]:
    """``(pool, manager)``: ``processes`` spawned workers, and a manager for the barriers that line
    them up, kept for every :func:`shared` measurement of a run of the benchmark (each spawn imports
    torch and starts CUDA anew: seconds a measurement, and a GPU run makes about 30)."""
    context = get_context("spawn")
    with context.Manager() as manager, ProcessPoolExecutor(processes, mp_context=context) as pool:
        yield pool, manager


def shared(
    profile: str, name: str, processes: int, capture: bool = False, seeds: int = 1, workers: tuple | None = None
) -> float:
    """Steps per second of ``processes`` copies of the run training side by side, summed (run-steps:
    a step of ``seeds`` runs together counts ``seeds``), in ``workers`` (:func:`side_by_side`, of
    ``processes`` workers; default: a pool of their own). Each copy waits at a barrier for the
    others, so the ``processes`` copies run in as many workers, side by side."""
    if workers is None:
        with side_by_side(processes) as workers:
            return shared(profile, name, processes, capture, seeds, workers)
    pool, manager = workers
    barrier = manager.Barrier(processes)
    results = list(pool.map(_worker, *zip(*[(profile, name, barrier, capture, seeds)] * processes)))
    return sum(seeds / r["step_s"] for r in results)


def captured_rates(profile: str, name: str, processes: int, workers: tuple | None = None) -> dict:
    """The ``captured_*`` steps per second of family ``name`` (CUDA): alone, alone with batches
    4 times as large (not for a variant), and summed over ``processes`` side by side (in ``workers``)."""
    with num_threads(1):
        row = {"captured_steps_per_s": 1 / time_steps(profile, name, capture=True)["step_s"]}
        if name == base_family(name):  # a variant is not timed at other batch sizes
            row["captured_steps_per_s_batch_x4"] = 1 / time_steps(profile, name, capture=True, batch_scale=4)["step_s"]
    if processes > 1:
        row["captured_shared_steps_per_s"] = shared(profile, name, processes, capture=True, workers=workers)
    return row


def together_rates(profile: str, name: str, processes: int, cuda: bool, workers: tuple | None = None) -> dict:
    """The ``together_*`` run-steps per second of family ``name``, :data:`SEEDS` runs in one step
    (:mod:`ponder.runner.gpu.ensemble`): eager alone; on CUDA also captured, alone and summed over ``processes``
    (in ``workers``)."""
    with num_threads(1):
        row = {"together_steps_per_s": SEEDS / time_steps(profile, name, seeds=SEEDS)["step_s"]}
        if cuda:
            row["captured_together_steps_per_s"] = (
                SEEDS / time_steps(profile, name, capture=True, seeds=SEEDS)["step_s"]
            )
    if cuda and processes > 1:
        row["captured_together_shared_steps_per_s"] = shared(
            profile, name, processes, capture=True, seeds=SEEDS, workers=workers
        )
    return row


def family_row(
    profile: str, name: str, rate: float, cuda: bool, workers: tuple | None = None, captured: tuple[str, ...] = CAPTURED
) -> dict:
    """Every rate of family ``name`` this device can measure (see the module docstring), those of
    processes side by side in ``workers`` (:func:`side_by_side`); captured too where ``name`` starts
    with one of ``captured`` (for families that train eagerly)."""
    with num_threads(1):
        alone = time_steps(profile, name)
    flops = flops_per_step(profile, name)
    row = {
        "family": name,
        "steps_per_s": 1 / alone["step_s"],
        "data_s": alone["data_s"],
        "flops_per_step": flops,
        "limit_steps_per_s": rate / flops,
    }
    processes = worker_count()
    if processes > 1:
        row |= {"processes": processes, "shared_steps_per_s": shared(profile, name, processes, workers=workers)}
    if cuda and base_family(name).startswith(captured):
        try:
            row |= captured_rates(profile, name, processes, workers)
        except RuntimeError as error:  # a step that fails to capture: the row keeps its eager rates and says why
            row["captured_error"] = str(error)
    if name.startswith(TOGETHER):
        try:
            row |= together_rates(profile, name, processes, cuda, workers)
        except RuntimeError as error:
            row["together_error"] = str(error)
    return row


def main() -> dict:
    cuda = torch.cuda.is_available()
    profile = "gpu" if cuda else "quick"
    rate = matmul_rate()
    result = {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "profile": profile,
        "matmul_flops_per_s": rate,
        "families": [],
        "complete": False,
    }
    processes = worker_count()
    with side_by_side(processes) if processes > 1 else nullcontext() as workers:
        for name in families(profile):
            try:
                row = family_row(profile, name, rate, cuda, workers)
            except Exception as error:  # a variant that fails keeps the other families' rows
                if not name.startswith(tuple(VARIANTS)):
                    raise
                row = {"family": name, "error": str(error)}
            result["families"].append(row)
            print({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
            write_json(RESULT, result)  # row by row: a run cut off by its time limit keeps the rows it measured
    result["complete"] = True
    write_result("train", result)
    return result
