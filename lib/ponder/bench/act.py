"""Does ACT really save time? The masked vs the compacted forward pass of a UT+ACT model.

``python -m ponder.bench act`` builds the C-PVR UT+ACT classifier of the Hyper-UT experiments
(``ponder.experiments.hyper_ut.build``), runs it on a C-PVR batch of 256 whose examples halt at
different steps, and times in the same run

* **masked**: every step on the whole batch, halted examples' weights masked to zero (the loop
  runs until the last example halts);
* **compacted**: every step only on the examples still running, gathered and scattered back
  (``ponder.models.act`` with ``compact=True``).

The two give the same outputs (checked here and in ``tests/test_act.py``). If a step's cost is
proportional to the examples it runs on, ``compacted / masked = mean steps / max steps``; the
goal is ``(compacted / masked) / (mean / max) <= 1.25``. Timed with the default number of CPU
threads and with one (small batches late in the loop pay for thread synchronisation). The halting unit's weights are drawn at
random (seeded) so that examples halt at varied steps: the timing depends only on which step
each example halts at, not on what the model has learned. Writes ``results/bench/act.json``.
"""
import statistics

import torch
from torch import nn

from ..experiments.hyper_ut import MODEL, build
from ..tasks import cpvr
from ..training import default_device
from . import time_it, write_result

BATCH, LENGTH, ROUNDS = 256, 12, 3
BENCH_MODEL = dict(MODEL, dim=128, heads=4, steps=12)


def spread_halting(model: nn.Module, x: torch.Tensor, seed: int = 0) -> None:
    """Seeded random halting weights, scaled (and the bias set) so that the batch's halting steps
    spread widely: the setting whose histogram of steps has the most entropy."""
    generator = torch.Generator().manual_seed(seed)
    unit = model.depth.halting.linear
    direction = torch.randn(unit.weight.shape, generator=generator).to(unit.weight)
    best = None
    for scale in (0.5, 1, 2, 4):
        for bias in (-2.0, -1.0, 0.0):
            with torch.no_grad():
                unit.weight.copy_(direction * scale)
                unit.bias.fill_(bias)
                steps = model(x).steps.long()
            share = torch.bincount(steps).float() / len(steps)
            entropy = -(share[share > 0] * share[share > 0].log()).sum().item()
            if best is None or entropy > best[0]:
                best = (entropy, scale, bias)
    with torch.no_grad():
        unit.weight.copy_(direction * best[1])
        unit.bias.fill_(best[2])


@torch.no_grad()
def main() -> dict:
    torch.manual_seed(0)
    device = default_device()
    model = build("ut_act", LENGTH, BENCH_MODEL).to(device).eval()
    x = cpvr.sample(BATCH, LENGTH, list(range(1, LENGTH)), seed=0)[0].to(device)
    spread_halting(model, x[:64])

    def forward(compact: bool):
        model.depth.compact = compact
        return model(x)

    masked, compacted = forward(False), forward(True)
    difference = (masked.logits - compacted.logits).abs().max().item()
    steps = masked.steps
    mean_steps, max_steps = steps.mean().item(), steps.max().item()
    ideal = mean_steps / max_steps
    timings = {}
    default_threads = torch.get_num_threads()
    for threads in sorted({1, default_threads}):
        torch.set_num_threads(threads)
        times = {"masked": [], "compacted": []}
        for _ in range(ROUNDS):  # interleaved, so that a busy machine slows both alike
            times["masked"].append(time_it(lambda: forward(False), repeats=5, warmup=1))
            times["compacted"].append(time_it(lambda: forward(True), repeats=5, warmup=1))
        masked_s, compacted_s = statistics.median(times["masked"]), statistics.median(times["compacted"])
        ratio = compacted_s / masked_s
        timings[threads] = {"threads": threads, "masked_s": masked_s, "compacted_s": compacted_s, "compacted_over_masked": ratio,
                            "overhead_vs_ideal": ratio / ideal, "goal_met": ratio / ideal <= 1.25}
    torch.set_num_threads(default_threads)
    result = {
        "device": str(device),
        "batch": BATCH,
        "model": {k: BENCH_MODEL[k] for k in ("dim", "heads", "steps", "act_level")},
        **timings[default_threads],  # the machine's default thread count; every count measured is under "by_threads"
        "mean_steps": mean_steps,
        "max_steps": max_steps,
        "mean_over_max_steps": ideal,
        "goal_overhead_at_most": 1.25,
        "steps_histogram": torch.bincount(steps.long().cpu(), minlength=int(max_steps) + 1)[1:].tolist(),
        "max_abs_logit_difference": difference,
        "by_threads": list(timings.values()),
    }
    write_result("act", result)
    return result
