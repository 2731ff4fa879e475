"""ponder.products: float32 CPU products through numpy's OpenBLAS. Each routed product is numpy's, bit for
bit, and within float32 rounding of the float64 product; ATen's scaling, broadcasting and strides are kept;
gradients follow; other dtypes keep ATen's kernel; only a pinned process routes."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ponder import numerics, products

pytestmark = pytest.mark.skipif(not products.routed(), reason="the products are routed only where numerics are pinned")


def draw(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def numpy_product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.matmul(a.numpy(), b.numpy()))


def close_to_exact(got: torch.Tensor, exact: torch.Tensor) -> bool:
    """Within a few float32 roundings of the float64 result (k ≤ 384 terms)."""
    return torch.allclose(got.double(), exact, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n, k, m", [(8, 8, 8), (65, 32, 128), (130, 144, 384), (2080, 32, 128), (0, 4, 5), (3, 0, 5)])
def test_mm_is_numpys_product(n, k, m):
    a, b = draw(n, k), draw(k, m, seed=1)
    assert torch.equal(torch.mm(a, b), numpy_product(a, b))
    assert close_to_exact(torch.mm(a, b), a.double() @ b.double())


def test_transposed_and_strided_operands():
    """Views (a transposed weight, every other column) are read in place, as numpy reads them."""
    a, b = draw(64, 33), draw(96, 64, seed=1)
    for left, right in ((a.t(), b.t()), (a[:, ::2].t(), b[::3].t()), (a.t()[::2], b[1:].t()[:, ::2])):
        right = right[: left.shape[1]]
        assert torch.equal(left @ right, numpy_product(left, right))
        assert close_to_exact(left @ right, left.double() @ right.double())


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_addmm_and_baddbmm_scale_as_aten_does(beta, alpha):
    """``β c + α (a @ b)``, ``c`` broadcast; with β = 0 a NaN in ``c`` does not reach the result."""
    a, b, c = draw(5, 7), draw(7, 3, seed=1), draw(3, seed=2)
    got = torch.addmm(c, a, b, beta=beta, alpha=alpha)
    assert close_to_exact(got, beta * c.double() + alpha * (a.double() @ b.double()))
    batched = torch.baddbmm(c, a.expand(4, 5, 7), b.expand(4, 7, 3), beta=beta, alpha=alpha)
    assert torch.equal(batched, got.expand(4, 5, 3))
    if beta == 0:
        nan = torch.full((3,), float("nan"))
        assert torch.isfinite(torch.addmm(nan, a, b, beta=0)).all()
        assert torch.isfinite(torch.baddbmm(nan, a[None], b[None], beta=0)).all()


def test_bmm_per_batch():
    a, b = draw(6, 13, 8), draw(6, 8, 13, seed=1)
    assert torch.equal(torch.bmm(a, b), numpy_product(a, b))
    assert all(torch.equal(torch.bmm(a, b)[i], torch.mm(a[i], b[i])) for i in range(6))
    assert close_to_exact(torch.bmm(a, b), a.double() @ b.double())


def test_a_linear_layer_is_numpys_product_plus_its_bias():
    """``F.linear`` on a batch of sequences: ``x Wᵀ + b`` with the product numpy's."""
    x, w, bias = draw(4, 13, 32), draw(16, 32, seed=1), draw(16, seed=2)
    expected = numpy_product(x.reshape(-1, 32), w.t()).add_(bias).reshape(4, 13, 16)
    assert torch.equal(F.linear(x, w, bias), expected)


def test_gradients_follow():
    """Backward passes take the routed products too, and match float64 autograd."""
    x, w, v = draw(3, 9, 8), draw(5, 8, seed=1), draw(3, 8, 9, seed=2)
    grads = []
    for dtype in (torch.float32, torch.float64):
        leaves = [t.detach().to(dtype).requires_grad_() for t in (x, w, v)]
        xi, wi, vi = leaves
        loss = F.linear(xi, wi).tanh().sum() + torch.bmm(xi, vi).square().mean()
        loss.backward()
        grads.append([t.grad for t in leaves])
    for got, exact in zip(*grads, strict=True):
        assert close_to_exact(got, exact)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int64])
def test_other_dtypes_keep_atens_kernel(dtype):
    a = torch.arange(12, dtype=dtype).reshape(3, 4)
    b = torch.arange(8, dtype=dtype).reshape(4, 2)
    exact = torch.tensor(np.arange(12).reshape(3, 4) @ np.arange(8).reshape(4, 2), dtype=dtype)
    assert torch.equal(a @ b, exact) and (a @ b).dtype == dtype
    assert torch.equal(torch.bmm(a[None], b[None])[0], exact)


def test_a_process_routes_only_where_pinned():
    """``import ponder`` routes the products where it pins the numerics, and the run keys say so."""
    code = "import ponder; from ponder import numerics, products; print(products.routed(), numerics.describe())"
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINS and not k.startswith("PONDER_UNPINNED")}
    for extra, routed in (({}, "True"), ({"PONDER_UNPINNED": "1"}, "False")):
        done = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", code], env=env | extra, capture_output=True, text=True
        )
        said_routed, description = done.stdout.strip().split(" ", 1)
        assert said_routed == routed and (numerics.PRODUCTS in description) == (routed == "True")


def test_operands_that_do_not_fit_get_atens_error():
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        draw(3, 4) @ draw(5, 6)
    with pytest.raises(RuntimeError):
        torch.bmm(draw(2, 3, 4), draw(3, 4, 5))
