"""The three training phases that turn a trained transformer into an ACM model (research/acm.md §2).

**Phase I — module-wise distillation.** Each ACM learns to imitate the module it replaced, for
every number of learners at once (paper eq. 3), on the replaced module's own inputs ``z`` taken
from the base model:

    L_distill = (1/N) Σ_{k=1..N} ‖h(z, k) − f(z)‖²          (mean over tokens and features)

**Phase II — gate pre-training** (paper eq. 4–6). With the learners fixed, each token gets a
label from the L2 distances ``d(n) = ‖h(z, n) − f(z)‖₂`` (``n = 1..N``): the first learner that no
longer helps,

    t = min{ n ∈ 2..N : d(n) ≥ τ · d(n − 1) }   (t = N if every learner helps),   τ = 1 / 1.2

(the official ``gating_error_factor = 1.2`` tests ``d(n−1) / d(n) < 1.2`` on the same distances;
labels are never 0 or 1). The gate learns the labels with plain cross-entropy on its scores
(*fix*: the official code takes an NLL of the hard Gumbel one-hot).

**Phase III — end-to-end fine-tuning** of the whole model on the task, with the paper's weights
:data:`PAPER_LOSS_WEIGHTS` (scaled per profile in ``studies.acm``):

    β_i  = Σ_{l,j} k_ij^l p^l / Σ_{l,j} N p^l      learner MACs spent on sample i / the most (straight-through)
    L_b  = | mean_i β_i − β_target |                                 budget
    a_in^l = (1/S) Σ_j ν̂_ijn^l                                      histogram of sample i's hard one-hots in ACM l
    L_e  = mean_{i,l} Σ_n a_in^l log a_in^l / log C                  entropy (maximises H: spread over tokens)
    L_d  = − mean_{i,m} |β_i − β_m|                                  diversity (maximises the spread over samples)
    L    = CE + α_b L_b + α_e L_e + α_d L_d

The histogram ``a`` counts the hard straight-through one-hots ``ν̂``, so its value is the
realised histogram and its gradient that of the soft ``ν``.

*Our addition* ``argmax_budget``: training samples the Gumbel gate, evaluation takes its arg-max,
and the two spend differently (the arg-max picks each token's most likely ``k``, not a sample of
its distribution). With the option, ``L_b`` adds the same term on the arg-max choices,
``| mean_i β_i^argmax − β_target |`` (straight-through gradient of ``softmax(logits / T)``), so
that the evaluated model meets the budget too (measured effect in docs/acm.md).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from .acm import ACM
from .acmize import acms, cost_fraction, replaced

GATING_ERROR_FACTOR = 1.2  # 1 / τ
PAPER_LOSS_WEIGHTS = {"budget": 0.1, "entropy": 0.05, "diversity": 0.05}


@torch.no_grad()
def capture(base: nn.Module, names: list[str], *inputs) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Run ``base`` and return ``{name: (input, output)}`` of each named submodule."""
    found, hooks = {}, []
    for name in names:
        hook = lambda m, args, out, name=name: found.__setitem__(name, (args[0], out))  # noqa: E731
        hooks.append(base.get_submodule(name).register_forward_hook(hook))
    try:
        base(*inputs)
    finally:
        for h in hooks:
            h.remove()
    return found


def distances(acm: ACM, z: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``[..., N]``: per-token L2 distance ``d(n) = ‖h(z, n) − target‖₂`` for ``n = 1..N``."""
    return torch.linalg.vector_norm(acm.learners.cumulative(z) - target.unsqueeze(-2), dim=-1)


def distill_loss(base: nn.Module, model: nn.Module, *inputs) -> torch.Tensor:
    """Phase I: mean over ACMs of the distillation MSE averaged over every ``k``."""
    pairs = capture(base, replaced(model), *inputs)
    losses = []
    for name, (z, target) in pairs.items():
        acm = model.get_submodule(name)
        losses.append((acm.learners.cumulative(z) - target.unsqueeze(-2)).pow(2).mean())
    return torch.stack(losses).mean()


def gate_labels(d: torch.Tensor, factor: float = GATING_ERROR_FACTOR) -> torch.Tensor:
    """``d [..., N]`` distances (:func:`distances`) -> ``[...]`` learners ``t ∈ 2..N``: the first ``n ≥ 2``
    with ``factor · d(n) ≥ d(n − 1)`` (learner ``n`` improves the distance by less than ``factor``), else ``N``."""
    stops = factor * d[..., 1:] >= d[..., :-1]  # stops[..., n - 2]: learner n no longer helps
    last = torch.full(d.shape[:-1], d.shape[-1], device=d.device)
    return torch.where(stops.any(-1), stops.int().argmax(-1) + 2, last)


def gate_loss(base: nn.Module, model: nn.Module, *inputs) -> torch.Tensor:
    """Phase II: mean over ACMs of the cross-entropy of the gate's scores against :func:`gate_labels`."""
    pairs = capture(base, replaced(model), *inputs)
    losses = []
    for name, (z, target) in pairs.items():
        acm = model.get_submodule(name)
        with torch.no_grad():
            choice = gate_labels(distances(acm, z, target)) - acm.k_min
        losses.append(F.cross_entropy(acm.gate(z).flatten(0, -2), choice.flatten()))
    return torch.stack(losses).mean()


def auxiliary_losses(model: nn.Module, budget: float, argmax_budget: bool = False) -> dict[str, torch.Tensor]:
    """Phase III's budget, entropy and diversity terms after a training forward of ``model`` (see module doc)."""
    beta = cost_fraction(model)
    at_eval = (cost_fraction(model, argmax=True).mean() - budget).abs() if argmax_budget else 0.0
    return {
        "budget": (beta.mean() - budget).abs() + at_eval,
        "entropy": -torch.stack([choice_entropy(acm.onehot).mean() for acm in acms(model)]).mean(),
        "diversity": -(beta[:, None] - beta[None, :]).abs().mean(),
    }


def choice_entropy(onehot: torch.Tensor) -> torch.Tensor:
    """``[B, ..., C]`` one-hots -> ``[B]``: entropy of each sample's histogram of choices over its tokens, / log C.

    ``0 · log 0`` counts 0; its gradient is that of ``a log max(a, 1e-9)``, finite.
    """
    a = onehot.flatten(1, -2).mean(1)
    return -(a * a.clamp_min(1e-9).log()).sum(-1) / math.log(a.shape[-1])


def finetune_loss(
    model: nn.Module,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    budget: float,
    weights: dict = PAPER_LOSS_WEIGHTS,
    argmax_budget: bool = False,
) -> torch.Tensor:
    """Phase III: ``CE + Σ α · auxiliary`` (a weight of 0 switches a term off, for the ablation)."""
    task = F.cross_entropy(model(inputs), labels)
    aux = auxiliary_losses(model, budget, argmax_budget)
    return task + sum(weights[name] * aux[name] for name in aux)
