"""Hyper-modules and Hyper-UT: our reading of Abnar et al. 2023 (arXiv 2310.08866).

The paper's body is not available (``docs/research/hyper_ut.md``); what follows is our
reconstruction from its abstract and reviews, with every choice a parameter.

**Pool and router.** A pool of ``N`` learned weight embeddings ``E in R^{N x d_e}``. A
single-head attention router reads a summary of the state (mean over tokens, or the CLS state)
and the step embedding, and mixes the pool, per example and per step::

    q_t = W_q [pool(h_t); e_t]            [B, d_k]
    K   = W_k E                           [N, d_k]
    alpha_t = softmax(q_t K^T / sqrt(d_k))  [B, N]      (the routing weights, hut-6)
    z_t = alpha_t E                       [B, d_e]      (the mixed code)

**Hypernetwork.** The code is turned into the weights of the block's MLP for that example and
step, as a low-rank delta on shared base weights (cheap, and zero at initialization)::

    W_1(z) = W_1 + A_1(z) B_1(z),   A_1(z) in R^{D x r},  B_1(z) in R^{r x M}
    W_2(z) = W_2 + A_2(z) B_2(z),   A_2(z) in R^{M x r},  B_2(z) in R^{r x D}
    MLP_z(u) = GELU(u W_1(z) + b_1) W_2(z) + b_2

where every ``A``, ``B`` is a linear map of ``z`` reshaped to a matrix. Attention and the norms
stay shared. Because ``z`` is a convex mix of the pool, the generated block is a soft mixture of
``N`` modules chosen per example: the "modularity".

**Hyper-UT** is the Universal Transformer (``ponder.models.universal``) whose shared block has
its MLP generated this way at every step::

    h' = h + e_t,   h'' = h' + Attn(LN_1(h')),   h_t = h'' + MLP_{z_t}(LN_2(h''))

With ACT (``ponder.models.act``) each example also stops after its own number of steps.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_choice, check_int
from .transformer import Block

SUMMARIES = ("mean", "cls")


class Router(nn.Module):
    """Single-head attention from ``[summary; e_t]`` (``[B, 2D]``) over the pool: ``(alpha [B, N], z [B, d_e])``."""

    def __init__(self, dim: int, pool_size: int, code_dim: int, key_dim: int | None = None):
        super().__init__()
        check_int("pool_size", pool_size, minimum=1)
        key_dim = key_dim or code_dim
        self.pool = nn.Parameter(torch.randn(pool_size, code_dim))
        self.query = nn.Linear(2 * dim, key_dim)
        self.key = nn.Linear(code_dim, key_dim, bias=False)

    def forward(self, summary: torch.Tensor, step_vector: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q = self.query(torch.cat([summary, step_vector.expand_as(summary)], dim=-1))  # [B, d_k]
        k = self.key(self.pool)  # [N, d_k]
        alpha = torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)  # [B, N]
        return alpha, alpha @ self.pool


class LowRankHead(nn.Module):
    """``z [B, d_e] -> A(z) B(z)`` ``[B, rows, cols]`` of rank ``r``; ``B`` starts at zero, so the delta does."""

    def __init__(self, code_dim: int, rows: int, cols: int, rank: int):
        super().__init__()
        self.rows, self.cols, self.rank = rows, cols, rank
        self.left = nn.Linear(code_dim, rows * rank)
        self.right = nn.Linear(code_dim, rank * cols)
        nn.init.zeros_(self.right.weight)
        nn.init.zeros_(self.right.bias)

    def factors(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(A [B, rows, r], B [B, r, cols])``."""
        return self.left(z).view(-1, self.rows, self.rank), self.right(z).view(-1, self.rank, self.cols)

    def forward(self, u: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """``u A(z) B(z)`` for ``u`` ``[B, T, rows]`` without forming the matrix: ``[B, T, cols]``."""
        a, b = self.factors(z)
        return (u @ a) @ b


class HyperMLP(nn.Module):
    """The hypernetwork of an MLP: ``W(z) = W + A(z) B(z)`` on the weights of a ``base`` MLP,
    ``[B, T, D] -> [B, T, D]``.

    It holds only the generator heads; the base MLP (``fc1``, ``fc2``) is the shared block's own
    and is passed in, so its weights are stored once.
    """

    def __init__(self, dim: int, hidden: int, code_dim: int, rank: int):
        super().__init__()
        check_int("rank", rank, minimum=1)
        self.delta1 = LowRankHead(code_dim, dim, hidden, rank)
        self.delta2 = LowRankHead(code_dim, hidden, dim, rank)

    def forward(self, base: nn.Module, u: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        hidden = F.gelu(base.fc1(u) + self.delta1(u, z))
        return base.fc2(hidden) + self.delta2(hidden, z)

    def weights(self, base: nn.Module, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The generated ``nn.Linear``-layout weights ``(W_1 [B, M, D], W_2 [B, D, M])``."""
        (a1, b1), (a2, b2) = self.delta1.factors(z), self.delta2.factors(z)
        return base.fc1.weight + (a1 @ b1).mT, base.fc2.weight + (a2 @ b2).mT


class HyperCore(nn.Module):
    """Hyper-UT's step: the UT block with its MLP generated from the routed pool code.

    ``step(h, t)`` maps ``[B, L+1, D]`` to ``[B, L+1, D]`` and keeps the routing weights of the
    last step in ``last_routing`` ``[B, N]`` (for hut-6).
    """

    def __init__(
        self,
        dim: int,
        heads: int,
        max_steps: int,
        pool_size: int = 16,
        code_dim: int = 32,
        rank: int = 4,
        mlp_ratio: float = 4.0,
        summary: str = "mean",
    ):
        super().__init__()
        self.summary = check_choice("summary", summary, SUMMARIES)
        self.block = Block(dim, heads, mlp_ratio)
        self.step_embedding = nn.Embedding(max_steps, dim)
        nn.init.normal_(self.step_embedding.weight, std=0.02)
        self.router = Router(dim, pool_size, code_dim)
        self.hyper = HyperMLP(dim, int(dim * mlp_ratio), code_dim, rank)
        self.max_steps = max_steps
        self.last_routing: torch.Tensor | None = None

    def summarize(self, h: torch.Tensor) -> torch.Tensor:
        """``[B, L+1, D] -> [B, D]``: the mean over tokens or the CLS state."""
        return h.mean(dim=1) if self.summary == "mean" else h[:, 0]

    def code(self, h: torch.Tensor, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Routing weights ``[B, N]`` and mixed code ``[B, d_e]`` for state ``h`` (already + ``e_t``) at step ``t``."""
        return self.router(self.summarize(h), self.step_embedding.weight[t])

    def step(self, h: torch.Tensor, t: int) -> torch.Tensor:
        h = h + self.step_embedding.weight[t]
        alpha, z = self.code(h, t)
        self.last_routing = alpha.detach()
        h = h + self.block.attn(self.block.norm1(h))
        return h + self.hyper(self.block.mlp, self.block.norm2(h), z)
