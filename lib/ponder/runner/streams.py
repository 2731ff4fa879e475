"""Training streams: the batches a run draws step by step, drawn once and read by every run that draws them.

A training run of the experiments draws the batch of step ``s`` as ``sampler(**knobs, seed=seed_of(seed, s))``
(:func:`seed_of`): a function of the task's knobs, the run's seed and the step, nothing else. So runs of
different models on the same task and seed draw the very same batches: at ``quick`` 14 C-PVR runs of
seed 0 (the six Hyper-UT kinds, hut-10's other generator and pool, the survey's MoD, early exit and
PonderNet-UT) draw one stream, and hut-2's four depths another. Drawing is Python-bound where a sampler
builds each example by hand: a batch of 64 C-PVR examples with a decoy chain takes about a sixth of
a UT+ACT training step on one core, and at the ``gpu`` profile's sizes (batch 128, length 16) longer
than a training step on the GPU (``python -m ponder.bench streams``).

:func:`batches` draws a stream once, in chunks of :data:`CHUNK` steps, each a ``datasets`` data set in
the data cache (Arrow, fingerprinted by the sampler, its ``version``, the knobs, the seed and the
chunk), and hands out the batches read back from it: the same tensors, bit for bit, as drawing them
(tested). :func:`chunk_jobs` lets :mod:`ponder.runner.parallel` draw the chunks on every core before the
runs that read them start; two processes that need a chunk at once draw it once (``datasets`` locks
the cache while one of them writes it). A process keeps the last chunks it read in memory.
"""

import importlib
import math
import os
from collections.abc import Callable
from functools import lru_cache, partial

import numpy as np
import torch

from ..checks import check_int

CHUNK = 500  # steps per data set (fewer for streams of fewer steps): a run reads the chunks it needs


def seed_of(seed: int, step: int) -> int:
    """The sampler's seed for the batch of ``step`` in a run of ``seed`` (every experiment's convention)."""
    return seed * 1_000_003 + step


def batches(
    sampler: str, knobs: dict, seed: int, steps: int, version: str
) -> Callable[[int], tuple[torch.Tensor, ...]]:
    """``batch(step)``: the tuple of tensors that ``sampler(**knobs, seed=seed_of(seed, step))`` returns,
    read from the cached stream of ``steps`` steps, for ``step`` in ``0 .. steps - 1``.

    ``sampler`` names an importable function (``"package.module:function"``) that returns a tuple of
    tensors whose shapes do not depend on the seed; ``knobs`` its other arguments (ints, floats,
    strings, tuples); ``version`` the version of its draws (bump it when they change: it is in the
    fingerprint, with everything else).
    """
    chunk, key = _key(sampler, knobs, seed, steps, version)

    def batch(step: int) -> tuple[torch.Tensor, ...]:
        index, offset = divmod(check_int("step", step, minimum=0, maximum=steps - 1), chunk)
        return tuple(column[offset].clone() for column in _chunk(*key, chunk, index))  # a run may write to its batch

    return batch


def chunk_jobs(sampler: str, knobs: dict, seed: int, steps: int, version: str) -> list[Callable[[], None]]:
    """One job per chunk of the stream of :func:`batches`, which draws it into the data cache: for
    :func:`ponder.runner.parallel.plan` to draw a stream on every core before the runs that read it
    (:func:`is_drawn` tells whether a chunk is there already)."""
    chunk, key = _key(sampler, knobs, seed, steps, version)
    return [partial(draw, *key, chunk, index) for index in range(math.ceil(steps / chunk))]


def is_chunk(job) -> bool:
    """Whether ``job`` is one of :func:`chunk_jobs`."""
    return isinstance(job, partial) and job.func is draw


def draw(sampler: str, knobs: tuple, seed: int, version: str, chunk: int, index: int) -> None:
    """Draw chunk ``index`` into the data cache, unless it is there."""
    _dataset(sampler, knobs, seed, version, chunk, index)


def _key(sampler: str, knobs: dict, seed: int, steps: int, version: str) -> tuple[int, tuple]:
    """The chunk length of a stream of ``steps`` steps, and the rest of what names a stream, hashable."""
    chunk = min(CHUNK, check_int("steps", steps, minimum=1))
    return chunk, (
        sampler,
        tuple(sorted((name, _frozen(value)) for name, value in knobs.items())),
        check_int("seed", seed, minimum=0),
        version,
    )


def _frozen(value):
    """A knob as something hashable: lists become tuples."""
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


def _reader(sampler: str, knobs: tuple, seed: int, version: str, chunk: int, index: int):
    """The ``datasets`` reader of the chunk in the data cache (building it draws nothing)."""
    from datasets.io.generator import GeneratorDatasetInputStream

    from ..paths import data_cache_dir

    gen_kwargs = {"sampler": sampler, "knobs": knobs, "seed": seed, "version": version, "chunk": chunk, "index": index}
    return GeneratorDatasetInputStream(generator=_rows, gen_kwargs=gen_kwargs, cache_dir=str(data_cache_dir()))


def is_drawn(job) -> bool:
    """Whether the chunk of a job of :func:`chunk_jobs` is in the data cache already."""
    reader = _reader(*job.args)
    return os.path.exists(os.path.join(reader.builder.cache_dir, "dataset_info.json"))


def _dataset(sampler: str, knobs: tuple, seed: int, version: str, chunk: int, index: int):
    """The chunk as a ``datasets.Dataset``, drawn first if the data cache lacks it."""
    return _reader(sampler, knobs, seed, version, chunk, index).read()


@lru_cache(maxsize=8)
def _chunk(sampler: str, knobs: tuple, seed: int, version: str, chunk: int, index: int) -> tuple[torch.Tensor, ...]:
    """The batches of steps ``index * chunk ... (index + 1) * chunk - 1``: per tensor of a batch,
    ``[chunk, *shape]``."""
    columns = _dataset(sampler, knobs, seed, version, chunk, index).with_format("numpy")[:]
    return tuple(
        torch.from_numpy(np.ascontiguousarray(columns[f"t{i}"])).reshape(chunk, *columns[f"shape{i}"][0])
        for i in range(len(columns) // 2)
    )


def _rows(sampler: str, knobs: tuple, seed: int, version: str, chunk: int, index: int):
    """Generator for ``datasets``: one row per step of chunk ``index``, two columns per tensor of its
    batch: its values flattened and its shape."""
    module, function = sampler.split(":")
    sample = getattr(importlib.import_module(module), function)
    for step in range(index * chunk, (index + 1) * chunk):
        tensors = sample(**dict(knobs), seed=seed_of(seed, step))
        yield {
            name: value
            for i, t in enumerate(tensors)
            for name, value in ((f"t{i}", t.reshape(-1).numpy()), (f"shape{i}", list(t.shape)))
        }
