"""UT+FiLM: the shared Universal-Transformer block, modulated per step (Perez et al. 2018).

The block's weights are shared across depth, but each step ``t`` has its own scale and shift
of the normalized input of both sublayers::

    FiLM_t(u) = (1 + gamma_t) * u + beta_t                      gamma_t, beta_t in R^D
    h' = h + Attn(FiLM^a_t(LN_1(h + e_t))),   h_t = h' + MLP(FiLM^m_t(LN_2(h')))

``gamma`` and ``beta`` start at zero, so at initialization UT+FiLM is exactly the UT.
"""

import torch
from torch import nn

from .universal import UniversalCore


class FiLMCore(UniversalCore):
    """:class:`UniversalCore` whose sublayer inputs get a per-step FiLM; ``step(h, t)`` ``[B, L+1, D]``."""

    def __init__(self, dim: int, heads: int, max_steps: int, mlp_ratio: float = 4.0):
        super().__init__(dim, heads, max_steps, mlp_ratio)
        # [T, 4 D]: gamma and beta for the attention input, then for the MLP input
        self.film = nn.Embedding(max_steps, 4 * dim)
        nn.init.zeros_(self.film.weight)

    def step(self, h: torch.Tensor, t: int) -> torch.Tensor:
        gamma_a, beta_a, gamma_m, beta_m = self.film.weight[t].chunk(4)
        block = self.block
        h = h + self.step_embedding.weight[t]
        h = h + block.attn((1 + gamma_a) * block.norm1(h) + beta_a)
        return h + block.mlp((1 + gamma_m) * block.norm2(h) + beta_m)
