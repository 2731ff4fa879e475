"""Dropout whose mask is the same on every CPU vendor.

    y = x * m / (1 - p),   m_i = [u_i < 1 - p],   u_i ~ U[0, 1) drawn in float64

ATen's CPU dropout draws its mask with ``bernoulli_(1 - p)``, and that kernel takes MKL's VSL
generator on Intel CPUs only (a vendor test inside ATen, which no environment setting reaches) and
its own per-element draw elsewhere: the same seed gives other masks on Intel than on AMD. Here the
mask comes from ``torch.rand`` in float64, whose CPU kernel draws one 64-bit number per element in
order on every vendor. It is, bit for bit and in the generator's state after it, the mask ATen draws
on a non-Intel CPU (``tests/test_dropout.py``), so models trained on AMD keep their bits.
"""

import torch
from torch import nn


def dropout(x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """``x`` with each element zeroed with probability ``p`` and the rest scaled by ``1 / (1 - p)``;
    ``x`` unchanged when not ``training`` or ``p == 0``. Any shape; CUDA tensors take ATen's kernel."""
    if not 0 <= p < 1:
        raise ValueError(f"dropout p={p} must lie in [0, 1)")
    if not training or p == 0:
        return x
    if x.device.type != "cpu":
        return torch.nn.functional.dropout(x, p, training=True)
    keep = 1 - p
    noise = (torch.rand(x.shape, dtype=torch.float64) < keep).to(x.dtype)
    return x * noise.div_(keep)


class Dropout(nn.Module):
    """:func:`dropout` as a module (``nn.Dropout``'s interface, without ``inplace``)."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"dropout p={p} must lie in [0, 1)")
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"
