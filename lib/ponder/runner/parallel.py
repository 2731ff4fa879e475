"""Train independent runs side by side: one worker process per core, one thread each.

The quick profile's models are tiny (width 32-64): a training step is mostly Python and small
kernels, so a second thread speeds one run up by far less than a second run beside it does
(on 2 cores, two sraven runs in parallel finish in the time of one alone). :func:`prefetch`
takes the runs a notebook cell is about to read (declared: :mod:`ponder.runner.specs`), trains the ones not yet in
the run cache in worker processes, and returns; the cell then makes its usual calls, which load from the cache.

>>> runs = [hyla.tuned("sraven", setup, profile, seed) for setup in setups]
>>> prefetch(runs)
>>> results = [run() for run in runs]   # all cache hits

:func:`plan` orders them from the specs and the run cache alone: what a run is chosen on or builds on first,
and it once they are there. A worker has one thread, and every run declared ``one_thread`` trains on one
thread wherever it runs, because the thread count changes the last bits of a sum and a run's numbers should
not depend on where it ran. With one worker :func:`prefetch` does nothing and the notebook's own
calls train the runs in turn; with a GPU the workers share it (:func:`worker_count`), and with
several GPUs each worker takes one of them in turn (:func:`_take_gpu`).
"""

import ctypes
import heapq
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from functools import partial
from multiprocessing import get_context

import torch

from ..checks import check_choice, check_int
from . import streams
from .specs import Chosen, Spec, declared
from .training import cores, num_threads

Job = Callable[
    [], object
]  # picklable: a declared run (ponder.runner.specs), a module-level function or a partial of one


GPU_WORKERS = 6  # processes sharing one GPU (see worker_count)


def gpu_count() -> int:
    """The CUDA devices this process sees (0 without CUDA)."""
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def worker_count() -> int:
    """Worker processes for :func:`prefetch`: ``$PONDER_WORKERS``, else the cores this process may
    use, and 1 (no workers) under torchrun, where the processes already share every run.

    With GPUs, :data:`GPU_WORKERS` per GPU (at most the cores): the models here are so small that
    one process leaves a GPU idle between its kernel launches, and several processes fill those gaps
    (``python -m ponder.bench train`` measures how much).
    """
    if int(os.environ.get("WORLD_SIZE", 1)) > 1:
        return 1
    if "PONDER_WORKERS" in os.environ:
        value = os.environ["PONDER_WORKERS"]
        return check_int("PONDER_WORKERS", int(value) if value.strip().isdigit() else value, minimum=1)
    return min(cores(), GPU_WORKERS * gpu_count()) if gpu_count() else cores()


def is_cached(job: Job) -> bool:
    """Whether what ``job`` makes is there already, read from the caches alone: a declared run
    (:mod:`ponder.runner.specs`) in the run cache, a chunk of a training stream in the data cache; any other job
    (a function) is never, so it always runs."""
    if isinstance(job, Chosen):
        return job.ready and job.spec().done
    if isinstance(job, Spec):
        return job.done
    return streams.is_drawn(job) if streams.is_chunk(job) else False


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
    """A job in one short line: ``train_cpvr('hyper_act', 'quick', 1)``, keywords after the arguments; a declared
    run by its name, seed and key (``hut/cpvr/ut_act, seed 1, 3fa2c1d09b7e4410``), a chosen one by its label."""
    if isinstance(job, Chosen):
        return job.label
    if isinstance(job, Spec):
        seed = job.config.get("train", {}).get("seed")
        return job.name + (f", seed {seed}" if seed is not None else "") + f", {job.run.key}"
    if not isinstance(job, partial):
        return getattr(job, "__name__", repr(job))
    args = [repr(a) for a in job.args] + [f"{k}={v!r}" for k, v in sorted(job.keywords.items())]
    return f"{job.func.__name__}({', '.join(args)})"


def _train(job: Job) -> None:
    """Run ``job`` on one thread (its result stays in the run cache)."""
    with num_threads(1):
        job()


Report = Callable[[int, int, str, float], object]  # (done, pending, describe(job), its seconds)
Group = tuple[Sequence[Job], Sequence[Job]]  # (shared upstream jobs, the jobs built on them)


def key(job: Job) -> object:
    """What makes two jobs the same: declared runs by their run (:attr:`ponder.runner.specs.Spec.key`), equal partials
    (same function and arguments) as one job."""
    if declared(job):
        return job.key
    return repr((job.func, job.args, sorted(job.keywords.items()))) if isinstance(job, partial) else job


def plan(
    jobs: Sequence[Job], after: Sequence[Group] = (), keep_going: bool = False
) -> tuple[list[Job], list[set[int]]]:
    """The jobs to train, in the order they should start, and for each the positions of those it waits for.

    Only jobs not :func:`is_cached` count, each once. First the upstream jobs of every group of
    ``after`` (of a group whose jobs are all cached, none: nothing to draw or train for it), then each group's
    jobs built on them (waiting for that group's upstream), then ``jobs``. A
    declared run is planned from its spec and the run cache alone (:mod:`ponder.runner.specs`): a run chosen on
    others whose runs are not all finished, or built on others' models, waits for them, planned before it.
    """
    order, needs, position, cached = [], [], {}, set()

    def add(job: Job, waits: set[int]) -> None:
        if isinstance(job, Chosen):
            if not job.ready:
                for spec in job.among:
                    add(spec, waits)
                waits = waits | {position[key(spec)] for spec in job.among if key(spec) in position}
            else:
                job = job.spec()
        if isinstance(job, Spec) and job.needs:  # the runs it builds on, planned before it
            for need in job.needs:
                add(need, waits)
            waits = waits | {position[key(need)] for need in job.needs if key(need) in position}
        k = key(job)
        if k in position:  # planned already: it may wait for more, of what starts before it (no cycle)
            needs[position[k]] |= {w for w in waits if w < position[k]}
        elif k not in cached and _needs_training(job, keep_going):
            position[k] = len(order)
            order.append(job)
            needs.append(set(waits))
        else:
            cached.add(k)

    after = [(up, built) for up, built in after if any(_needs_training(job, keep_going) for job in built)]
    for upstream, _ in after:
        for job in upstream:
            add(job, set())
    for upstream, built in after:
        waits = {position[key(job)] for job in upstream if key(job) in position}
        for job in built:
            add(job, waits)
    for job in jobs:
        add(job, set())
    return order, needs


def schedule(
    calls: Sequence[Callable[[], object]],
    needs: Sequence[set[int]],
    workers: int,
    on_end: Callable[[int, object, BaseException | None, float], object],
    priority: Sequence[float] | None = None,
) -> None:
    """Run ``calls`` (picklable) in ``workers`` spawned processes: call ``i`` starts once the calls
    ``needs[i]`` have ended (failed ones too), and of the calls ready the one with the highest ``priority``
    (e.g. its expected seconds: the longest first, so that no long call starts last), then the earliest in
    ``calls``, starts first. ``on_end(i, result, error, seconds)`` as each ends (``error``: what it raised, or
    None); what ``on_end`` raises stops the schedule once the running calls have ended."""
    rank = [(-p, i) for i, p in enumerate(priority)] if priority is not None else [(0, i) for i in range(len(calls))]
    waiting = [set(n) for n in needs]
    if any(j == i or not 0 <= j < len(calls) for i, n in enumerate(waiting) for j in n):
        raise ValueError("needs must name other calls by their position")
    dependents: dict[int, list[int]] = {}
    for i, n in enumerate(waiting):
        for j in n:
            dependents.setdefault(j, []).append(i)
    ready = [rank[i] for i, n in enumerate(waiting) if not n]
    heapq.heapify(ready)
    with _pool(max(1, min(workers, len(calls))), gpu_count()) as pool:
        running: dict = {}
        while ready or running:
            while ready and len(running) < workers:
                _, i = heapq.heappop(ready)
                running[pool.submit(_timed, calls[i])] = i
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                i = running.pop(future)
                try:
                    (result, seconds), error = future.result(), None
                except Exception as raised:  # noqa: BLE001 -- handed to on_end, which decides
                    result, seconds, error = None, math.nan, raised
                for j in dependents.get(i, ()):
                    waiting[j].discard(i)
                    if not waiting[j]:
                        heapq.heappush(ready, rank[j])
                on_end(i, result, error, seconds)
    if any(waiting):
        raise ValueError("some calls wait for each other in a cycle: they never started")


def _pool(workers: int, gpus: int) -> ProcessPoolExecutor:
    """``workers`` spawned processes that end with this one (:func:`_end_with_parent`); with several
    GPUs, worker ``k`` (in start order) on GPU ``k % gpus``."""
    context = get_context("spawn")
    started = context.Value("i", 0) if gpus > 1 else None  # the workers started so far
    return ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start_worker, initargs=(os.getpid(), started, gpus)
    )


def _start_worker(parent: int, started, gpus: int) -> None:
    """Pool initializer: the worker ends with ``parent`` and, with several GPUs (a ``started``
    count), takes one."""
    _end_with_parent(parent)
    if started is not None:
        _take_gpu(started, gpus)


PR_SET_PDEATHSIG = 1  # prctl's option, <linux/prctl.h>


def _end_with_parent(parent: int) -> None:
    """On Linux, have the kernel send this worker SIGTERM when ``parent``, the process that started it,
    dies. A ``make figures`` killed alone (``kill``, a scheduler's time limit, the out-of-memory killer;
    Ctrl-C reaches the workers anyway) would otherwise leave its workers training for the rest of their
    runs, each holding its run's lock; killed, a run resumes from its last checkpoint. Elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before the request was made
        os.kill(os.getpid(), signal.SIGTERM)


def _take_gpu(started, gpus: int) -> None:
    """Pool initializer: this worker trains on GPU ``k % gpus``, ``k`` the workers started before it,
    through ``LOCAL_RANK``, which :func:`ponder.runner.training.default_device` reads (and the notebook
    kernels this worker starts inherit)."""
    with started.get_lock():
        k, started.value = started.value, started.value + 1
    os.environ["LOCAL_RANK"] = str(k % gpus)


def _timed(call: Callable[[], object]) -> tuple[object, float]:
    """``call()`` and its wall-clock seconds."""
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def train_calls(jobs: Sequence[Job]) -> list[Callable[[], object]]:
    """The calls that train ``jobs`` in :func:`schedule`'s workers: each on one thread."""
    return [partial(_train, job) for job in jobs]


def failure(job: Job, error: BaseException) -> str:
    """One line naming a job that failed and why."""
    return f"{describe(job)}: {type(error).__name__}: {error}".splitlines()[0]


def prefetch(
    jobs: Sequence[Job],
    workers: int | None = None,
    keep_going: bool = False,
    report: Report | None = None,
    after: Sequence[Group] = (),
) -> int | list[str]:
    """Train the jobs whose runs are not cached, ``workers`` at a time (default :func:`worker_count`),
    each in its own process with one thread. Returns how many jobs were trained; with ``keep_going``
    a failing job does not stop the others, and what is returned is one line per failure.
    ``report(done, pending, describe(job), seconds)`` is called as each job ends (``seconds`` is
    NaN for a job that failed).

    ``after``: groups ``(upstream, built on it)``, runs that others build on and those others
    (:func:`plan`). The upstream jobs start before everything else; the jobs built on a group's
    upstream start as soon as it has ended, ahead of the ``jobs`` not yet started, so no core waits
    for a shared run (ACM's base models) while independent jobs are left.
    """
    workers = worker_count() if workers is None else check_int("workers", workers, minimum=1)
    order, needs = plan(jobs, after, keep_going)
    if workers == 1 or len(order) < 2:
        return [] if keep_going else 0  # nothing to gain: the caller's own calls train in turn
    failures: list[str] = []
    ended = iter(range(1, len(order) + 1))

    def on_end(i: int, _, error: BaseException | None, seconds: float) -> None:
        if error is not None:
            if not keep_going:
                raise error
            failures.append(failure(order[i], error))
        if report is not None:
            report(next(ended), len(order), describe(order[i]), seconds)

    schedule(train_calls(order), needs, workers, on_end)
    return failures if keep_going else len(order)


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
