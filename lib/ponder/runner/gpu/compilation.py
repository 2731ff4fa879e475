"""A training loss compiled by ``torch.compile`` (TorchInductor): fused kernels for memory-bound steps.

The gpu profile's sraven step is bound by memory traffic, not by launches or arithmetic: captured as
a CUDA graph it runs at about 1 % of the GPU's arithmetic limit (``python -m ponder.bench train``),
and a 4 times larger batch gains only 1.2x. Each attention layer materialises score tensors
``[B, H, T, T]`` (42 MB in float32 at batch 512, K = 4) and passes each through a chain of
elementwise kernels: the scaling, the position bias, RMSHead's square, mean and product, the
latent-code dropout, and the copies that lay the codes out for the two value contractions; the
backward pass walks the chain again. Inductor fuses such chains into single kernels, each reading
its inputs once.

The largest part left after fusing is HYLA's value contractions: batched products of tiny matrices,
``[18432, 36, 16] @ [18432, 16, 4]`` and the like at the gpu size (``bhqk,bkhd->bqkd`` per layer,
and the others of its forward and backward). cuBLAS runs them far below memory speed: on the H200
(``python -m ponder.bench kernels``) they took 1.9 of the compiled
step's 4.7 ms on the device, where reading and writing their tensors once (1.4 GB a step) would
take 0.3. With :data:`SUM_SMALL_PRODUCTS`, inductor's ``decompose_mm_pass`` computes each batched
product of at least 10,240 matrices with two of its three sizes under 32 (on CUDA; on the CPU only
single products) as a broadcast product summed in one generated kernel. The benchmark's
``compiled-cublas`` rows time the step without it (``python -m ponder.bench train``; the rule is in
figures/gpu/RUN.md).

:func:`compiled` wraps a loss ``loss_fn(model, batch)``: the model's forward and backward are traced
together with the loss, and the optimiser step stays eager (or captured, :mod:`ponder.runner.gpu.cuda_graphs`:
the compiled kernels are captured like any other). Random numbers are drawn by the eager generator
(inductor's ``fallback_random``), so the compiled loss is the same function with the same dropout
masks as the eager one, up to the rounding of reordered floating-point sums (tested). Only the
runs that ask for it compile (``compiled=True`` in :mod:`ponder.studies.hyla.sizes`); the first call
compiles (tens of seconds), later ones reuse the kernels for batches of the same shape. The CPU
profiles stay eager: :mod:`ponder.numerics` pins their bits across x86 CPUs, which the C++ that
inductor generates for the CPU would not keep.
"""

from collections.abc import Callable

import torch

# inductor's options that compute the small batched products as sums (see the module docstring)
SMALL_PRODUCTS_AS_SUMS = {"post_grad_fusion_options": {"decompose_mm_pass": {}}}
SUM_SMALL_PRODUCTS = True  # what the runs compile with


def compiled(
    loss_fn: Callable[..., torch.Tensor], sum_small_products: bool = SUM_SMALL_PRODUCTS
) -> Callable[..., torch.Tensor]:
    """``loss_fn`` compiled for fixed shapes, drawing its random numbers as eager PyTorch does, its
    small batched products computed as sums where ``sum_small_products``.

    AOTAutograd's cache of compiled forward and backward graphs stays off (inductor's cache of
    generated kernels stays on): where a loss leaves views of its intermediates behind, as ACM's
    modules keep their gates' choices (views of stacked tensors), a graph read back from that cache
    rebuilds those views with garbage shapes ("shape '[94853478419208, ...]' is invalid", PyTorch
    2.13 on the CPU, the second process that compiles ACM's phase-III loss; pytorch/pytorch#177812)."""
    import torch._functorch.config as aot_autograd
    import torch._inductor.config as inductor

    inductor.fallback_random = True
    aot_autograd.enable_autograd_cache = False
    return torch.compile(loss_fn, dynamic=False, options=SMALL_PRODUCTS_AS_SUMS if sum_small_products else None)
