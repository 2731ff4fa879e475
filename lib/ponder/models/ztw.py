"""Early exits with a confidence threshold, in the style of Zero Time Waste (Wołczyk et al. 2021).

A small head after each block but the last reads the class token; heads are *cascaded*: head
``l`` also reads the logits of head ``l − 1`` (ZTW's stacking). The backbone is frozen and
only the heads train (CE at every head). At inference a sample leaves at the first head whose
softmax confidence ``max_c p_c`` reaches the threshold ``τ``; the last exit is the model's own
head. Sweeping ``τ`` gives a cost-vs-accuracy curve. (ZTW's ensembling phase is left out.)
"""

import torch
import torch.nn.functional as F
from torch import nn

from .vit import ViT


class ExitHead(nn.Module):
    """``LN(cls) -> Linear -> GELU -> Linear`` plus a linear read of the previous head's logits."""

    def __init__(self, dim: int, classes: int, cascade: bool):
        super().__init__()
        self.norm, self.fc1, self.fc2 = nn.LayerNorm(dim), nn.Linear(dim, dim), nn.Linear(dim, classes)
        self.previous = nn.Linear(classes, classes) if cascade else None

    @property
    def macs(self) -> int:
        extra = self.previous.in_features * self.previous.out_features if self.previous is not None else 0
        return self.fc1.in_features * self.fc1.out_features + self.fc2.in_features * self.fc2.out_features + extra

    def forward(self, cls: torch.Tensor, previous: torch.Tensor | None) -> torch.Tensor:
        logits = self.fc2(F.gelu(self.fc1(self.norm(cls))))
        return logits if self.previous is None else logits + self.previous(previous)


class ZTWViT(nn.Module):
    """A :class:`ViT` with exits after blocks ``1..depth-1``; ``forward`` returns every exit's logits
    ``[exits, B, C]``."""

    def __init__(self, vit: ViT):
        super().__init__()
        self.vit = vit
        dim, classes = vit.head.in_features, vit.head.out_features
        self.heads = nn.ModuleList(ExitHead(dim, classes, cascade=i > 0) for i in range(len(vit.blocks) - 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, outs, previous = self.vit.embed(x), [], None
        for i, block in enumerate(self.vit.blocks):
            h = block(h)
            previous = self.heads[i](h[:, 0], previous) if i < len(self.heads) else self.vit.classify(h)
            outs.append(previous)
        return torch.stack(outs)


def exit_loss(model: ZTWViT, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean CE over the trainable exits (the last exit is the frozen model's own head)."""
    logits = model(x)[:-1]
    return F.cross_entropy(logits.flatten(0, 1), y.repeat(len(logits)))


def exit_at(logits: torch.Tensor, threshold: float) -> torch.Tensor:
    """``[exits, B, C] -> [B]``: index of the first exit whose confidence reaches ``threshold`` (else the last)."""
    confident = logits.softmax(-1).amax(-1) >= threshold
    confident[-1] = True
    return confident.int().argmax(0)
