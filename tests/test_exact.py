"""ponder.exact: square roots correctly rounded, so that their bits are one number on every CPU."""

import math

import numpy as np
import pytest
import torch

from ponder import exact


def correctly_rounded(x: torch.Tensor) -> torch.Tensor:
    """``√x`` by Python's ``math.sqrt`` (the C library's, correctly rounded in float64), rounded to ``x``'s dtype:
    for float32, rounding float64's correctly rounded root once more gives float32's (53 ≥ 2 · 24 + 2)."""
    roots = [math.sqrt(v) if v >= 0 else math.nan for v in x.double().tolist()]
    return torch.tensor(roots, dtype=torch.float64).to(x.dtype)


EDGES = [0.0, 1e-45, 1.1754942e-38, 1.0, 2.0, 3.4028235e38, math.inf, -0.0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sqrt_is_correctly_rounded(dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.cat([torch.rand(20_000, generator=g) * 10, torch.rand(20_000, generator=g) * 1e-30, torch.tensor(EDGES)])
    x = x.to(dtype)
    root = exact.sqrt(x)
    assert root.dtype == dtype and root.shape == x.shape
    assert torch.equal(root, correctly_rounded(x))
    assert torch.isnan(exact.sqrt(torch.tensor([-1.0, math.nan], dtype=dtype))).all()


def test_sqrt_keeps_the_shape_and_refuses_a_gradient():
    x = torch.rand(3, 4, 5)
    assert torch.equal(exact.sqrt(x), correctly_rounded(x.flatten()).view(3, 4, 5))
    assert torch.equal(exact.sqrt(x[:, ::2].transpose(0, 1)), exact.sqrt(x[:, ::2].transpose(0, 1).contiguous()))
    with pytest.raises(ValueError, match="no gradient"):
        exact.sqrt(x.requires_grad_())


@pytest.mark.skipif(not torch.backends.mkl.is_available(), reason="torch.sqrt takes MKL's vector math only with MKL")
def test_torch_sqrt_on_the_cpu_is_not_correctly_rounded():
    """Why exact.sqrt exists: MKL's vector square root misses the correctly rounded result in the last bit for a
    share of inputs, and which inputs depends on the processor."""
    x = torch.rand(100_000, generator=torch.Generator().manual_seed(0)) * 10
    missed = (torch.sqrt(x) != exact.sqrt(x)).double().mean().item()
    assert missed > 0.01, f"torch.sqrt is correctly rounded here ({missed:.4f} missed): ponder.exact may be retired"
    assert np.array_equal(np.sqrt(x.numpy()), exact.sqrt(x).numpy())
