"""Transformers whose attention is any of the kinds of :mod:`ponder.models.attention`.

* :class:`InContextTransformer` — the sraven / fuzzy-logic model of the HYLA paper: a linear
  embedding of the input tokens, pre-LN blocks whose attention adds a T5 relative position bias
  to its scores and drops whole latent codes (p = 0.1) in training, a final LayerNorm and a
  linear read-out at every position (no causal mask); the official initialisation
  (:func:`lecun_normal_`). ``relative_position=False`` adds a learned absolute position
  embedding to the input embedding instead.
* :class:`CausalLM` — a small decoder-only language model: token + position embeddings, causal
  blocks, tied output embedding.

Both are built from :class:`ponder.models.transformer.Block` with a
:class:`~ponder.models.attention.MultiHeadAttention` inside.
"""

import math

import torch
from torch import nn

from ..checks import check_choice
from .attention import MultiHeadAttention
from .transformer import Block

INITS = ("lecun_normal", "torch")
TRUNCATED_STD = 0.87962566103423978  # std of a standard normal truncated to [-2, 2]


def blocks(
    dim: int,
    heads: int,
    depth: int,
    kind: str,
    head_dim: int | None,
    mlp_ratio: float,
    score_dropout: float,
    relative_buckets: int | None = None,
) -> nn.ModuleList:
    """``depth`` pre-LN blocks with attention of ``kind`` (each its own relative position bias)."""

    def attention():
        return MultiHeadAttention(
            dim, heads, kind, head_dim=head_dim, score_dropout=score_dropout, relative_buckets=relative_buckets
        )

    return nn.ModuleList(Block(dim, heads, mlp_ratio, attention=attention()) for _ in range(depth))


@torch.no_grad()
def lecun_normal_(model: nn.Module) -> nn.Module:
    """The official (Flax) initialisation, in place: every linear weight from a normal truncated to
    ±2 standard deviations with variance ``1 / fan_in`` (LeCun), every linear bias zero;
    LayerNorms and relative position tables keep theirs. Returns ``model``."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            std = math.sqrt(1.0 / module.in_features) / TRUNCATED_STD
            nn.init.trunc_normal_(module.weight, std=std, a=-2 * std, b=2 * std)
            if module.bias is not None:
                module.bias.zero_()
    return model


class InContextTransformer(nn.Module):
    """``[B, T, in_dim] -> [B, T, out_dim]``: embed, ``depth`` blocks, LN, read out.

    ``length`` is the sequence length ``T``: the size of the absolute position table, or of the
    relative position buckets unless ``relative_buckets`` (at least ``T``) says otherwise.
    ``score_dropout`` is the latent-code dropout (training only); ``init`` one of :data:`INITS`.
    """

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
        score_dropout: float = 0.1,
        relative_position: bool = True,
        init: str = "lecun_normal",
        relative_buckets: int | None = None,
    ):
        super().__init__()
        buckets = length if relative_buckets is None else relative_buckets
        if buckets < length:
            raise ValueError(f"relative_buckets={buckets} must be at least the sequence length {length}")
        self.embed = nn.Linear(in_dim, dim)
        self.position = None if relative_position else nn.Parameter(torch.randn(length, dim) * 0.02)
        self.blocks = blocks(
            dim, heads, depth, kind, head_dim, mlp_ratio, score_dropout, buckets if relative_position else None
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, out_dim)
        if check_choice("init", init, INITS) == "lecun_normal":
            lecun_normal_(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        if self.position is not None:
            h = h + self.position[: x.shape[1]]
        for block in self.blocks:
            h = block(h)
        return self.head(self.norm(h))


class CausalLM(nn.Module):
    """``[B, T]`` token ids ``-> [B, T, vocab]`` next-token logits (output embedding tied)."""

    def __init__(
        self,
        vocab: int,
        length: int,
        dim: int = 128,
        heads: int = 8,
        depth: int = 4,
        kind: str = "softmax",
        mlp_ratio: float = 4.0,
    ):
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
