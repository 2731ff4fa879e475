"""Hyper-modules and Hyper-UT: our reading of Abnar et al. 2023 (arXiv 2310.08866).

The paper's body is not available (``docs/research/hyper_ut.md``); what follows is our
reconstruction from its abstract and reviews, with every choice a parameter.

**Pool and router.** A pool of ``N`` learned weight embeddings ``E in R^{N x d_e}``. A
single-head attention router reads a summary of the state (mean over tokens, or the CLS state)
and the step embedding, and mixes the pool, per example and per step::

    q_t = W_q [pool(h_{t-1} + e_t); e_t]   [B, d_k]
    K   = W_k E                           [N, d_k]
    alpha_t = softmax(q_t K^T / sqrt(d_k))  [B, N]      (the routing weights, hut-6)
    z_t = alpha_t E / c                   [B, d_e]      (the mixed code, normalised)

``reads_step=False`` is the ablation whose router sees the state and not the step:
``q_t = W_q pool(h_{t-1})``, so a module can be chosen by what the state holds, not by the step's
index.

**The normalised code.** ``c = sqrt(2 / pi) d_e`` is the expected L1 norm of a pool entry at its
``N(0, I)`` init. A generator is linear in the code, ``W(z) = W^0 + G z``, so one AdamW step,
which moves every entry of ``G`` by about the learning rate, moves ``W(z)`` by about
``lr * ||z||_1``: ``||E_i||_1`` is about ``0.8 d_e`` (13 at ``d_e = 16``), and without ``c`` the
generated weights would move an order of magnitude faster than a shared weight under the same
learning rate. Dividing the code by ``c`` (and multiplying each generator's init by ``c``, so the
initial function is unchanged) makes a step on ``G`` move the generated weights about as far as a
step on a shared weight moves it: every kind then trains at the same learning rate, as the
hut-3 comparison assumes (``tests/test_hyper_ut.py`` measures both).

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
    """Single-head attention from a summary of the state (and the step) over the pool.

    ``forward(h, step_vector)`` with ``h`` ``[B, L+1, D]`` the state before the step embedding is
    added and ``step_vector`` ``[D]``: ``(alpha [B, N], z [B, d_e])``, ``z`` the normalised code.
    """

    def __init__(
        self,
        dim: int,
        pool_size: int,
        code_dim: int,
        key_dim: int | None = None,
        summary: str = "mean",
        reads_step: bool = True,
    ):
        super().__init__()
        check_int("pool_size", pool_size, minimum=1)
        self.summary = check_choice("summary", summary, SUMMARIES)
        self.reads_step = reads_step
        key_dim = key_dim or code_dim
        self.code_norm = math.sqrt(2 / math.pi) * code_dim  # E ||E_i||_1 for E_i ~ N(0, I)
        self.pool = nn.Parameter(torch.randn(pool_size, code_dim))
        self.query = nn.Linear(2 * dim if reads_step else dim, key_dim)
        self.key = nn.Linear(code_dim, key_dim, bias=False)

    def summarize(self, h: torch.Tensor) -> torch.Tensor:
        """``[B, L+1, D] -> [B, D]``: the mean over tokens or the CLS state."""
        return h.mean(dim=1) if self.summary == "mean" else h[:, 0]

    def forward(self, h: torch.Tensor, step_vector: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.reads_step:
            summary = self.summarize(h + step_vector)
            q = self.query(torch.cat([summary, step_vector.expand_as(summary)], dim=-1))  # [B, d_k]
        else:
            q = self.query(self.summarize(h))
        k = self.key(self.pool)  # [N, d_k]
        alpha = torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)  # [B, N]
        return alpha, alpha @ self.pool / self.code_norm


class LowRankHead(nn.Module):
    """``z [B, d_e] -> A(z) B(z)`` ``[B, rows, cols]`` of rank ``r``; ``B`` starts at zero, so the delta does.

    ``code_norm``: the router's ``c``; ``A``'s weight starts ``c`` times ``nn.Linear``'s init, so
    that ``A`` of a normalised code starts as ``A`` of the raw one would.
    """

    def __init__(self, code_dim: int, rows: int, cols: int, rank: int, code_norm: float = 1.0):
        super().__init__()
        self.rows, self.cols, self.rank = rows, cols, rank
        self.left = nn.Linear(code_dim, rows * rank)
        self.right = nn.Linear(code_dim, rank * cols)
        with torch.no_grad():
            self.left.weight.mul_(code_norm)
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

    def __init__(self, dim: int, hidden: int, code_dim: int, rank: int, code_norm: float = 1.0):
        super().__init__()
        check_int("rank", rank, minimum=1)
        self.delta1 = LowRankHead(code_dim, dim, hidden, rank, code_norm)
        self.delta2 = LowRankHead(code_dim, hidden, dim, rank, code_norm)

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
    last step in ``last_routing`` ``[B, N]`` (for hut-6). ``router_step=False``: the router
    does not read the step (:class:`Router`'s ``reads_step``).
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
        router_step: bool = True,
    ):
        super().__init__()
        self.block = Block(dim, heads, mlp_ratio)
        self.step_embedding = nn.Embedding(max_steps, dim)
        nn.init.normal_(self.step_embedding.weight, std=0.02)
        self.router = Router(dim, pool_size, code_dim, summary=summary, reads_step=router_step)
        self.hyper = HyperMLP(dim, int(dim * mlp_ratio), code_dim, rank, self.router.code_norm)
        self.max_steps = max_steps
        self.last_routing: torch.Tensor | None = None

    def code(self, h: torch.Tensor, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Routing weights ``[B, N]`` and mixed code ``[B, d_e]`` for state ``h`` (before ``e_t``) at step ``t``."""
        return self.router(h, self.step_embedding.weight[t])

    def step(self, h: torch.Tensor, t: int) -> torch.Tensor:
        alpha, z = self.code(h, t)
        self.last_routing = alpha.detach()
        h = h + self.step_embedding.weight[t]
        h = h + self.block.attn(self.block.norm1(h))
        return h + self.hyper(self.block.mlp, self.block.norm2(h), z)
