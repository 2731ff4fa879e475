"""Transformers whose attention is any of the kinds of :mod:`ponder.models.attention`.

* :class:`InContextTransformer` — the sraven / fuzzy-logic model of the HYLA paper: a linear
  embedding of the input tokens plus a learned position embedding, pre-LN blocks, a final
  LayerNorm and a linear read-out at every position (no causal mask).
* :class:`CausalLM` — a small decoder-only language model: token + position embeddings, causal
  blocks, tied output embedding.

Both are built from :class:`ponder.models.transformer.Block` with a
:class:`~ponder.models.attention.MultiHeadAttention` inside.
"""
import torch
from torch import nn

from .attention import MultiHeadAttention
from .transformer import Block


def blocks(dim: int, heads: int, depth: int, kind: str, head_dim: int | None, mlp_ratio: float, score_dropout: float) -> nn.ModuleList:
    """``depth`` pre-LN blocks with attention of ``kind``."""
    return nn.ModuleList(
        Block(dim, heads, mlp_ratio, attention=MultiHeadAttention(dim, heads, kind, head_dim=head_dim, score_dropout=score_dropout)) for _ in range(depth)
    )


class InContextTransformer(nn.Module):
    """``[B, T, in_dim] -> [B, T, out_dim]``: embed, add positions, ``depth`` blocks, LN, read out."""

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        length: int,
        dim: int = 128,
        heads: int = 16,
        depth: int = 4,
        kind: str = "softmax",
        head_dim: int | None = None,
        mlp_ratio: float = 2.0,
        score_dropout: float = 0.0,
    ):
        super().__init__()
        self.embed = nn.Linear(in_dim, dim)
        self.position = nn.Parameter(torch.randn(length, dim) * 0.02)
        self.blocks = blocks(dim, heads, depth, kind, head_dim, mlp_ratio, score_dropout)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, out_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x) + self.position[: x.shape[1]]
        for block in self.blocks:
            h = block(h)
        return self.head(self.norm(h))


class CausalLM(nn.Module):
    """``[B, T]`` token ids ``-> [B, T, vocab]`` next-token logits (output embedding tied)."""

    def __init__(self, vocab: int, length: int, dim: int = 128, heads: int = 8, depth: int = 4, kind: str = "softmax", mlp_ratio: float = 4.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        nn.init.normal_(self.embed.weight, std=0.02)  # tied: small, so the first logits are near uniform
        self.position = nn.Parameter(torch.randn(length, dim) * 0.02)
        self.blocks = blocks(dim, heads, depth, kind, None, mlp_ratio, 0.0)
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens) + self.position[: tokens.shape[1]]
        for block in self.blocks:
            h = block(h, causal=True)
        return self.norm(h) @ self.embed.weight.T
