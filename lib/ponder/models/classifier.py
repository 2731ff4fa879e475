"""A sequence classifier whose depth is a loop over ``step(state, t)``: the Transformer baseline.

Every C-PVR model of the Hyper-UT reproduction has the same three parts::

    h_0 = [CLS; x] embedded + positions                      [B, L+1, D]
    h_T = depth(core, h_0)          (fixed T steps, or ACT)  [B, L+1, D]
    logits = W_out LN(h_T[:, 0])    (CLS readout)            [B, C]

``core`` is anything with ``step(h, t) -> h`` and ``max_steps``: a stack of ``T`` different
blocks (the Transformer, :class:`LayerStack`), one shared block (Universal Transformer,
``ponder.models.universal``), a FiLM-modulated one (``ponder.models.film``) or a hyper-module
(``ponder.models.hyper``). ``depth`` runs the steps: :class:`FixedDepth` applies all ``T``;
:class:`ACTDepth` stops each example on its own with ACT (``ponder.models.act``), and the
training loss becomes ``CE + tau * mean(N + R)``.
"""

from dataclasses import replace

import torch
from torch import nn

from ..checks import check_choice
from .act import LEVELS, HaltingUnit, Pondered, act
from .transformer import Block

VALUE_EMBEDDINGS = ("table", "positions")


class SequenceEmbedding(nn.Module):
    """``[B, L]`` token ids -> ``[B, L+1, D]``: a CLS vector, then value + learned position embeddings.

    ``values="table"``: a free embedding per value. ``values="positions"`` (C-PVR, where a value
    *is* a position): a value ``v`` is embedded as ``W P_v`` through the position table ``P``, so
    that a pointer and the position it points to start out aligned.
    """

    def __init__(self, vocab: int, length: int, dim: int, values: str = "table"):
        super().__init__()
        self.values = check_choice("values", values, VALUE_EMBEDDINGS)
        if values == "positions" and vocab > length:
            raise ValueError(f"values='positions' needs vocab={vocab} <= length={length}")
        self.tokens = nn.Embedding(vocab, dim) if values == "table" else nn.Linear(dim, dim)
        self.positions = nn.Parameter(torch.randn(length + 1, dim) * 0.02)
        self.cls = nn.Parameter(torch.randn(dim) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = self.tokens(x) if self.values == "table" else self.tokens(self.positions[1:][x])
        h = torch.cat([self.cls.expand(x.shape[0], 1, -1), values], dim=1)
        return h + self.positions[: h.shape[1]]


class LayerStack(nn.Module):
    """The Transformer: ``T`` different pre-LN blocks, ``step(h, t) = Block_t(h)``; nothing shared."""

    def __init__(self, dim: int, heads: int, depth: int, mlp_ratio: float = 4.0):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, heads, mlp_ratio) for _ in range(depth))
        self.max_steps = depth

    def step(self, h: torch.Tensor, t: int) -> torch.Tensor:
        return self.blocks[t](h)


class FixedDepth(nn.Module):
    """Apply every step: ``h_t = step(h_{t-1}, t-1)`` for ``t = 1..T``; each example uses ``T``."""

    def forward(self, core: nn.Module, h: torch.Tensor) -> Pondered:
        for t in range(core.max_steps):
            h = core.step(h, t)
        steps = torch.full((h.shape[0],), float(core.max_steps), device=h.device)
        return Pondered(h, steps, torch.zeros_like(steps))


class ACTDepth(nn.Module):
    """ACT over the core's steps (up to ``core.max_steps``): a halting unit with ``bias``, threshold ``1 - eps``.

    ``level`` is ``"example"`` (one decision per example, as Hyper-UT's per-example weights need)
    or ``"token"``; ``compact`` runs later steps on the still-running examples only.
    """

    def __init__(self, dim: int, bias: float = -1.0, eps: float = 0.01, level: str = "example", compact: bool = False):
        super().__init__()
        self.halting = HaltingUnit(dim, bias)
        self.eps, self.level, self.compact = eps, check_choice("level", level, LEVELS), compact

    def forward(self, core: nn.Module, h: torch.Tensor) -> Pondered:
        out = act(
            lambda s, t, index: core.step(s, t), h, core.max_steps, self.halting, self.eps, self.level, self.compact
        )
        halting = out.halting if out.halting.dim() == 2 else out.halting.mean(dim=1)
        return Pondered(out.state, out.example_steps.float(), out.ponder, halting)


class Classifier(nn.Module):
    """Embedding, a ``depth`` loop over ``core``'s steps, and a linear readout of the CLS state."""

    def __init__(self, embedding: nn.Module, core: nn.Module, depth: nn.Module, dim: int, classes: int):
        super().__init__()
        self.embedding, self.core, self.depth = embedding, core, depth
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> Pondered:
        """The depth loop's :class:`~ponder.models.act.Pondered` (``steps`` ``[B]`` float, ``halting``
        ``[B, T]``) with the ``logits`` ``[B, C]`` read off the CLS state."""
        out = self.depth(self.core, self.embedding(x))
        return replace(out, logits=self.head(self.norm(out.state[:, 0])))
