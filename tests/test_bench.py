"""``python -m ponder.bench [names]``: what it runs, and where."""
import subprocess
import sys

import pytest

import ponder.bench


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
