"""The pinned vs unpinned benchmark (``ponder.bench.numerics``): its worker environments, its
statistics, one real worker."""

import math

import pytest

from ponder.bench import REGISTRY
from ponder.bench import numerics as bench
from ponder.bench.steps import families
from ponder.numerics import PINS


def test_the_cases_choose_their_numerics_themselves(monkeypatch):
    monkeypatch.setenv("PONDER_UNPINNED", "1")  # a caller's own choice must not leak into either case
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    pinned, unpinned = bench.environment("pinned"), bench.environment("unpinned")
    assert not set(PINS) & set(pinned) and "PONDER_UNPINNED" not in pinned
    assert not set(PINS) & set(unpinned) and unpinned["PONDER_UNPINNED"] == "1"
    assert REGISTRY["numerics"] == "ponder.bench.numerics:main"


def test_ratios_per_round_with_mean_and_standard_error():
    row = bench.summarize([1.0, 2.0, 3.0], [1.0, 1.0, 2.0])
    assert row["ratios"] == [1.0, 2.0, 1.5]
    assert row["mean"] == pytest.approx(1.5) and row["se"] == pytest.approx(0.5 / math.sqrt(3))


def test_a_worker_times_every_family_in_a_fresh_process():
    seconds = bench.time_case("unpinned", profile="smoke", steps=1)
    assert set(seconds) == set(families("smoke", variants=False)) and all(s > 0 for s in seconds.values())
