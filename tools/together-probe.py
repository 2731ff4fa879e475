"""Seeds trained together against each trained alone, the loss of every step: the case of
``tests/test_gpu.py::test_seeds_trained_together_follow_each_alone_on_cuda`` outside pytest.

On the H200 (2026-11-27) that test failed for hyper_act under pytest (5.7e-4 apart at step 20, after
the halting unit's hold ends), while a replay outside pytest agreed to 5e-7 at every step
(figures/gpu/RUN.md). Prints one JSON line per replay: each seed's largest relative loss difference
together against alone (``max``) and the first step where it passes 1e-4 (``null``: none); from
the second replay of a kind on, also how far its alone and its together losses moved from the
first replay's (``alone_drift``, ``together_drift``: nonzero means the device does not repeat
itself, and a difference of together against alone may be that alone).

    PYTHONPATH=lib python3 tools/together-probe.py KIND[,KIND...] [REPEATS] [--deterministic]

KIND: ut_act or hyper_act, several in the order given within one process (as pytest runs the
parametrized cases); REPEATS (default 1) replays each that many times. The replays run as the test
does: float32 (TF32 off), PyTorch's default kernels and cuBLAS's default workspace, on CUDA when
there is one. ``--deterministic`` replays under ``torch.use_deterministic_algorithms(True)``
instead (an op without a deterministic kernel warns); cuBLAS reads its deterministic workspace
setting when CUDA starts, so that run needs ``CUBLAS_WORKSPACE_CONFIG=:4096:8`` in its environment.
"""
import ponder  # noqa: F401  (before torch: pinned numerics)
import copy
import dataclasses
import json
import os
import sys
from functools import partial
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_gpu  # noqa: E402  (its C-PVR setup: the batches, the seeds, the hold)
from ponder import ensemble, training  # noqa: E402
from ponder.experiments import hyper_ut  # noqa: E402

DETERMINISTIC_WORKSPACE = ":4096:8"


def replay(kind: str) -> tuple[list[list[float]], list[list[float]]]:
    """``(alone, together)``: each seed's loss at every step, trained alone and with the others."""
    cfg = dataclasses.replace(test_gpu.TOGETHER_CFG, log_every=1)
    make = partial(hyper_ut.build, kind, test_gpu.LENGTH, dict(test_gpu.SMOKE, steps=6))
    batches, loss = test_gpu.cpvr_parts(kind)[1], hyper_ut.loss_fn(test_gpu.SMOKE["tau"])
    models, members = test_gpu.seed_group(make, batches, cfg)
    alone = [test_gpu.losses(training.train(copy.deepcopy(m), loss, member.batches, member.cfg)) for m, member in zip(models, members)]
    return alone, [test_gpu.losses(t) for t in ensemble.train_together(models, loss, members)]


def relative_differences(a: list[float], b: list[float]) -> list[float]:
    """The relative difference of ``b`` from ``a``, step by step."""
    return [abs(y - x) / abs(x) for x, y in zip(a, b)]


def largest_difference(a: list[float], b: list[float]) -> float:
    """The largest relative difference of ``b`` from ``a``, step by step."""
    return max(relative_differences(a, b))


def report(kind: str, setting: str, device: str, alone: list[list[float]], together: list[list[float]], first=None) -> dict:
    """One replay's JSON line; ``first``: the kind's first replay ``(alone, together)`` to measure drift against."""
    line = {"kind": kind, "setting": setting, "device": device,
            "max": [largest_difference(a, t) for a, t in zip(alone, together)],
            "first_step_over_1e-4": [next((s + 1 for s, d in enumerate(relative_differences(a, t)) if d > 1e-4), None) for a, t in zip(alone, together)]}
    if first is not None:
        line["alone_drift"] = [largest_difference(a0, a) for a0, a in zip(first[0], alone)]
        line["together_drift"] = [largest_difference(t0, t) for t0, t in zip(first[1], together)]
    return line


def main(argv: list[str]) -> None:
    kinds, repeats = argv[0].split(","), int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
    deterministic = "--deterministic" in argv
    if deterministic and os.environ.get("CUBLAS_WORKSPACE_CONFIG") != DETERMINISTIC_WORKSPACE:
        raise SystemExit(f"--deterministic needs CUBLAS_WORKSPACE_CONFIG={DETERMINISTIC_WORKSPACE} in the environment (cuBLAS reads it when CUDA starts)")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    test_gpu.keep_tf32_off(device=device)  # as the test's fixture does
    torch.use_deterministic_algorithms(deterministic, warn_only=True)
    for kind in kinds:
        first = None
        for _ in range(repeats):
            alone, together = replay(kind)
            print(json.dumps(report(kind, "deterministic" if deterministic else "default", device, alone, together, first)), flush=True)
            first = first or (alone, together)


if __name__ == "__main__":
    main(sys.argv[1:])
