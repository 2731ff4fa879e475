"""The pre-LayerNorm transformer block every model in this project is built from.

    h = x + Attention(LN(x))          (Vaswani et al. 2017, pre-LN as in Xiong et al. 2020)
    y = h + MLP(LN(h)),   MLP(z) = W_2 GELU(W_1 z + b_1) + b_2

The projections are plain ``nn.Linear`` layers named ``q_proj``, ``k_proj``, ``v_proj``,
``o_proj``, ``fc1``, ``fc2`` so that other modules can find and replace them (ACM-ization,
hypernetwork-generated weights, other attention kinds).

:func:`attend` computes ``softmax(Q K^T / sqrt(d_head)) V``: on the CPU as three plain operations,
whose products take the pinned path of :mod:`ponder.products` and are faster than the fused kernel (see
there); elsewhere by PyTorch's fused kernel.
"""

import torch
import torch.nn.functional as F
from torch import nn

from .dropout import Dropout
from .dropout import dropout as drop


def explicit_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    dropout: float = 0.0,
) -> torch.Tensor:
    """``dropout(softmax(Q K^T / sqrt(d) + M)) V`` as three operations: ``Q`` ``[B, H, T, d]``, ``K, V``
    ``[B, H, S, d]`` -> ``[B, H, T, d]``; ``mask`` and ``causal`` as in :func:`attend`.

    The same function as ``F.scaled_dot_product_attention`` (equal to ~1e-6); its dropout mask comes
    from :func:`ponder.models.dropout.dropout`, the same on every CPU vendor.
    """
    scores = (q * q.shape[-1] ** -0.5) @ k.transpose(-2, -1)  # [B, H, T, S]
    if causal:
        t, s = scores.shape[-2:]
        mask = torch.ones(t, s, dtype=torch.bool, device=q.device).tril(s - t)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
    return drop(torch.softmax(scores, dim=-1), dropout) @ v


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    dropout: float = 0.0,
) -> torch.Tensor:
    """``softmax(Q K^T / sqrt(d)) V`` per head, ``Q`` ``[B, H, T, d]``, ``K, V`` ``[B, H, S, d]`` -> ``[B, H, T, d]``.

    ``mask`` (bool, True = attend, or float, added to the scores; broadcast to ``[B, H, T, S]``),
    ``causal`` and ``dropout`` as in ``F.scaled_dot_product_attention``, which computes it on a GPU.
    On the CPU :func:`explicit_attention` does: its products go through :mod:`ponder.products`, which makes
    its forward and backward passes faster than the fused kernel's at the shapes the models use, masked
    or causal too (one thread; ``python -m ponder.bench.limit`` shows the attention's share of a step),
    and ATen would draw dropout's mask by CPU vendor.
    """
    if q.device.type == "cpu":
        return explicit_attention(q, k, v, mask, causal, dropout)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, dropout_p=dropout)


class MLP(nn.Module):
    """``[..., dim] -> [..., dim]`` through a hidden layer of ``hidden`` GELU units."""

    def __init__(self, dim: int, hidden: int, dropout: float = 0.0):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)
        self.dropout = Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.fc2(F.gelu(self.fc1(x))))


class SelfAttention(nn.Module):
    """Multi-head softmax self-attention, ``[B, T, dim] -> [B, T, dim]``.

    ``softmax(Q K^T / sqrt(d_head)) V`` per head, heads concatenated, then ``o_proj``.
    ``causal`` masks future positions; ``key_padding`` (``[B, T]`` bool, True = ignore) masks keys.
    """

    def __init__(self, dim: int, heads: int, dropout: float = 0.0):
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim={dim} must be divisible by heads={heads}")
        self.heads, self.dropout = heads, dropout
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (nn.Linear(dim, dim) for _ in range(4))

    def split(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, T, dim] -> [B, heads, T, dim/heads]``."""
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x: torch.Tensor, causal: bool = False, key_padding: torch.Tensor | None = None) -> torch.Tensor:
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(x)), self.split(self.v_proj(x))
        mask = None if key_padding is None else ~key_padding[:, None, None, :]
        out = attend(q, k, v, mask, causal and mask is None, self.dropout if self.training else 0.0)
        return self.o_proj(out.transpose(1, 2).flatten(2))


class Block(nn.Module):
    """Pre-LN block ``[B, T, dim] -> [B, T, dim]``; ``attention`` replaces the softmax default."""

    def __init__(
        self, dim: int, heads: int, mlp_ratio: float = 4.0, dropout: float = 0.0, attention: nn.Module | None = None
    ):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = attention if attention is not None else SelfAttention(dim, heads, dropout)
        self.mlp = MLP(dim, int(dim * mlp_ratio), dropout)

    def forward(self, x: torch.Tensor, **attn_kwargs) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), **attn_kwargs)
        return x + self.mlp(self.norm2(x))
