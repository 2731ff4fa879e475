"""``python -m ponder.bench [names]``: what it runs, and where."""

import subprocess
import sys

import pytest

import ponder.bench
import ponder.runner.timing


def test_several_benchmarks_run_each_in_a_process_of_its_own(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda args, check: calls.append(args))
    ponder.bench.main(["streams", "train"])
    assert calls == [[sys.executable, "-m", "ponder.bench", name] for name in ("streams", "train")]
    ponder.bench.main([])  # make bench: every one
    assert [args[-1] for args in calls[2:]] == list(ponder.bench.REGISTRY)


def test_an_unknown_benchmark_is_named():
    with pytest.raises(SystemExit, match="unknown benchmark.*nope"):
        ponder.bench.main(["streams", "nope"])


STEADY_HEAP_PROBE = """
import ponder, resource, sys, torch
import ponder.runner.timing
if sys.argv[1] == "off":
    ponder.runner.timing.steady_heap = lambda: False  # time_rounds without the steady heap
from ponder.bench import acm
torch.set_num_threads(1)
z, mlp, learners, gate = acm.layer_parts()  # acm-9's layer on the CPU: 4,160 tokens of width 192, hidden 768
generator, faults = torch.Generator().manual_seed(0), []
def counted(fn):
    def call():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        fn()
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return call
with torch.inference_mode():  # two of acm-9's cases, each with its dense MLP, interleaved as acm-9 times them
    calls = {}
    for i, fraction in enumerate((0.25, 1.0)):
        k = acm.random_choices(len(z), fraction, acm.N, generator)
        calls |= {
            (i, name): counted(fn)
            for name, fn in ({"dense": lambda: mlp(z)} | acm.layer_executions(z, gate, learners, k, None)).items()
        }
    ponder.runner.timing.time_rounds(calls, repeats=4, warmup=2)
print(sum(faults[2 * len(calls):]))  # the timed rounds' page faults
"""


@pytest.mark.skipif(not ponder.runner.timing.steady_heap(), reason="no glibc mallopt here")
def test_timed_calls_fault_no_fresh_pages():
    """``time_rounds`` makes the heap steady first (:func:`ponder.runner.timing.steady_heap`): the calls it times
    map no fresh pages. Without it, glibc gave acm-9's layers thousands of fresh pages on every call
    (1,500-9,300 faults a call, by what the call before had freed), which made the same dense MLP take
    45-75 ms by its place in a round."""

    def probe(mode: str) -> int:
        command = [sys.executable, "-c", STEADY_HEAP_PROBE, mode]
        return int(subprocess.run(command, capture_output=True, text=True, check=True).stdout)

    # Without it, glibc's own thresholds move with what the process freed before, so a process may happen to
    # reuse its pages: the probe can tell if one of a few processes faults as acm-9's layers did; with it, as
    # many processes fault on none.
    off = []
    while len(off) < 4 and max(off, default=0) <= 10_000:
        off.append(probe("off"))
    assert max(off) > 10_000, off
    on = [probe("on") for _ in off]
    assert max(on) < 50, on
