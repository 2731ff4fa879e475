"""What pinning the numerics costs: training steps pinned against unpinned (``ponder.numerics``).

A process chooses its SIMD code paths (MKL's branch, ATen's capability, oneDNN's ISA) when torch
loads, so each case runs in a fresh process: ``pinned`` with the project's pins (the default),
``unpinned`` with ``PONDER_UNPINNED=1`` (the library's own choice for this CPU). Both time the
same training steps of every family of :func:`ponder.bench.steps.families` on one thread
(:func:`ponder.bench.train.time_steps`). The two processes run one after the other in each of
``ROUNDS`` rounds, so load changes hit both alike; the result is the per-round ratio
``pinned / unpinned`` of seconds per step, with its mean and standard error over rounds.

``python -m ponder.bench numerics`` writes ``results/bench/numerics.json``.
"""

import json
import os
import subprocess
import sys

import numpy as np

from ..ledger.verdicts import Estimate
from . import write_result

ROUNDS, STEPS = 5, 30
CASES = ("pinned", "unpinned")


def environment(case: str) -> dict[str, str]:
    """The environment of a worker process for ``case``: the pins chosen by ``import ponder``
    (pinned), or ``PONDER_UNPINNED=1`` (unpinned); the pins' variables are removed either way,
    so that neither inherits the caller's choice."""
    from ..numerics import PINS

    env = {
        k: v for k, v in os.environ.items() if k not in PINS and k not in ("PONDER_UNPINNED", "PONDER_UNPINNED_SAID")
    }
    return env | ({"PONDER_UNPINNED": "1", "PONDER_UNPINNED_SAID": "1"} if case == "unpinned" else {})


def time_case(case: str, profile: str = "quick", steps: int = STEPS) -> dict[str, float]:
    """Seconds per training step of every family in a fresh process for ``case``: ``{family: s}``."""
    out = subprocess.run(
        [sys.executable, "-m", "ponder.bench.numerics", profile, str(steps)],
        env=environment(case),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def summarize(pinned: list[float], unpinned: list[float]) -> dict:
    """Per-round ratios ``pinned / unpinned`` with their mean and standard error."""
    ratios = np.asarray(pinned) / np.asarray(unpinned)
    estimate = Estimate.of(ratios)
    return {"ratios": ratios.tolist(), "mean": estimate.mean, "se": estimate.se}


def main(rounds: int = ROUNDS) -> dict:
    times = {case: [] for case in CASES}
    for _ in range(rounds):
        for case in CASES:
            times[case].append(time_case(case))
    families = {
        name: summarize([r[name] for r in times["pinned"]], [r[name] for r in times["unpinned"]])
        for name in times["pinned"][0]
    }
    for name, row in families.items():
        print(f"{name}: pinned / unpinned = {row['mean']:.3f} ± {row['se']:.3f} over {rounds} rounds", flush=True)
    result = {"rounds": rounds, "steps": STEPS, "families": families, "seconds_per_step": times}
    write_result("numerics", result)
    return result


def _worker(profile: str, steps: int) -> None:
    """In a fresh process (``import ponder``, run first as this module's package, has pinned or
    not before torch loads): print ``{family: seconds per step}`` as one JSON line."""
    from ..runner.training import num_threads
    from .steps import families
    from .train import time_steps

    with num_threads(1):
        print(
            json.dumps(
                {name: time_steps(profile, name, steps=steps)["step_s"] for name in families(profile, variants=False)}
            )
        )


if __name__ == "__main__":
    _worker(sys.argv[1], int(sys.argv[2]))
