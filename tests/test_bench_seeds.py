"""ponder.bench.seeds: the batched (vmap) gradients of 3 seeds are the separate ones, and the
benchmark reports a ratio per kind."""

import math

import pytest
import torch

from ponder.bench import seeds


@pytest.mark.parametrize("kind", seeds.KINDS)
def test_batched_gradients_equal_the_separate_ones(kind):
    models, x, y = seeds.setup(kind, "smoke")
    separate = seeds.separate_gradients(models, x, y)
    batched = seeds.batched_gradients(models)(x, y)
    for s, grads in enumerate(separate):
        for name, g in grads.items():
            torch.testing.assert_close(batched[name][s], g, rtol=1e-4, atol=1e-6, msg=f"seed {s}, {name}")


def test_measure_reports_a_ratio_per_kind():
    result = seeds.measure("smoke", repeats=2)
    assert set(result) == set(seeds.KINDS)
    assert all(
        r["batched_s"] > 0 and r["separate_s"] > 0 and math.isfinite(r["batched_over_separate"])
        for r in result.values()
    )
