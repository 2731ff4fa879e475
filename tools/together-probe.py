"""Seeds trained together against each trained alone, the loss of every step: the case of
``tests/test_gpu.py::test_seeds_trained_together_follow_each_alone_on_cuda`` outside pytest.

On the H200 (2026-11-27) that test failed for hyper_act under pytest (5.7e-4 apart at step 20, after
the halting unit's hold ends), while this replay agreed to 5e-7 at every step (figures/gpu/RUN.md).
Prints one JSON line per setting: each seed's largest relative loss difference and the first step
where it passes 1e-4 (``null``: none).

    PYTHONPATH=lib python3 tools/together-probe.py KIND [REPEATS] [--deterministic]

KIND: ut_act or hyper_act; REPEATS (default 1) replays it that many times; ``--deterministic``
adds a replay under ``torch.use_deterministic_algorithms(True)`` (ops without a deterministic
kernel warn). Float32 throughout (TF32 off), on
CUDA when there is one.
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


def replay(kind: str) -> list[list[float]]:
    """Per seed, the relative difference of the together run's loss from the alone run's, each step."""
    cfg = dataclasses.replace(test_gpu.TOGETHER_CFG, log_every=1)
    make = partial(hyper_ut.build, kind, test_gpu.LENGTH, dict(test_gpu.SMOKE, steps=6))
    batches, loss = test_gpu.cpvr_parts(kind)[1], hyper_ut.loss_fn(test_gpu.SMOKE["tau"])
    models, members = test_gpu.seed_group(make, batches, cfg)
    alone = [test_gpu.losses(training.train(copy.deepcopy(m), loss, member.batches, member.cfg)) for m, member in zip(models, members)]
    together = [test_gpu.losses(t) for t in ensemble.train_together(models, loss, members)]
    return [[abs(t - a) / abs(a) for a, t in zip(a_, t_)] for a_, t_ in zip(alone, together)]


def main(argv: list[str]) -> None:
    kind, repeats = argv[0], int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before CUDA starts: cuBLAS's deterministic workspace
    device = "cuda" if torch.cuda.is_available() else "cpu"
    test_gpu.keep_tf32_off(device=device)  # as the test's fixture does
    settings = [("default", False)] * repeats + ([("deterministic", True)] if "--deterministic" in argv else [])
    for name, deterministic in settings:
        torch.use_deterministic_algorithms(deterministic, warn_only=True)  # an op with no deterministic kernel warns
        differences = replay(kind)
        print(json.dumps({"kind": kind, "setting": name, "device": device, "max": [max(d) for d in differences],
                          "first_step_over_1e-4": [next((s + 1 for s, v in enumerate(d) if v > 1e-4), None) for d in differences]}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
