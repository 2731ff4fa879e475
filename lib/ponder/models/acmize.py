"""Turning a trained transformer into one made of ACMs ("ACM-ization"), and reading its choices.

Every MLP (``Block.mlp``) and every attention projection (``q_proj, k_proj, v_proj, o_proj``) is
replaced by an :class:`~ponder.models.acm.ACM` of ``n`` learners whose total cost equals the
module's (research/acm.md §1.2, following the official code):

* MLP ``d -> H -> d``: learners ``d -> H/n -> d`` with GELU, ``k_min = 0`` (under a residual);
* projection ``d -> d``: rank-``r`` linear learners ``d -> r -> d`` (identity activation, as the
  official code does, not GELU as the paper says), ``r = round((d² + d) / (n (2d + 1)))``, ``k_min = 1``.

The learners start random; phase I (module-wise distillation) fits them to the replaced modules.
"""
import copy

import torch
from torch import nn

from ..checks import check_int
from .acm import ACM
from .transformer import MLP

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj")


def projection_rank(d_in: int, d_out: int, n: int) -> int:
    """Rank of each of ``n`` linear learners so that together they cost a ``d_in -> d_out`` layer."""
    return max(1, round((d_in * d_out + d_out) / (n * (d_in + d_out + 1))))


def acmize(model: nn.Module, n: int = 4, gate_hidden: int = 4) -> nn.Module:
    """A copy of ``model`` with every MLP and q/k/v/o projection of its ``blocks`` replaced by ACMs."""
    check_int("n", n, minimum=1, maximum=64)
    model = copy.deepcopy(model)
    for block in model.blocks:
        mlp: MLP = block.mlp
        dim, hidden = mlp.fc1.in_features, mlp.fc1.out_features
        if hidden % n:
            raise ValueError(f"the MLP width {hidden} must be divisible by n={n}")
        block.mlp = ACM(dim, dim, n, hidden // n, "gelu", k_min=0, gate_hidden=gate_hidden)
        for name in PROJECTIONS:
            old: nn.Linear = getattr(block.attn, name)
            rank = projection_rank(old.in_features, old.out_features, n)
            setattr(block.attn, name, ACM(old.in_features, old.out_features, n, rank, "identity", k_min=1, gate_hidden=gate_hidden))
    return model


def replaced(model: nn.Module) -> list[str]:
    """Names (``blocks.0.mlp``, ``blocks.0.attn.q_proj``, ...) of the modules an ACM replaces."""
    return [name for name, m in model.named_modules() if isinstance(m, ACM)]


def acms(model: nn.Module) -> list[ACM]:
    """Every ACM of ``model`` in forward order."""
    return [m for m in model.modules() if isinstance(m, ACM)]


def set_execution(model: nn.Module, execution: str) -> None:
    """``masked`` or ``grouped`` execution for every ACM (inference)."""
    for m in acms(model):
        m.set_execution(execution)


def force_k(model: nn.Module, k: int | None) -> None:
    """Run ``k`` learners in every ACM (``None``: let the gates decide)."""
    for m in acms(model):
        m.force_k = None if k is None else max(k, m.k_min)


def cost_fraction(model: nn.Module) -> torch.Tensor:
    """``β_i``: learner MACs spent on each sample of the last forward over the most possible ``[B]``.

    Differentiable through the gates' straight-through choices (for the budget loss).
    """
    spent = sum((m.used * m.learners.macs).sum(-1) for m in acms(model))
    full = sum(m.used.shape[-1] * m.n * m.learners.macs for m in acms(model))
    return spent / full


def compute_map(model: nn.Module) -> torch.Tensor:
    """Learner MACs per token of the last forward, summed over every ACM, ``[B, T]`` (gates excluded)."""
    return sum(m.k.double() * m.learners.macs for m in acms(model))


def max_token_cost(model: nn.Module) -> int:
    """Learner MACs of one token when every ACM runs all its learners (to normalise compute maps)."""
    return sum(m.n * m.learners.macs for m in acms(model))
