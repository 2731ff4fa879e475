"""Does ACT really save time? Masked vs compacted ACT: a UT+ACT forward pass, and training steps.

``python -m ponder.bench act`` builds the C-PVR UT+ACT classifier of the Hyper-UT experiments
(``ponder.models.kinds.build``), runs it on a C-PVR batch of 256 whose examples halt at
different steps, and times in the same run

* **masked**: every step on the whole batch, halted examples' weights masked to zero (the loop
  runs until the last example halts);
* **compacted**: every step only on the examples still running, gathered and scattered back
  (``ponder.models.act`` with ``compact=True``).

The two give the same outputs (checked here and in ``tests/test_act.py``). If a step's cost is
proportional to the examples it runs on, ``compacted / masked = mean steps / max steps``; the
goal is ``(compacted / masked) / (mean / max) <= 1.25``. Timed with the default number of CPU
threads and with one (small batches late in the loop pay for thread synchronisation). The halting
unit's weights are drawn at random (seeded) so that examples halt at varied steps: the timing
depends only on which step each example halts at, not on what the model has learned.

**Training.** The same comparison for whole training steps (forward, backward, clipping, AdamW;
``ponder.runner.training``) of the C-PVR ACT models at the ``quick`` profile's sizes, one thread, with
every example running all ``T`` steps, as at a deep start (what compaction costs when nothing
halts early), and with the halting spread as above. The learning rate is zero, so every timed
step does the same work. Writes ``results/bench/act.json``.
"""

import statistics

import torch
from torch import nn

from ..models.kinds import build
from ..profiles import by_profile
from ..runner.timing import time_interleaved, time_it
from ..runner.training import TrainConfig, cores, default_device, make_optimizer, num_threads, optimizer_step
from ..studies.hyper_ut.cpvr import loss_fn
from ..studies.hyper_ut.sizes.cpvr import MODEL, SIZES
from ..tasks import cpvr
from . import write_result

BATCH, LENGTH, ROUNDS = 256, 12, 3
BENCH_MODEL = dict(MODEL, dim=128, heads=4, steps=12)
TRAIN_KINDS, TRAIN_PROFILE = ("ut_act", "hyper_act"), "quick"


def spread_halting(model: nn.Module, x: torch.Tensor, seed: int = 0) -> None:
    """Set the halting unit so that the batch's examples halt at steps spread evenly over ``1..T``.

    Each example gets a target step ``N_i`` (seeded, uniform over ``1..T``) and the unit is fitted
    by least squares so that its halting probability on the example's state at every step is about
    ``1 / (N_i - 1/2)``: with a constant probability ``p`` ACT halts after ``ceil(0.99 / p)``
    steps. Least squares shrinks the fitted logits towards their mean; of a few stretches of the
    fit around that mean, the one whose histogram of steps has the most entropy is kept.
    """
    generator = torch.Generator().manual_seed(seed)
    unit, t = model.depth.halting.linear, model.core.max_steps
    target = torch.randint(1, t + 1, (x.shape[0],), generator=generator).float().to(x.device)
    p = (1 / (target - 0.5)).clamp(max=0.999)
    h, pooled = model.embedding(x), []
    for n in range(t):  # the example's pooled state at every step should give the same p_i
        h = model.core.step(h, n)
        pooled.append(h.mean(dim=1))
    pooled = torch.cat(pooled)  # [T * B, D]
    design = torch.cat([pooled, torch.ones_like(pooled[:, :1])], dim=1)
    # QR ("gels", CUDA's only driver): the CPU's default "gelsy" differs in its last bits from call to call
    fit = torch.linalg.lstsq(design, torch.logit(p).repeat(t)[:, None], driver="gels").solution[:, 0]  # [D + 1]
    centre = (pooled @ fit[:-1]).mean()
    best = None
    for stretch in (1.0, 2.0, 3.0, 4.0, 6.0):  # least squares shrinks towards the mean: undo some of it
        with torch.no_grad():
            unit.weight.copy_(stretch * fit[:-1][None])
            unit.bias.fill_((fit[-1] + (1 - stretch) * centre).item())
            steps = model(x).steps.long()
        share = torch.bincount(steps).float() / len(steps)
        entropy = -(share[share > 0] * share[share > 0].log()).sum().item()
        if best is None or entropy > best[0]:
            best = (entropy, unit.weight.clone(), unit.bias.clone())
    with torch.no_grad():
        unit.weight.copy_(best[1])
        unit.bias.copy_(best[2])


@torch.no_grad()
def forward_timings() -> dict:
    """The forward pass of :data:`BENCH_MODEL`, masked and compacted, at one thread and at every core."""
    torch.manual_seed(0)
    device = default_device()
    model = build("ut_act", LENGTH, BENCH_MODEL).to(device).eval()
    x = cpvr.sample(BATCH, LENGTH, list(range(1, LENGTH)), seed=0)[0].to(device)
    spread_halting(model, x)

    def forward(compact: bool):
        model.depth.compact = compact
        return model(x)

    masked, compacted = forward(False), forward(True)
    difference = (masked.logits - compacted.logits).abs().max().item()
    steps = masked.steps
    mean_steps, max_steps = steps.mean().item(), steps.max().item()
    ideal = mean_steps / max_steps
    timings = {}
    for threads in sorted({1, cores()}):
        times = {"masked": [], "compacted": []}
        with num_threads(threads):
            for _ in range(ROUNDS):  # interleaved, so that a busy machine slows both alike
                times["masked"].append(time_it(lambda: forward(False), repeats=5, warmup=1))
                times["compacted"].append(time_it(lambda: forward(True), repeats=5, warmup=1))
        masked_s, compacted_s = statistics.median(times["masked"]), statistics.median(times["compacted"])
        ratio = compacted_s / masked_s
        timings[threads] = {
            "threads": threads,
            "masked_s": masked_s,
            "compacted_s": compacted_s,
            "compacted_over_masked": ratio,
            "overhead_vs_ideal": ratio / ideal,
            "goal_met": ratio / ideal <= 1.25,
        }
    result = {
        "device": str(device),
        "batch": BATCH,
        "model": {k: BENCH_MODEL[k] for k in ("dim", "heads", "steps", "act_level")},
        **timings[cores()],  # every core; every count measured is under "by_threads"
        "mean_steps": mean_steps,
        "max_steps": max_steps,
        "mean_over_max_steps": ideal,
        "goal_overhead_at_most": 1.25,
        "steps_histogram": torch.bincount(steps.long().cpu(), minlength=int(max_steps) + 1)[1:].tolist(),
        "max_abs_logit_difference": difference,
        "by_threads": list(timings.values()),
    }
    return result


def training_step(model: nn.Module, batch: tuple, compact: bool, tau: float):
    """One training step of ``model`` on ``batch`` with ACT masked or compacted, as a function.

    ``ponder.runner.training``'s step (fresh gradients, clipping at 1, fused AdamW) at learning rate 0,
    so that the weights, and with them the steps every example takes, stay as they are.
    """
    optimizer = make_optimizer(model, TrainConfig(steps=1, batch_size=len(batch[0])))
    for group in optimizer.param_groups:
        group["lr"] = 0.0
    loss = loss_fn(tau)

    def step():
        model.depth.compact = compact
        optimizer_step(loss(model, batch), model, optimizer, 1.0)

    return step


def train_timings(repeats: int = 10) -> list[dict]:
    """Masked vs compacted training steps of each of :data:`TRAIN_KINDS` at one thread, the halting
    at its deep start (every example runs ``T`` steps) and spread over ``1..T``."""
    sizes = by_profile(SIZES, TRAIN_PROFILE)
    length, model_cfg, device = sizes["length"], sizes["model"], default_device()
    batch = tuple(t.to(device) for t in cpvr.sample(sizes["batch_size"], length, list(sizes["train_hops"]), seed=0))
    rows = []
    for kind in TRAIN_KINDS:
        torch.manual_seed(0)
        model = build(kind, length, model_cfg).to(device).train()
        for halting in ("deep start", "spread"):
            if halting == "spread":
                with torch.no_grad():
                    spread_halting(model, batch[0])
            with torch.no_grad():
                steps = model(batch[0]).steps
            fns = {
                name: training_step(model, batch, compact, model_cfg["tau"])
                for name, compact in (("masked", False), ("compacted", True))
            }
            with num_threads(1):
                times = time_interleaved(fns, repeats=repeats, warmup=2)
            rows.append(
                {
                    "kind": kind,
                    "halting": halting,
                    "mean_steps": steps.mean().item(),
                    "max_steps": steps.max().item(),
                    "masked_s": times["masked"],
                    "compacted_s": times["compacted"],
                    "compacted_over_masked": times["compacted"] / times["masked"],
                }
            )
            print({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in rows[-1].items()}, flush=True)
    return rows


def main() -> dict:
    result = {
        **forward_timings(),
        "training": {
            "profile": TRAIN_PROFILE,
            "batch": by_profile(SIZES, TRAIN_PROFILE)["batch_size"],
            "threads": 1,
            "steps": train_timings(),
        },
    }
    write_result("act", result)
    return result
