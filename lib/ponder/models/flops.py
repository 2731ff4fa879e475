"""Analytic inference cost: multiply-adds (MACs) per sample, the convention of fvcore (1 MAC = 1 "FLOP").

Only matrix products are counted (linear layers, convolutions, attention scores and mixing);
norms, activations, softmax and additions are left out, as in fvcore's defaults for these ops.
Dynamic modules (ACMs, MoE layers) report what their last forward did through ``macs()``
(per token, ``[B, T]``), gates and routers included; every model here is counted by the same
functions, so the baselines are measured with the same ruler.

Per token of width ``d`` in a pre-LN block with MLP width ``h`` over ``T`` tokens::

    q, k, v, o projections   4 d²
    scores Q Kᵀ and mixing AV   2 T d
    MLP                       2 d h
"""

import torch
from torch import nn

from .transformer import MLP, SelfAttention


def linear(d_in: int, d_out: int) -> int:
    """MACs of a ``d_in -> d_out`` linear layer on one token (the bias is an addition: free)."""
    return d_in * d_out


def attention_mixing(tokens: int | torch.Tensor, dim: int):
    """MACs per token of ``Q Kᵀ`` and ``A V`` over ``tokens`` keys: ``2 · tokens · dim``."""
    return 2 * tokens * dim


def module(m: nn.Module, tokens: torch.Tensor | int, batch: int) -> torch.Tensor:
    """MACs per sample ``[batch]`` of a projection or MLP after a forward over ``tokens`` tokens.

    Dynamic modules (with a ``macs()`` method) report their own per-token counts; a plain
    ``nn.Linear`` or :class:`MLP` costs the same for every token.
    """
    if hasattr(m, "macs") and callable(m.macs):
        return m.macs().sum(-1).double().cpu()  # counts live on the CPU whatever device ran
    if isinstance(m, nn.Linear):
        per_token = linear(m.in_features, m.out_features)
    elif isinstance(m, MLP):
        per_token = linear(m.fc1.in_features, m.fc1.out_features) + linear(m.fc2.in_features, m.fc2.out_features)
    else:
        raise TypeError(f"no MAC count for {type(m).__name__}")
    return torch.full((batch,), float(per_token * tokens), dtype=torch.float64)


def block(b: nn.Module, tokens: int, batch: int) -> torch.Tensor:
    """MACs per sample ``[batch]`` of one :class:`Block` after a forward over ``tokens`` tokens."""
    attn: SelfAttention = b.attn
    dim = attn.o_proj.in_features if isinstance(attn.o_proj, nn.Linear) else attn.o_proj.learners.d_in
    cost = sum(module(getattr(attn, name), tokens, batch) for name in ("q_proj", "k_proj", "v_proj", "o_proj"))
    return cost + tokens * attention_mixing(tokens, dim) + module(b.mlp, tokens, batch)


def vit(model: nn.Module, batch: int) -> torch.Tensor:
    """MACs per sample ``[batch]`` of a :class:`ViT` or ``FrameTransformer`` (dense or with dynamic
    modules) after a forward.

    Patch embedding ``P · C p² · d`` (or ``frames · features · d``) + every block + the head ``d · classes``.
    """
    embed, head, _, _ = vit_parts(model)
    return embed + head + sum(block(b, model.tokens, batch) for b in model.blocks)


def dense_block(tokens, dim: int, hidden: int):
    """MACs per sample of a dense block over ``tokens`` tokens (int or ``[B]`` tensor): the formula of :func:`block`."""
    return tokens * (4 * dim * dim + 2 * dim * hidden) + tokens * attention_mixing(tokens, dim)


def vit_parts(model: nn.Module) -> tuple[int, int, int, int]:
    """``(embedding MACs, head MACs, dim, MLP hidden)`` per sample of a :class:`ViT` or ``FrameTransformer``."""
    if hasattr(model, "patch_embed"):  # ViT: a convolution over the patches
        conv = model.patch_embed
        embed, dim = (
            model.grid**2 * conv.in_channels * conv.kernel_size[0] * conv.kernel_size[1] * conv.out_channels,
            conv.out_channels,
        )
    else:  # FrameTransformer: a linear layer per frame
        embed, dim = (
            model.frames * linear(model.frame_embed.in_features, model.frame_embed.out_features),
            model.frame_embed.out_features,
        )
    mlp = model.blocks[0].mlp
    hidden = mlp.fc1.out_features if hasattr(mlp, "fc1") else mlp.learners.n * mlp.learners.hidden
    return embed, linear(model.head.in_features, model.head.out_features), dim, hidden


def halting_vit(model: nn.Module) -> torch.Tensor:
    """MACs per sample ``[B]`` of a :class:`~ponder.models.avit.AViT` after a forward: only active tokens count."""
    embed, head, dim, hidden = vit_parts(model.vit)
    return embed + head + sum(dense_block(a.double(), dim, hidden) for a in model.active_counts)


def early_exit_vit(model: nn.Module, exits: torch.Tensor) -> torch.Tensor:
    """MACs per sample ``[B]`` of an :class:`~ponder.models.ztw.ZTWViT` leaving at exit ``exits [B]`` (0-based)."""
    embed, head, dim, hidden = vit_parts(model.vit)
    per_block = dense_block(model.vit.tokens, dim, hidden)
    heads = torch.tensor([0] + [h.macs for h in model.heads], dtype=torch.float64).cumsum(
        0
    )  # heads[j]: the first j heads
    e = exits.cpu().long()
    last = len(model.vit.blocks) - 1
    return (
        embed + (e + 1).double() * per_block + heads[(e + 1).clamp(max=len(model.heads))] + (e == last).double() * head
    )
