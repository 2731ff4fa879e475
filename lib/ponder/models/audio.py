"""A small audio transformer over spectrogram frames: one token per frame, a class token, a head.

    tokens = [CLS; frames · W_E] + positions        [B, 1 + F, dim]
    logits = W_head · LN(Blocks(tokens))[CLS]

The same interface as :class:`~ponder.models.vit.ViT` (``embed``, ``blocks``, ``classify``,
``tokens``), so ACM-ization, MoEfication and the MAC counter apply unchanged.
"""

import torch
from torch import nn

from .transformer import Block


class FrameTransformer(nn.Module):
    """``x [B, frames, features] -> logits [B, classes]``."""

    def __init__(
        self,
        frames: int,
        features: int,
        classes: int,
        dim: int = 32,
        depth: int = 4,
        heads: int = 4,
        mlp_ratio: float = 4.0,
    ):
        super().__init__()
        self.frames = frames
        self.input_norm = nn.LayerNorm(features)
        self.frame_embed = nn.Linear(features, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.positions = nn.Parameter(0.02 * torch.randn(1, 1 + frames, dim))
        self.blocks = nn.ModuleList(Block(dim, heads, mlp_ratio) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    @property
    def tokens(self) -> int:
        return 1 + self.frames

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        frames = self.frame_embed(self.input_norm(x))
        return torch.cat([self.cls.expand(len(x), -1, -1), frames], dim=1) + self.positions

    def classify(self, h: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(h[:, 0]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.classify(h)
