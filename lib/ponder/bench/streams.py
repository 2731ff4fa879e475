"""Wall-clock of a C-PVR run's data: drawn step by step, against read from its training stream.

At ``quick``'s C-PVR sizes (batch 64, length 12, hops 1-3, a decoy chain: :mod:`ponder.tasks.cpvr_decoys`),
one thread, interleaved rounds: drawing a batch with the sampler (what every run did before
:mod:`ponder.runner.streams`), reading it from the stream (what a run does now, its chunk in memory),
and, for scale, a training step of UT+ACT and of the Transformer (forward, backward, clipping,
AdamW; random initial weights, which sets UT+ACT's ponder steps as at the start of training). Once,
outside the rounds: drawing a whole chunk into the data cache, and reading it back from disk (what
every other run of the same seed pays instead). Also in the rounds: drawing a batch at the ``gpu``
profile's sizes (batch 128, length 16, hops 1-4), the host's work per step of a ``gpu`` C-PVR run
without its stream (compare the GPU's step time in ``python -m ponder.bench train``). Reported as
medians and ratios of the same run; the models stay on the CPU.
"""

import os
import tempfile
import time
from unittest import mock

from ..profiles import by_profile
from ..runner import streams
from ..runner.timing import median, time_rounds
from ..runner.training import TrainConfig, make_optimizer, num_threads, optimizer_step
from ..studies.hyper_ut import cpvr as hyper_ut
from . import write_result


def measure(repeats: int = 20) -> dict:
    sizes, gpu = by_profile(hyper_ut.SIZES, "quick"), by_profile(hyper_ut.SIZES, "gpu")
    length, hops, batch = sizes["length"], sizes["train_hops"], sizes["batch_size"]
    cfg = TrainConfig(steps=sizes["steps"], batch_size=batch, seed=0)
    models = {kind: hyper_ut.build(kind, length, sizes["model"]).train() for kind in ("ut_act", "transformer")}
    optimizers = {kind: make_optimizer(model, cfg) for kind, model in models.items()}
    loss = hyper_ut.loss_fn(sizes["model"]["tau"])
    step = iter(range(10**9))
    with tempfile.TemporaryDirectory() as cache, mock.patch.dict(os.environ, PONDER_DATA_CACHE=cache), num_threads(1):
        stream = hyper_ut.training_batches(cfg, length, hops)
        begin = time.perf_counter()
        data = stream(0)
        draw_chunk = time.perf_counter() - begin
        streams._chunk.cache_clear()
        begin = time.perf_counter()
        stream(0)
        read_chunk = time.perf_counter() - begin
        times = time_rounds(
            {
                "draw a batch": lambda: hyper_ut.sample(
                    batch, length, list(hops), seed=streams.seed_of(0, next(step) % streams.CHUNK)
                ),
                "read a batch from the stream": lambda: stream(next(step) % streams.CHUNK),
                "draw a gpu-size batch": lambda: hyper_ut.sample(
                    gpu["batch_size"], gpu["length"], list(gpu["train_hops"]), seed=next(step)
                ),
                **{
                    f"{kind} training step": (
                        lambda kind=kind: optimizer_step(
                            loss(models[kind], data), models[kind], optimizers[kind], cfg.grad_clip
                        )
                    )
                    for kind in models
                },
            },
            repeats,
        )
    ms = {name: 1e3 * median(t) for name, t in times.items()}
    draw = ms["draw a batch"]
    return {
        "threads": 1,
        "repeats": repeats,
        "batch": batch,
        "length": length,
        "hops": list(hops),
        "chunk_steps": streams.CHUNK,
        "median_ms": ms,
        "read / draw": ms["read a batch from the stream"] / draw,
        **{f"draw / {kind} step": draw / ms[f"{kind} training step"] for kind in models},
        "gpu-size draw / draw": ms["draw a gpu-size batch"] / draw,
        "drawing a chunk into the cache, s": draw_chunk,
        "reading a chunk back from disk, s": read_chunk,
    }


def main() -> None:
    write_result("streams", measure())
