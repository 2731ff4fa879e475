"""Early exit with a confidence threshold (CALM, Schuster et al. 2022; for classification as in
DeeBERT / PABEE): one classifier head shared by every layer, stop at the first confident layer.

With ``h_l`` the state after layer ``l`` (``l = 1..L``) and the shared readout ``W LN(.)`` of the
CLS state,

    y_l    = softmax(W LN(h_l[:, 0]))                      every layer's prediction
    c_l    = y_l[(1)] - y_l[(2)]                           confidence: CALM's softmax response, the
                                                           top-1 minus the top-2 probability
    exit   = min{ l : c_l >= lambda },  or L               the first confident layer
    L_train = sum_l (l / sum_j j) CE(y, y_l)               CALM's layer-weighted average

The threshold ``lambda`` is an inference knob: ``lambda = inf`` never exits early (the dense
twin), lower values exit earlier. Exited examples leave the batch (``compact=True``): later
layers run only on the examples still going, so the saved layers are saved time.

The model wraps the parts of a :class:`ponder.models.classifier.Classifier` (``embedding``,
``core`` with ``step(h, t)`` and ``max_steps``, ``norm``, ``head``), so an early-exit
Transformer is the Transformer with a training loss over every layer.
"""

import math
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import nn

from .act import Pondered
from .stopping import run_until_stopped


def layer_weights(layers: int, device=None) -> torch.Tensor:
    """``[layers]`` CALM's weights ``l / sum_j j`` (deeper layers count more)."""
    w = torch.arange(1, layers + 1, dtype=torch.float, device=device)
    return w / w.sum()


def early_exit_loss(logits: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
    """``sum_l (l / sum_j j) CE(y, y_l)`` from every layer's logits ``[B, L, C]`` and labels ``[B]``."""
    per_layer = F.cross_entropy(
        logits.transpose(1, 2), label[:, None].expand(-1, logits.shape[1]), reduction="none"
    )  # [B, L]
    return (per_layer.mean(0) * layer_weights(logits.shape[1], logits.device)).sum()


def confidence(logits: torch.Tensor) -> torch.Tensor:
    """``[..., C] -> [...]``: CALM's softmax response, top-1 minus top-2 softmax probability (in [0, 1])."""
    top = logits.softmax(dim=-1).topk(2, dim=-1).values
    return top[..., 0] - top[..., 1]


class CALMClassifier(nn.Module):
    """Early exit over the layers of ``classifier`` (a ``Classifier``; its depth loop is unused)."""

    def __init__(self, classifier: nn.Module, threshold: float = math.inf, compact: bool = True):
        super().__init__()
        self.embedding, self.core = classifier.embedding, classifier.core
        self.norm, self.head = classifier.norm, classifier.head
        self.threshold, self.compact = threshold, compact

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(h[:, 0]))

    def all_layers(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, L, C]``: every layer's logits (training, and the threshold sweep)."""
        h, logits = self.embedding(x), []
        for t in range(self.core.max_steps):
            h = self.core.step(h, t)
            logits.append(self.readout(h))
        return torch.stack(logits, dim=1)

    def exit(self, x: torch.Tensor, threshold: float | None = None, compact: bool | None = None) -> Pondered:
        """Run layer by layer; an example leaves at its first layer with confidence ``>= threshold``:
        the state it left with, ``steps`` ``[B]`` long its exit layer (1-based) and ``logits`` ``[B, C]``
        read off that state (``ponder`` zero)."""
        threshold = self.threshold if threshold is None else threshold
        compact = self.compact if compact is None else compact

        def stops(h: torch.Tensor, t: int, index: torch.Tensor) -> torch.Tensor:
            return confidence(self.readout(h)) >= threshold

        state, used = run_until_stopped(
            lambda h, t, index: self.core.step(h, t), self.embedding(x), self.core.max_steps, stops, compact
        )
        return Pondered(state, used, torch.zeros(len(used), device=used.device), logits=self.readout(state))

    def forward(self, x: torch.Tensor, all_layers: bool = False) -> Pondered | torch.Tensor:
        """Inference at ``self.threshold``: :meth:`exit` with ``steps`` as floats, as a classifier's.
        With ``all_layers`` (training): every layer's logits ``[B, L, C]``."""
        if all_layers:
            return self.all_layers(x)
        out = self.exit(x)
        return replace(out, steps=out.steps.float())
