"""Turning a trained transformer into one made of ACMs ("ACM-ization"), and reading its choices.

Every MLP (``Block.mlp``) and every attention projection (``q_proj, k_proj, v_proj, o_proj``) is
replaced by an :class:`~ponder.models.acm.ACM` of ``n`` learners whose total cost equals the
module's (research/acm.md §1.2, following the official code):

* MLP ``d -> H -> d``: learners ``d -> H/n -> d`` with GELU, ``k_min = 0`` (under a residual);
* projection ``d -> d``: rank-``r`` linear learners ``d -> r -> d`` (identity activation, as the
  official code does, not GELU as the paper says), ``r = round((d² + d) / (n (2d + 1)))``, ``k_min = 1``.

``acmize(..., warm_start=True)`` starts the learners from the replaced module instead of at random
(*our addition*, for short CPU runs; the paper starts at random and relies on phase I alone):

* MLP: the hidden units, ordered by importance ``‖W1_j‖ · ‖W2_{:,j}‖``, are dealt out to the learners
  in order, so learner 1 holds the most important quarter and ``h(z, N)`` is the MLP without ``b2``;
* projection: the truncated SVD ``W ≈ Σ_i σ_i u_i v_iᵀ`` is dealt out ``r`` singular directions per
  learner, largest first, so ``h(z, k)`` is the best rank-``k r`` approximation; the bias is put in
  learner 1's hidden bias (least squares).

Phase I (module-wise distillation) then fits the learners to the replaced modules.
"""

import copy

import torch
from torch import nn

from .. import exact
from ..checks import check_int
from .acm import ACM
from .transformer import MLP

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj")


def projection_rank(d_in: int, d_out: int, n: int) -> int:
    """Rank of each of ``n`` linear learners so that together they cost a ``d_in -> d_out`` layer."""
    return max(1, round((d_in * d_out + d_out) / (n * (d_in + d_out + 1))))


def acmize(model: nn.Module, n: int = 4, gate_hidden: int = 4, warm_start: bool = False) -> nn.Module:
    """A copy of ``model`` with every MLP and q/k/v/o projection of its ``blocks`` replaced by ACMs."""
    check_int("n", n, minimum=1, maximum=64)
    model = copy.deepcopy(model)
    for block in model.blocks:
        mlp: MLP = block.mlp
        dim, hidden = mlp.fc1.in_features, mlp.fc1.out_features
        if hidden % n:
            raise ValueError(f"the MLP width {hidden} must be divisible by n={n}")
        block.mlp = ACM(dim, dim, n, hidden // n, "gelu", k_min=0, gate_hidden=gate_hidden)
        if warm_start:
            split_mlp(block.mlp, mlp)
        for name in PROJECTIONS:
            old: nn.Linear = getattr(block.attn, name)
            rank = projection_rank(old.in_features, old.out_features, n)
            setattr(
                block.attn,
                name,
                ACM(old.in_features, old.out_features, n, rank, "identity", k_min=1, gate_hidden=gate_hidden),
            )
            if warm_start:
                split_linear(getattr(block.attn, name), old)
    return model


@torch.no_grad()
def split_mlp(acm: ACM, mlp: MLP) -> None:
    """Deal the MLP's hidden units, most important first, to the learners (``b2`` is dropped)."""
    importance = mlp.fc1.weight.norm(dim=1) * mlp.fc2.weight.norm(dim=0)
    order = importance.argsort(descending=True)
    acm.learners.w1.copy_(mlp.fc1.weight[order])
    acm.learners.b1.copy_(mlp.fc1.bias[order])
    acm.learners.w2.copy_(mlp.fc2.weight[:, order])


@torch.no_grad()
def split_linear(acm: ACM, linear: nn.Linear) -> None:
    """Deal the largest singular directions of ``W`` to the learners, ``r`` each; the bias to learner 1."""
    units = acm.learners.n * acm.learners.hidden
    u, sigma, vh = torch.linalg.svd(linear.weight, full_matrices=False)
    root = exact.sqrt(sigma[:units])
    w1 = torch.zeros_like(acm.learners.w1)
    w2 = torch.zeros_like(acm.learners.w2)
    kept = min(units, len(sigma))
    w1[:kept] = root[:kept, None] * vh[:kept]
    w2[:, :kept] = u[:, :kept] * root[:kept]
    acm.learners.w1.copy_(w1)
    acm.learners.w2.copy_(w2)
    # learner 1 carries the bias: b1 = argmin ‖W2[:, :r] b1 − bias‖ with W2[:, :r] = U_r diag(√σ_r), whose columns
    # are orthogonal, so the least-squares solution is diag(1/√σ_r) U_rᵀ bias (0 where σ = 0, the minimum norm).
    # Written out rather than torch.linalg.lstsq, whose LAPACK call gave run-to-run different last bits here.
    r = min(acm.learners.hidden, kept)
    b1 = torch.zeros_like(acm.learners.b1)
    positive = root[:r] > 0
    b1[:r] = torch.where(positive, (u[:, :r].T @ linear.bias) / torch.where(positive, root[:r], 1.0), 0.0)
    acm.learners.b1.copy_(b1)


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


def cost_fraction(model: nn.Module, argmax: bool = False) -> torch.Tensor:
    """``β_i``: learner MACs spent on each sample of the last forward over the most possible ``[B]``.

    Differentiable through the gates' straight-through choices (for the budget loss). ``argmax``
    (after a training forward): what the gates' noiseless arg-max, evaluation's choice, would spend.
    """
    spent = sum(((m.argmax_used if argmax else m.used) * m.learners.macs).sum(-1) for m in acms(model))
    full = sum(m.used.shape[-1] * m.n * m.learners.macs for m in acms(model))
    return spent / full


def compute_map(model: nn.Module) -> torch.Tensor:
    """Learner MACs per token of the last forward, summed over every ACM, ``[B, T]`` (gates excluded)."""
    return sum(m.k.double() * m.learners.macs for m in acms(model))


def max_token_cost(model: nn.Module) -> int:
    """Learner MACs of one token when every ACM runs all its learners (to normalise compute maps)."""
    return sum(m.n * m.learners.macs for m in acms(model))
