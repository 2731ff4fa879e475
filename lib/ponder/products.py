"""Float32 matrix products on the CPU through numpy's OpenBLAS: one code path on Intel and AMD, and faster.

With ``MKL_CBWR=COMPATIBLE`` (:mod:`ponder.numerics`) MKL computes a GEMM the same way on every x86-64 CPU,
but slowly; its faster branches give Intel and AMD other bits. numpy's OpenBLAS, held to its Haswell (AVX2)
kernels by ``OPENBLAS_CORETYPE``, chooses its code by instruction set alone, so it gives the same bits on
both vendors (``tests/numerics_probe.py``), and faster: on a 2-core Intel Xeon (family 6, model 207), one
thread, a 2080×32×128 product takes 520 µs on MKL's compatible branch and 228 µs here, 512×512×512 7.9
against 3.0 ms. A training step of every model family is 1.2–1.5× faster for it (docs/reproducibility.md).

:func:`route` overrides ATen's CPU kernels of the four products every model reaches, for float32::

    mm(a, b)                    = a @ b                      [n, k] × [k, m] -> [n, m]
    addmm(c, a, b, β, α)        = β c + α (a @ b)
    bmm(a, b)                   = a @ b per batch            [B, n, k] × [B, k, m] -> [B, n, m]
    baddbmm(c, a, b, β, α)      = β c + α (a @ b) per batch

The override sits below autograd, so the products of the backward pass take it too, and so does
everything that ATen builds from them: ``F.linear``, ``matmul``, ``einsum``, ``nn.GRUCell``'s gates,
the math of ``affine_grid``. What ATen computes with its own GEMM calls (the fused CPU attention of
``F.scaled_dot_product_attention``, convolutions in oneDNN) stays on the pinned MKL and oneDNN
paths, which are vendor-independent too. Other dtypes, and operands that do not fit, go to ATen's
kernel through its ``out=`` form, which the override leaves in place. ``import ponder`` calls
:func:`route` wherever it pins the numerics, and :func:`ponder.numerics.describe` (part of every
run's key) says so.
"""

import warnings
from collections.abc import Callable

import numpy as np
import torch

_library: torch.library.Library | None = None


def _array(t: torch.Tensor) -> np.ndarray:
    """A view of ``t`` as a numpy array (no copy)."""
    return t.detach().numpy()


def _scaled(result: np.ndarray, bias: torch.Tensor, beta, alpha) -> torch.Tensor:
    """``β c + α p`` as ATen computes it: with β = 0, ``c`` is ignored (NaN in it does not propagate)."""
    if alpha != 1:
        result *= alpha
    out = torch.from_numpy(result)
    return out.add_(bias, alpha=beta) if beta != 0 else out


def _routed(a: torch.Tensor, b: torch.Tensor, dims: int) -> bool:
    """Whether ``a @ b`` takes numpy: float32 operands of ``dims`` dimensions that fit. Anything else goes to
    ATen's kernel, which also raises ATen's errors for operands that do not fit."""
    return (
        a.dtype == b.dtype == torch.float32
        and a.dim() == b.dim() == dims
        and a.shape[-1] == b.shape[-2]
        and a.shape[:-2] == b.shape[:-2]
    )


def product(aten: Callable, dims: int) -> Callable:
    """The kernel of ``aten`` (``torch.mm``, ``torch.bmm``): ``a @ b`` of two ``dims``-dimensional operands."""

    def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if not _routed(a, b, dims):
            return aten(a, b, out=a.new_empty(0))
        return torch.from_numpy(np.matmul(_array(a), _array(b)))

    return kernel


def scaled_product(aten: Callable, dims: int) -> Callable:
    """The kernel of ``aten`` (``torch.addmm``, ``torch.baddbmm``): ``β c + α (a @ b)``, ``c`` broadcast."""

    def kernel(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, beta=1, alpha=1) -> torch.Tensor:
        if not _routed(a, b, dims):
            return aten(c, a, b, beta=beta, alpha=alpha, out=a.new_empty(0))
        return _scaled(np.matmul(_array(a), _array(b)), c, beta, alpha)

    return kernel


KERNELS = {
    "mm": product(torch.mm, 2),
    "addmm": scaled_product(torch.addmm, 2),
    "bmm": product(torch.bmm, 3),
    "baddbmm": scaled_product(torch.baddbmm, 3),
}


def route() -> None:
    """Send ATen's CPU ``mm``, ``addmm``, ``bmm`` and ``baddbmm`` to :data:`KERNELS`, once per process."""
    global _library
    if _library is not None:
        return
    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():  # torch warns that it overrides its own kernel: that is the point
        warnings.simplefilter("ignore", UserWarning)
        for name, kernel in KERNELS.items():
            library.impl(name, kernel, "CPU")
    _library = library


def routed() -> bool:
    """Whether this process's CPU products go through :func:`route`'s kernels."""
    return _library is not None
