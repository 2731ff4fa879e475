"""Mixture-of-Depths (Raposo et al. 2024): each block processes only the top-k tokens a router picks.

A router scores every token, ``r_i = w . x_i``; with capacity ``c`` a block takes the
``k = ceil(c T)`` best-scored tokens of the sequence, runs on them alone (they attend only to
each other) and lets every other token through unchanged:

    x_i' = x_i + sigmoid(r_i) (f(X~)_i - x~_i)    if r_i is among the top k      (X~: the chosen tokens)
    x_i' = x_i                                    otherwise

Multiplying the block's update by the router's (squashed) score puts the router on the
gradient path (the paper multiplies by ``r_i`` itself; the sigmoid keeps the scale bounded).
The cost of a block falls from ``T`` to ``k`` tokens: projections and MLP by ``c``, attention
by ``c^2``.

**Causality.** Top-k over the sequence compares a token with later ones: in an autoregressive
model a future token can change whether an earlier one is processed. ``routing="threshold"``
is the causal alternative the paper uses at sampling time: token ``i`` is processed iff
``r_i > 0``, a decision from its own state alone (with ``causal=True`` attention nothing then
flows backwards). ``aux_loss`` trains the router's sign to predict top-k membership (the
paper's auxiliary BCE). ``keep_first`` always processes position 0 (the CLS token a
classifier reads).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_choice
from .transformer import Block

ROUTINGS = ("topk", "threshold")


def capacity_tokens(capacity: float, tokens: int) -> int:
    """``k = ceil(capacity * tokens)``, at least 1."""
    if not 0 < capacity <= 1:
        raise ValueError(f"capacity={capacity} must lie in (0, 1]")
    return max(1, math.ceil(capacity * tokens - 1e-9))


class MoDBlock(nn.Module):
    """A pre-LN :class:`Block` behind a token router, ``[B, T, D] -> [B, T, D]``."""

    def __init__(
        self,
        dim: int,
        heads: int,
        capacity: float,
        mlp_ratio: float = 4.0,
        routing: str = "topk",
        keep_first: bool = False,
    ):
        super().__init__()
        capacity_tokens(capacity, 1)
        self.block, self.router = Block(dim, heads, mlp_ratio), nn.Linear(dim, 1)
        self.capacity, self.routing, self.keep_first = capacity, check_choice("routing", routing, ROUTINGS), keep_first
        self.last_chosen: torch.Tensor | None = None  # [B, T] bool, the tokens the last forward processed
        self.last_scores: torch.Tensor | None = None  # [B, T] router scores of the last forward

    def choose(self, scores: torch.Tensor) -> torch.Tensor:
        """``[B, T]`` bool: the processed tokens (exactly ``k`` per row for ``topk``)."""
        if self.keep_first:
            scores = scores.clone()
            scores[:, 0] = math.inf
        if self.routing == "threshold":
            return scores > 0
        k = capacity_tokens(self.capacity, scores.shape[1])
        top = scores.topk(k, dim=1).indices
        return torch.zeros_like(scores, dtype=torch.bool).scatter(1, top, True)

    def forward(self, x: torch.Tensor, causal: bool = False) -> torch.Tensor:
        scores = self.router(x).squeeze(-1)  # [B, T]
        chosen = self.choose(scores)
        self.last_chosen, self.last_scores = chosen, scores
        if self.routing == "topk":  # k per row: gather the chosen tokens in their order
            k = int(chosen[0].sum())
            index = chosen.long().argsort(dim=1, descending=True, stable=True)[:, :k].sort(dim=1).values  # [B, k]
            gather = index[..., None].expand(-1, -1, x.shape[-1])
            picked = x.gather(1, gather)
            update = self.block(picked, causal=causal) - picked
            gate = torch.sigmoid(scores.gather(1, index))[..., None]
            return x.scatter_add(1, gather, gate * update)
        # threshold: a different number of tokens per row, so one row at a time
        out = x.clone()
        for row in range(x.shape[0]):
            index = chosen[row].nonzero().squeeze(1)
            if index.numel():
                picked = x[row, index][None]
                update = self.block(picked, causal=causal)[0] - picked[0]
                out[row, index] = x[row, index] + torch.sigmoid(scores[row, index])[:, None] * update
        return out

    def aux_loss(self) -> torch.Tensor:
        """BCE teaching the router's sign to predict top-k membership of the last forward."""
        scores = self.last_scores
        k = capacity_tokens(self.capacity, scores.shape[1])
        target = torch.zeros_like(scores).scatter(1, scores.detach().topk(k, dim=1).indices, 1.0)
        return F.binary_cross_entropy_with_logits(scores, target)


class MoDStack(nn.Module):
    """``depth`` MoD blocks, ``step(h, t) = MoDBlock_t(h)``: a Transformer core with routed depth."""

    def __init__(
        self, dim: int, heads: int, depth: int, capacity: float, mlp_ratio: float = 4.0, keep_first: bool = True
    ):
        super().__init__()
        self.blocks = nn.ModuleList(
            MoDBlock(dim, heads, capacity, mlp_ratio, keep_first=keep_first) for _ in range(depth)
        )
        self.max_steps = depth

    def set_capacity(self, capacity: float) -> None:
        """Change every block's capacity (an inference knob; training used its own)."""
        capacity_tokens(capacity, 1)
        for b in self.blocks:
            b.capacity = capacity

    def step(self, h: torch.Tensor, t: int) -> torch.Tensor:
        return self.blocks[t](h)


def block_macs(tokens: int, dim: int, mlp_ratio: float = 4.0) -> float:
    """Multiply-adds of one pre-LN block on ``tokens`` tokens: ``4 d^2 + 2 d h`` per token, ``2 T d`` for attention."""
    hidden = int(dim * mlp_ratio)
    return tokens * (4 * dim * dim + 2 * dim * hidden) + 2 * tokens * tokens * dim


def mod_macs(tokens: int, dim: int, depth: int, capacity: float, mlp_ratio: float = 4.0) -> float:
    """Multiply-adds of a :class:`MoDStack` forward: routers on every token, blocks on ``k`` tokens."""
    k = capacity_tokens(capacity, tokens)
    return depth * (tokens * dim + block_macs(k, dim, mlp_ratio))
