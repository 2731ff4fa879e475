"""How far each family's training step is from what its products alone would take, and where the rest goes.

For one run of each family (:func:`ponder.bench.steps.families`, ``quick``'s sizes on the CPU), in one
process, on one thread, under the pins, as the runs train:

* ``step_ms``: a real training step (data, forward, backward, clipping, fused AdamW), timed;
* ``limit_ms``: the step's floating-point work (forward and backward, 2 per multiply-add,
  :func:`ponder.bench.train.flops_per_step`) at the machine's sustained matrix-product rate
  (:func:`ponder.bench.train.matmul_rate`: a 1024 × 1024 float32 product through the pinned path, one thread):
  the time no implementation of these operations could beat;
* ``distance``: ``step_ms / limit_ms``, how many times the limit a step takes;
* ``parts_ms``: where the step's time goes. The phases are timed one by one (``data``: the batch;
  ``optimizer``: clipping and AdamW; the forward and the backward); a profile of the forward and backward
  passes (:mod:`torch.profiler`) splits their time into ``products`` (the matrix products, each with
  everything below it), ``other kernels`` (every other ATen operator's own time: elementwise, reductions,
  copies, indexing) and ``Python and dispatch`` (the rest: the models' Python, autograd's engine, ATen's
  dispatch), in the profile's proportions;
* ``top``: the operators with the most time of their own in that profile, in milliseconds per step.

``python -m ponder.bench limit`` (part of ``make bench``) writes ``results/bench/limit.json``;
``python -m ponder.bench.limit --record`` writes the same as the entry ``bench-limit`` of the measured-times record
``figures/TIMES.json`` too, which docs/development.md's table is rendered from
(:func:`ponder.repro.measured.limit_table`).
"""

import sys
import time
from collections import Counter

import torch
from torch.profiler import ProfilerActivity, profile

from ..paths import ROOT
from ..repro import measured
from ..repro.provenance import device
from ..runner.training import TrainConfig, make_optimizer, num_threads
from . import write_result
from .steps import families
from .train import flops_per_step, matmul_rate

PROFILE, WARMUP, STEPS, PROFILED, TOP = "quick", 10, 30, 10, 6
# ATen's matrix products: the four that :mod:`ponder.products` routes, and the rest of the family
PRODUCTS = frozenset(
    f"aten::{name}" for name in ("mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "_addmm_activation")
)
PARTS = ("products", "other kernels", "Python and dispatch", "optimizer", "data")


def phases(make, batches, loss_fn, steps: int = STEPS, warmup: int = WARMUP) -> tuple[dict[str, float], list]:
    """Seconds per step of each phase of a training step of a fresh model, ``{"data", "forward", "backward",
    "optimizer"}`` (the mean over ``steps`` steps after ``warmup``), and the model, its loss and the last batch."""
    torch.manual_seed(0)
    model = make().train()
    optimizer = make_optimizer(model, TrainConfig(steps=1, batch_size=1))
    seconds = Counter()
    for step in range(warmup + steps):
        marks = [time.perf_counter()]
        batch = batches(step)
        marks.append(time.perf_counter())
        loss = loss_fn(model, batch)
        marks.append(time.perf_counter())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        marks.append(time.perf_counter())
        torch.nn.utils.clip_grad_norm_(model.parameters(), TrainConfig.grad_clip)
        optimizer.step()
        marks.append(time.perf_counter())
        if step >= warmup:
            for name, begin, end in zip(("data", "forward", "backward", "optimizer"), marks, marks[1:]):
                seconds[name] += end - begin
    return {name: s / steps for name, s in seconds.items()}, [model, loss_fn, batch]


def under_products(event) -> bool:
    """Whether a profiled ``event`` runs inside a matrix product (its time is counted with the product's)."""
    parent = event.cpu_parent
    while parent is not None:
        if parent.name in PRODUCTS:
            return True
        parent = parent.cpu_parent
    return False


def split(model, loss_fn, batch, steps: int = PROFILED) -> tuple[dict[str, float], dict[str, float]]:
    """The shares of the forward and backward passes' time spent in ``products``, ``other kernels`` and
    ``Python and dispatch`` (summing to 1), from a profile of ``steps`` passes; and the operators with the
    most time of their own, ``{name: seconds per pass}``."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        begin = time.perf_counter()
        for _ in range(steps):
            model.zero_grad(set_to_none=True)
            loss_fn(model, batch).backward()
        wall = time.perf_counter() - begin
    products = other = 0.0
    own = Counter()
    for event in prof.events():
        if not event.name.startswith("aten::") or under_products(event):
            continue
        if event.name in PRODUCTS:
            products += event.cpu_time_total / 1e6
            own[event.name] += event.cpu_time_total / 1e6 / steps
        else:
            other += event.self_cpu_time_total / 1e6
            own[event.name] += event.self_cpu_time_total / 1e6 / steps
    shares = {"products": products / wall, "other kernels": other / wall}
    shares["Python and dispatch"] = max(0.0, 1 - sum(shares.values()))
    return shares, dict(own.most_common(TOP))


def family_row(name: str, make, batches, loss_fn, rate: float) -> dict:
    """The row of one family: step and limit in ms, the distance, the parts of a step and the top operators."""
    seconds, (model, loss, batch) = phases(make, batches, loss_fn)
    shares, top = split(model, loss, batch)
    passes = seconds["forward"] + seconds["backward"]
    step = sum(seconds.values())
    limit = flops_per_step(PROFILE, name) / rate
    parts = {part: share * passes for part, share in shares.items()}
    parts |= {"optimizer": seconds["optimizer"], "data": seconds["data"]}
    return {
        "family": name,
        "step_ms": 1e3 * step,
        "limit_ms": 1e3 * limit,
        "distance": step / limit,
        "parts_ms": {part: 1e3 * parts[part] for part in PARTS},
        "top_ms": {op: 1e3 * s for op, s in top.items()},
    }


def main(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    with num_threads(1):
        rate = matmul_rate()
        result = {"machine": device(), "profile": PROFILE, "threads": 1, "matmul_gflops": rate / 1e9, "families": []}
        for name, (make, batches, loss_fn) in families(PROFILE, variants=False).items():
            row = family_row(name, make, batches, loss_fn, rate)
            result["families"].append(row)
            print(
                f"{name}: {row['step_ms']:.1f} ms a step, {row['distance']:.0f}x the {row['limit_ms']:.2f} ms "
                "of its products at the machine's rate",
                flush=True,
            )
    write_result("limit", result)
    if "--record" in argv:
        print(f"recorded: {measured.write(ROOT / 'figures', measured.LIMIT, result)}")
    return result


if __name__ == "__main__":
    main()
