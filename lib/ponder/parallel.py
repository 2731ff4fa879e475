"""Train independent runs side by side: one worker process per core, one thread each.

The quick profile's models are tiny (width 32-64): a training step is mostly Python and small
kernels, so a second thread speeds one run up by far less than a second run beside it does
(on 2 cores, two sraven runs in parallel finish in the time of one alone). :func:`prefetch`
takes the jobs a notebook cell is about to call, trains the ones not yet in the run cache in
worker processes, and returns; the cell then makes its usual calls, which load from the cache.

>>> prefetch([partial(train_sraven, setup, profile, seed) for setup in setups])
>>> results = [train_sraven(setup, profile, seed) for setup in setups]   # all cache hits

Jobs must not share an unfinished upstream run (two workers would train it twice): train the
shared part first, as :func:`ponder.experiments.acm.prefetch` does with the base model. A worker
has one thread; every run that can be prefetched trains through :func:`train_one_thread` wherever
it runs, because the thread count changes the last bits of a sum and a run's numbers should not
depend on where it ran. With one worker :func:`prefetch` does nothing and the notebook's own
calls train the runs in turn; with a GPU the workers share it (:func:`worker_count`).
"""
import math
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from functools import partial
from multiprocessing import get_context

import torch

from .checks import check_choice, check_int
from .runs import NotCached, only_cached
from .training import cores, num_threads, train_run

Job = Callable[[], object]  # picklable: a module-level function or a functools.partial of one


GPU_WORKERS = 6  # processes sharing one GPU (see worker_count)


def worker_count() -> int:
    """Worker processes for :func:`prefetch`: ``$PONDER_WORKERS``, else the cores this process may
    use, and 1 (no workers) under torchrun, where the processes already share every run.

    With a GPU, :data:`GPU_WORKERS` (at most the cores): the models here are so small that one
    process leaves the GPU idle between its kernel launches, and several processes fill those gaps
    (``python -m ponder.bench train`` measures how much).
    """
    if int(os.environ.get("WORLD_SIZE", 1)) > 1:
        return 1
    if "PONDER_WORKERS" in os.environ:
        value = os.environ["PONDER_WORKERS"]
        return check_int("PONDER_WORKERS", int(value) if value.strip().isdigit() else value, minimum=1)
    return min(cores(), GPU_WORKERS) if torch.cuda.is_available() else cores()


def is_cached(job: Job) -> bool:
    """Whether every run ``job`` trains is already finished (it is called with training forbidden)."""
    try:
        with only_cached():
            job()
    except NotCached:
        return False
    return True


def train_one_thread(*args, **kwargs):
    """:func:`ponder.training.train_run` with one thread: for every run that :func:`prefetch` may
    train in a worker, so that its numbers are the same wherever it trained."""
    with num_threads(1):
        return train_run(*args, **kwargs)


def _unique(jobs: Sequence[Job]) -> list[Job]:
    """``jobs`` without repeats: equal partials (same function and arguments) count once."""
    seen, out = set(), []
    for job in jobs:
        key = repr((job.func, job.args, sorted(job.keywords.items()))) if isinstance(job, partial) else job
        if key not in seen:
            seen.add(key)
            out.append(job)
    return out


def _needs_training(job: Job, keep_going: bool) -> bool:
    """Not :func:`is_cached`; with ``keep_going`` a job that fails even to look up its runs counts as
    one to train, so that its worker reports the error beside the others."""
    try:
        return not is_cached(job)
    except Exception:
        if keep_going:
            return True
        raise


def describe(job: Job) -> str:
    """A job in one short line: ``train_cpvr('hyper_act', 'quick', 1)``, keywords after the arguments."""
    if not isinstance(job, partial):
        return getattr(job, "__name__", repr(job))
    args = [repr(a) for a in job.args] + [f"{k}={v!r}" for k, v in sorted(job.keywords.items())]
    return f"{job.func.__name__}({', '.join(args)})"


def _train(job: Job) -> float:
    """Run ``job`` on one thread; its wall-clock seconds."""
    start = time.perf_counter()
    with num_threads(1):
        job()
    return time.perf_counter() - start


Report = Callable[[int, int, str, float], object]  # (done, pending, describe(job), its seconds)


def prefetch(jobs: Sequence[Job], workers: int | None = None, keep_going: bool = False, report: Report | None = None,
             first: Sequence[Job] = (), then: Sequence[Job] = ()) -> int | list[str]:
    """Train the jobs whose runs are not cached, ``workers`` at a time (default :func:`worker_count`),
    each in its own process with one thread. Returns how many jobs were trained; with ``keep_going``
    a failing job does not stop the others, and what is returned is one line per failure.
    ``report(done, pending, describe(job), seconds)`` is called as each job ends (``seconds`` is
    NaN for a job that failed).

    ``first`` and ``then``: runs that others build on, and those others. The ``first`` jobs start
    before everything else; the ``then`` jobs start only once every ``first`` job has ended, and
    ahead of the ``jobs`` not yet started, so no core waits for a shared run (ACM's base models)
    while independent jobs are left.
    """
    workers = worker_count() if workers is None else check_int("workers", workers, minimum=1)
    first, then, rest = ([job for job in _unique(part) if _needs_training(job, keep_going)] for part in (first, then, jobs))
    pending = len(first) + len(then) + len(rest)
    if workers == 1 or pending < 2:
        return [] if keep_going else 0  # nothing to gain: the caller's own calls train in turn
    failures, done, first_left = [], 0, len(first)
    ready = deque(first + (rest if first else then + rest))
    with ProcessPoolExecutor(min(workers, pending), mp_context=get_context("spawn")) as pool:
        running: dict = {}
        while ready or running:
            while ready and len(running) < workers:
                job = ready.popleft()
                running[pool.submit(_train, job)] = job
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                job, seconds, done = running.pop(future), math.nan, done + 1
                try:
                    seconds = future.result()
                except Exception as error:  # noqa: BLE001 -- with keep_going: reported, the others still train
                    if not keep_going:
                        raise
                    failures.append(f"{describe(job)}: {type(error).__name__}: {error}".splitlines()[0])
                if report is not None:
                    report(done, pending, describe(job), seconds)
                if any(job is f for f in first):
                    first_left -= 1
                    if first_left == 0:
                        ready.extendleft(reversed(then))
    return failures if keep_going else pending


def prefetch_notebook(jobs: dict[str, Sequence[Job]], notebook: str) -> int:
    """:func:`prefetch` the jobs of ``notebook`` in ``jobs`` (``{notebook: its jobs}``)."""
    return prefetch(jobs[check_choice("notebook", notebook, tuple(jobs))])


def train_notebooks(jobs: dict[str, Sequence[Job]], prefetch_notebook: Callable[[str], object]) -> None:
    """Every job of every notebook (``make results``): ``prefetch_notebook(name)``, then each of its
    jobs in turn, which loads what the workers trained and trains whatever they left."""
    for notebook, runs in jobs.items():
        prefetch_notebook(notebook)
        for job in runs:
            job()
