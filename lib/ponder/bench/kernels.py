"""Where a step's time goes: its operations by time on the device (``python -m ponder.bench kernels``).

For one eager training step (data moved, forward, backward, clipping, AdamW) of each family of
:mod:`ponder.bench.train` at the profile's sizes (``gpu`` on a GPU, ``quick`` on the CPU), variants
included, and for the forward of the ACM layer of :mod:`ponder.bench.acm` (dense, and grouped at a
quarter of the learners, one ``k`` per token and Binomial ``k``), ``torch.profiler`` records
:data:`REPEATS` calls after :data:`WARMUP` and lists the operators that take the most *self* time on
the device (on the CPU: of the CPU), with their call counts and input shapes.

What it answers, per step: is it bound by matrix products, by elementwise passes over large
tensors, by copies, or by the gaps between launches (``device_s`` well below ``wall_s``: the device
waits for the host). The figures of ``python -m ponder.bench train`` say how far a step is from the
arithmetic limit; these say where the rest goes. ``results/bench/kernels.json``.
"""

import time
from collections.abc import Callable

import torch
from torch.profiler import ProfilerActivity, profile

from ..runner.timing import synchronize
from ..runner.training import default_device, num_threads
from . import acm, train, write_result
from .steps import families

WARMUP, REPEATS, TOP = 3, 5, 12


def profiled(fn: Callable[[], object], top: int = TOP) -> dict:
    """``fn``'s mean wall-clock seconds per call, its time on the device per call (``device_s``: on a
    GPU the kernels' own times summed, on the CPU the operators' self time), and its ``top``
    operators by self time: ``{op, calls, self_s, share, shapes}`` (per call of ``fn``; ``share`` of
    ``device_s``). On a GPU also ``attributed_s``, the part of ``device_s`` that the operators
    account for (a kernel launched outside PyTorch's operators, as Triton's are, counts in
    ``device_s`` only), and the ``kernels`` that take the most time, ``{kernel, calls, self_s}``.
    The device's sum leaves out the ranges that ``record_function`` marks on it (the optimizer's
    step, each compiled graph's call), which would count kernels twice: counted, the compiled
    sraven step's 11.4 ms on an H200 exceeded its 10.5 ms of wall time."""
    for _ in range(WARMUP):
        fn()
    synchronize()
    cuda = torch.cuda.is_available()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities, record_shapes=True) as recording:
        begin = time.perf_counter()
        for _ in range(REPEATS):
            fn()
        synchronize()
        wall = (time.perf_counter() - begin) / REPEATS
    events = recording.key_averages(group_by_input_shape=True)
    operators = [e for e in events if e.device_type == torch.autograd.DeviceType.CPU]
    self_us = lambda e: e.self_device_time_total if cuda else e.self_cpu_time_total  # noqa: E731
    per_call = lambda us: us / REPEATS / 1e6  # noqa: E731
    attributed = per_call(sum(self_us(e) for e in operators))
    # on the device, the ranges of ``record_function`` (AdamW's step, a compiled graph's call) span
    # kernels already counted
    kernels = sorted(
        (
            e
            for e in events
            if e.device_type == torch.autograd.DeviceType.CUDA and not getattr(e, "is_user_annotation", False)
        ),
        key=self_us,
        reverse=True,
    )
    total = per_call(sum(self_us(e) for e in kernels)) if cuda else attributed
    ranked = sorted(operators, key=self_us, reverse=True)[:top]
    result = {
        "wall_s": wall,
        "device_s": total,
        "top": [
            {
                "op": e.key,
                "calls": e.count / REPEATS,
                "self_s": per_call(self_us(e)),
                "share": per_call(self_us(e)) / total if total else 0.0,
                "shapes": str(e.input_shapes),
            }
            for e in ranked
        ],
    }
    if cuda:
        result |= {
            "attributed_s": attributed,
            "kernels": [
                {"kernel": e.key, "calls": e.count / REPEATS, "self_s": per_call(self_us(e))} for e in kernels[:top]
            ],
        }
    return result


def training_steps(profile: str) -> dict[str, Callable[[], object]]:
    """``{family: one eager training step}`` for every family of :func:`ponder.bench.steps.families`."""
    device = default_device()
    steps = {}
    for name, (make, batches, loss_fn) in families(profile).items():
        update = train.step_function(make, loss_fn, capture=False)
        batch = batches(0)
        steps[name] = lambda update=update, batch=batch: update(tuple(t.to(device, non_blocking=True) for t in batch))
    return steps


def acm_layers(fraction: float = 0.25) -> dict[str, Callable[[], object]]:
    """``{name: one forward}`` of the dense MLP and the grouped ACM layer (with its gate) at
    ``fraction`` of the learners, as :func:`ponder.bench.acm.measure` times them; the fused layer
    too where :func:`ponder.bench.acm.fused_layer` gives it (a GPU with Triton)."""
    z, mlp, learners, gate = acm.layer_parts()
    generator = torch.Generator().manual_seed(0)
    counts = {mix: acm.random_choices(len(z), fraction, acm.N, generator, mix).to(z.device) for mix in acm.MIXES}
    fused, _ = acm.fused_layer(learners, z, list(counts.values()))
    layers = {"ACM layer: dense MLP": lambda: mlp(z)}
    for mix, k in counts.items():
        layers[f"ACM layer: grouped, {mix} k, {fraction:g} of the learners"] = lambda k=k: (
            gate(z),
            learners.grouped(z, k),
        )
        if fused:
            layers[f"ACM layer: fused, {mix} k, {fraction:g} of the learners"] = lambda k=k: (
                gate(z),
                fused(learners, z, k),
            )
    return layers


def main() -> dict:
    cuda = torch.cuda.is_available()
    profile = "gpu" if cuda else "quick"
    result = {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "profile": profile,
        "warmup": WARMUP,
        "repeats": REPEATS,
        "steps": [],
    }
    with num_threads(1):
        for name, step in training_steps(profile).items():
            result["steps"].append({"name": name, **profiled(step)})
        with torch.inference_mode():
            for name, forward in acm_layers().items():
                result["steps"].append({"name": name, **profiled(forward)})
    write_result("kernels", result)
    return result
