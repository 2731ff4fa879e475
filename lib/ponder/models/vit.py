"""A small Vision Transformer (Dosovitskiy et al. 2021) built from :class:`ponder.models.transformer.Block`.

    tokens = [CLS; patches · W_E] + positions        [B, 1 + P, dim],  P = (image / patch)²
    h_l    = Block_l(h_{l-1}),  l = 1..depth          (pre-LN blocks)
    logits = W_head · LN(h_depth)[CLS]               [B, classes]

The three stages are separate methods so that other models can step through the layers
themselves (halting, early exits, compute maps, ACM conversion)::

    h = vit.embed(x)                 # [B, 1 + P, dim]
    for block in vit.blocks:         # nn.ModuleList of Block
        h = block(h)
    logits = vit.classify(h)         # reads the class token

``forward(x, return_hidden=True)`` also returns every layer's tokens ``[h_0, ..., h_depth]``.
"""

import torch
from torch import nn

from ..checks import check_int
from .transformer import Block


class ViT(nn.Module):
    """``x [B, channels, image, image] -> logits [B, classes]``."""

    def __init__(
        self,
        image: int = 32,
        patch: int = 4,
        channels: int = 1,
        classes: int = 10,
        dim: int = 64,
        depth: int = 4,
        heads: int = 4,
        mlp_ratio: float = 4.0,
        dropout: float = 0.0,
    ):
        super().__init__()
        check_int("patch", patch, minimum=1, maximum=image)
        if image % patch:
            raise ValueError(f"image={image} must be a multiple of patch={patch}")
        check_int("depth", depth, minimum=1)
        self.image, self.patch, self.grid = image, patch, image // patch
        self.patch_embed = nn.Conv2d(channels, dim, kernel_size=patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.positions = nn.Parameter(0.02 * torch.randn(1, 1 + self.grid**2, dim))
        self.blocks = nn.ModuleList(Block(dim, heads, mlp_ratio, dropout) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    @property
    def tokens(self) -> int:
        """Tokens per image: patches plus the class token."""
        return 1 + self.grid**2

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, C, H, W] -> [B, 1 + P, dim]``: patch embeddings after the class token, plus positions."""
        patches = self.patch_embed(x).flatten(2).transpose(1, 2)
        return torch.cat([self.cls.expand(len(x), -1, -1), patches], dim=1) + self.positions

    def classify(self, h: torch.Tensor) -> torch.Tensor:
        """``[B, 1 + P, dim] -> [B, classes]`` from the normalised class token."""
        return self.head(self.norm(h[:, 0]))

    def forward(self, x: torch.Tensor, return_hidden: bool = False):
        h = self.embed(x)
        hidden = [h]
        for block in self.blocks:
            h = block(h)
            hidden.append(h)
        logits = self.classify(h)
        return (logits, hidden) if return_hidden else logits
