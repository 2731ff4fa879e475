"""Wall-clock of one ACM layer against the dense MLP it replaces (the acm-9 figure; paper Fig. 9).

A ViT-Ti-sized MLP (width 192, hidden 768) on 64 images × 65 tokens, and an ACM of 4 learners
``192 -> 192 -> 192`` (together the MLP's MACs) with its gate (hidden 16, ~1 % of the cost).
As in the paper, the gate runs but its choices are replaced by random ones whose mean hits a
target number of learners, so every case executes a known fraction of the MACs:

* ``naive``   — every learner runs, unused hidden units are zeroed (:meth:`Learners.masked`);
* ``grouped`` — tokens sorted by ``k``, one matrix-product pair per group (:meth:`Learners.grouped`).

All cases are measured in the same run (medians of repeated calls, interleaved) and reported as
ratios to the dense MLP of that run. On the GPU when there is one, else on the CPU, with one thread
and with torch's default (see :func:`thread_counts`).
"""

import torch

from ..models.acm import Gate, Learners
from ..models.transformer import MLP
from ..training import default_device, num_threads
from . import time_interleaved, write_result

WIDTH, HIDDEN, N, GATE_HIDDEN = 192, 768, 4, 16
IMAGES, TOKENS = 64, 65
FRACTIONS = (0.25, 0.4, 0.5, 0.6, 0.75, 1.0)


def random_choices(tokens: int, fraction: float, n: int, generator: torch.Generator) -> torch.Tensor:
    """``[tokens]`` learner counts in ``0..n`` whose mean is ``fraction · n`` (floor/ceil mixture)."""
    target = fraction * n
    low = int(target)
    extra = torch.rand(tokens, generator=generator) < (target - low)
    return (low + extra.long()).clamp(max=n)


def thread_counts() -> list[int]:
    """CPU thread counts to measure: 1 and torch's default. On a shared machine every multi-threaded op
    can wait for a descheduled thread (measured here: ~16 ms even for a 0.4 ms product), which swamps small
    layers; the single-threaded run shows the work itself. On the GPU: the default only."""
    default = torch.get_num_threads()
    return [default] if torch.cuda.is_available() or default == 1 else [1, default]


def measure(repeats: int = 30, images: int = IMAGES, fractions=FRACTIONS, threads: int | None = None) -> dict:
    """Time dense, naive and grouped at each fraction of learners; ratios to the dense MLP of the same rounds."""
    with num_threads(threads or torch.get_num_threads()):
        return _measure(repeats, images, fractions)


def _measure(repeats: int, images: int, fractions) -> dict:
    device = default_device()
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    z = torch.randn(images * TOKENS, WIDTH, device=device)
    mlp = MLP(WIDTH, HIDDEN).to(device).eval()
    learners = Learners(WIDTH, WIDTH, N, HIDDEN // N).to(device).eval()
    gate = Gate(WIDTH, N + 1, GATE_HIDDEN).to(device).eval()
    result = {"device": str(device), "threads": torch.get_num_threads(), "width": WIDTH, "hidden": HIDDEN, "learners": N, "tokens": len(z), "repeats": repeats,
              "gate_macs_fraction": gate.macs / (2 * WIDTH * HIDDEN), "cases": []}
    with torch.inference_mode():
        for fraction in fractions:
            k = random_choices(len(z), fraction, N, generator).to(device)
            mask = (torch.arange(N, device=device) < k[:, None]).float()
            t = time_interleaved({
                "dense": lambda: mlp(z),
                "naive": lambda: (gate(z), learners.masked(z, mask)),
                "grouped": lambda: (gate(z), learners.grouped(z, k)),
            }, repeats, warmup=2)
            result["cases"].append({
                "fraction": fraction, "mean_learners": k.float().mean().item(), "dense_s": t["dense"],
                "naive_s": t["naive"], "naive_ratio": t["naive"] / t["dense"],
                "grouped_s": t["grouped"], "grouped_ratio": t["grouped"] / t["dense"],
            })
    return result


def main(repeats: int = 30) -> dict:
    result = {"runs": [measure(repeats, threads=t) for t in thread_counts()]}
    write_result("acm", result)
    return result
