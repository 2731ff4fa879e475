"""The Universal Transformer's recurrence (Dehghani et al. 2019, arXiv 1807.03819).

One pre-LN block, its weights shared across depth, applied ``T`` times; a learned step
embedding tells the block which step it is at::

    h_t = Block(h_{t-1} + e_t),    t = 1..T,    e_t in R^D

With ``T`` fixed this is a Transformer of depth ``T`` whose layers share their weights (tested);
with ACT (``ponder.models.act``) each example stops after its own number of steps.
"""

import torch
from torch import nn

from .transformer import Block


class UniversalCore(nn.Module):
    """``step(h, t) = Block(h + e_t)`` for ``h`` ``[B, L+1, D]`` and ``t`` in ``[0, max_steps)``."""

    def __init__(self, dim: int, heads: int, max_steps: int, mlp_ratio: float = 4.0):
        super().__init__()
        self.block = Block(dim, heads, mlp_ratio)
        self.step_embedding = nn.Embedding(max_steps, dim)
        nn.init.normal_(self.step_embedding.weight, std=0.02)
        self.max_steps = max_steps

    def step(self, h: torch.Tensor, t: int) -> torch.Tensor:
        return self.block(h + self.step_embedding.weight[t])
