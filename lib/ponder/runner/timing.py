"""Wall-clock timing that survives a shared machine: interleaved rounds, medians, a steady heap.

Used by the benchmarks (:mod:`ponder.bench`) and by the experiments that time something (survey-4).
"""

import ctypes
import ctypes.util
import time
from collections.abc import Callable

import torch


def synchronize() -> None:
    """Wait for the GPU's queued work (nothing to wait for on the CPU): timers read after it."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()


# glibc's mallopt parameters, and the largest mmap threshold it accepts on 64-bit Linux
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX = -1, -3, 32 << 20


def steady_heap() -> bool:
    """Keep freed memory in the heap, for the rest of the process: ``True`` where that is set (glibc).

    By default glibc serves a block above its mmap threshold (128 KB, raised as blocks are freed)
    with fresh pages from the kernel and returns freed memory at the top of the heap, so a call's
    time includes page faults that depend on what the calls before it freed. On the ACM layer of
    ``ponder.bench.acm`` (12.8 MB activations) that made the same dense MLP take 45-75 ms by its
    place in a round, and a layer's ratio to it swing by up to 0.3. With blocks up to
    32 MB taken from the heap (``M_MMAP_THRESHOLD``) and the heap never trimmed
    (``M_TRIM_THRESHOLD``), every call reuses pages already mapped, and the timing measures the
    arithmetic. Elsewhere (no glibc) nothing changes and this returns ``False``.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX)) and bool(
            libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
        )
    except (OSError, AttributeError):  # no C library of that name, or one without mallopt
        return False


def time_rounds(fns: dict[str, Callable[[], object]], repeats: int = 20, warmup: int = 3) -> dict[str, list[float]]:
    """Seconds of each function in each of ``repeats`` timed rounds, after ``warmup`` untimed ones.

    The calls are interleaved round-robin, so that load changes on a shared machine hit every case
    alike (round ``r`` of two functions can be compared as a ratio); CUDA is synchronised around
    each call. The heap is made steady first (:func:`steady_heap`), so that no call pays for what
    the one before it freed.
    """
    steady_heap()
    times = {name: [] for name in fns}
    for round_ in range(warmup + repeats):
        for name, fn in fns.items():
            synchronize()
            start = time.perf_counter()
            fn()
            synchronize()
            if round_ >= warmup:
                times[name].append(time.perf_counter() - start)
    return times


def time_interleaved(fns: dict[str, Callable[[], object]], repeats: int = 20, warmup: int = 3) -> dict[str, float]:
    """Median seconds of each function over the rounds of :func:`time_rounds`."""
    return {name: median(t) for name, t in time_rounds(fns, repeats, warmup).items()}


def median(values: list[float]) -> float:
    """The middle value (the upper one of an even count): a time robust to a descheduled round."""
    return sorted(values)[len(values) // 2]


def time_it(fn: Callable[[], object], repeats: int = 20, warmup: int = 3) -> float:
    """Median seconds of ``fn()`` over ``repeats`` calls after ``warmup`` calls (CUDA-synchronised)."""
    return time_interleaved({"fn": fn}, repeats, warmup)["fn"]
