"""One C-PVR example through a trained model, step by step (the explorer's trace): its answer, its steps, ACT's
halting probability and weights, Hyper-UT's routing.

Nothing here trains, so nothing here is part of a run's cache key: an edit retrains no run."""

import torch

from ....models.classifier import ACTDepth, Classifier
from ....models.hyper import HyperCore
from ....models.hyper_block import HyperBlockCore
from ....runner.training import default_device


@torch.no_grad()
def ponder_trace(model: Classifier, x: torch.Tensor) -> dict:
    """One example ``x`` ``[L]`` through ``model``: its answer, steps and per-step halting.

    ``halting_probability`` is ``p^n`` of every step ``n`` the core can take (read from the
    state after step ``n``, as ACT does; empty for fixed-depth models); ``weights`` the
    halting weights ``w^n`` ACT actually gave; ``routing`` Hyper-UT's ``alpha_t`` per step.
    """
    model.eval()
    x = x[None].to(default_device())
    out = model(x)
    h, probabilities, routing = model.embedding(x), [], []
    for t in range(model.core.max_steps):
        h = model.core.step(h, t)
        if isinstance(model.depth, ACTDepth):
            probabilities.append(model.depth.halting(h.mean(dim=1)).item())
        if isinstance(model.core, (HyperCore, HyperBlockCore)):
            routing.append(model.core.last_routing[0].tolist())
    return {
        "answer": int(out.logits.argmax(-1)),
        "confidence": float(out.logits.softmax(-1).max()),
        "steps": float(out.steps),
        "halting_probability": probabilities,
        "weights": out.halting[0].tolist() if out.halting is not None else [],
        "routing": routing,
    }
