"""Correctly rounded operations where ATen's CPU kernel rounds by the processor.

``torch.sqrt`` on the CPU calls MKL's vector math (``vsSqrt`` / ``vdSqrt`` in its high-accuracy mode),
which is not correctly rounded: on float32 inputs spread over [0, 10) about 15 % of its results
differ in the last bit from ``√x`` rounded to nearest (``tests/test_exact.py``). Which results
differ depends on the processor's reciprocal square-root estimate, which Intel and AMD implement
apart, and ``MKL_CBWR=COMPATIBLE`` (:mod:`ponder.numerics`) does not reach it: the same process
gives other bits on an Intel Xeon than under an emulated CPU, for ``sqrt`` and ``pow(x, 0.5)`` in
float32 and float64. The processor's own square-root instruction is correctly rounded by IEEE 754,
so its result is one number on every CPU; numpy's ``sqrt`` is that instruction.

The library takes square roots through :func:`sqrt` wherever their bits decide a run: the noise
level of the speech clips and ACM's warm start. Training itself needs nothing here: the fused
AdamW and layer norm take the instruction already.
"""

import numpy as np
import torch


def sqrt(x: torch.Tensor) -> torch.Tensor:
    """``√x`` elementwise, correctly rounded, the same bits on every CPU: ``[...] -> [...]``, same dtype and
    device. For tensors that need no gradient (data, initialisation, analysis)."""
    if x.requires_grad:
        raise ValueError("ponder.exact.sqrt computes no gradient: call it on a detached tensor")
    with np.errstate(invalid="ignore"):  # √ of a negative is NaN, silently, as torch.sqrt's
        root = np.sqrt(x.cpu().numpy())  # the CPU's sqrt instruction, correctly rounded (IEEE 754)
    return torch.from_numpy(root).to(x.device)
