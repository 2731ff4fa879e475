"""A training loss compiled by ``torch.compile`` (TorchInductor): fused kernels for memory-bound steps.

The gpu profile's sraven step is bound by memory traffic, not by launches or arithmetic: captured as
a CUDA graph it runs at about 1 % of the GPU's arithmetic limit (``python -m ponder.bench train``),
and a 4 times larger batch gains only 1.2x. Each attention layer materialises score tensors
``[B, H, T, T]`` (42 MB in float32 at batch 512, K = 4) and passes each through a chain of
elementwise kernels: the scaling, the position bias, RMSHead's square, mean and product, the
latent-code dropout, and the copies that lay the codes out for the two value contractions; the
backward pass walks the chain again. Inductor fuses such chains into single kernels, each reading
its inputs once.

:func:`compiled` wraps a loss ``loss_fn(model, batch)``: the model's forward and backward are traced
together with the loss, and the optimiser step stays eager (or captured, :mod:`ponder.cuda_graphs`:
the compiled kernels are captured like any other). Random numbers are drawn by the eager generator
(inductor's ``fallback_random``), so the compiled loss is the same function with the same dropout
masks as the eager one, up to the rounding of reordered floating-point sums (tested). Only the
runs that ask for it compile (``compiled=True`` in :mod:`ponder.sizes.hyla`); the first call
compiles (tens of seconds), later ones reuse the kernels for batches of the same shape. The CPU
profiles stay eager: :mod:`ponder.numerics` pins their bits across x86 CPUs, which the C++ that
inductor generates for the CPU would not keep.
"""
from collections.abc import Callable

import torch


def compiled(loss_fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """``loss_fn`` compiled for fixed shapes, drawing its random numbers as eager PyTorch does."""
    import torch._inductor.config as inductor

    inductor.fallback_random = True
    return torch.compile(loss_fn, dynamic=False)
