"""One sraven run of the `gpu` profile's model with another step count, its scores and loss curve
as one JSON line: the probe that sized that profile (figures/gpu/RUN.md).

    PONDER_RESULTS=/tmp/probe PYTHONPATH=lib python3 tools/sraven-probe.py KIND STEPS [BATCH [WARMUP]]

KIND is an attention kind of ``ponder.experiments.hyla.KINDS`` (softmax, linear, hyla, ...); BATCH
defaults to the profile's (512; the paper's is 128), WARMUP (steps of linear warmup) to the
profile's (150; the paper's grid has 1,000 and 3,000 at batch 128). The run is cached like any
other, so a probe cut off by a lease's end resumes in the next. ``tools/gpu-slice.sh``'s ``sraven-batch``
step runs three of them side by side: the same 10.24M instances in batches of 128 and 256 (RUN.md, session 38).
"""
import ponder  # noqa: F401  (before torch: pinned numerics)
import json
import sys
import time

from ponder.experiments import hyla

kind, steps = sys.argv[1], int(sys.argv[2])
changes = dict(zip(("batch_size", "warmup_steps"), map(int, sys.argv[3:5])))
setup = hyla.sraven_setup("gpu", kind=kind, steps=steps, **changes)
begin = time.perf_counter()
_, metrics = hyla.train_sraven_once(setup, "gpu", 0)
history = metrics["history"]
curve = [(h["step"], round(h["loss"], 4)) for h in history[:: max(1, len(history) // 20)]]
scores = {k: v for k, v in metrics.items() if k != "history"}
print(json.dumps({"kind": kind, "steps": steps, "instances": setup.instances, "seconds": round(time.perf_counter() - begin, 1), **scores, "curve": curve}), flush=True)
