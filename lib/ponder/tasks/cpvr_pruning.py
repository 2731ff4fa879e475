"""C-PVR without following the chain: pruning dead ends.

A C-PVR sequence (:mod:`ponder.tasks.cpvr`) holds one live chain ``0 -> p_1 -> ... -> p_M`` and
noise. The noise forms dead fragments: forward pointers that no live position leads to. A model
need not follow the chain hop by hop to find its end ``p_M``: it can prune, in parallel at every
position, the places that no live forward pointer reaches::

    live_0      = every position
    live_r      = {0} ∪ { j : x[i] = j > i for some i in live_{r-1} }   the start, and where live pointers land
    ends_k      = { j in live_k : x[j] <= j }                           live places that point no further

``p_M`` is in ``ends_k`` for every ``k`` (the chain stays live; with no hop, ``p_0 = 0``); after
``L - 1`` rounds it is the only member. Each round is one question an attention layer can answer
at every position at once ("does a live position point at me?"), and reading out the value at a
member of ``ends_k`` is one more: ``k`` rounds take about ``k + 1`` layers, **whatever the hop
count**. Answering the value at a
uniformly picked member of ``ends_k`` (:func:`pruning_rule_accuracy`) is a baseline that needs no
hop-by-hop computation, and it gets *better* with more hops: the longer the chain, the fewer noise
positions are left in a sequence of fixed length to survive the pruning. Where it is high,
accuracy beyond the training hops does not show that a model follows more pointers.

The position-only rule and the majority label, the other baselines, are in :mod:`ponder.tasks.cpvr`.
"""

import pandas as pd
import torch
import torch.nn.functional as F

from ..checks import check_int


def pruned_ends(x: torch.Tensor, rounds: int) -> torch.Tensor:
    """``ends_k`` of the module docstring after ``k = rounds`` rounds: ``[n, L]`` bool for ``x`` ``[n, L]``."""
    check_int("rounds", rounds, minimum=1)
    positions = torch.arange(x.shape[-1])
    lands = F.one_hot(x, x.shape[-1]).bool() & (x > positions)[..., None]  # [n, i, j]: x[i] = j > i
    live = torch.ones_like(x, dtype=torch.bool)
    for _ in range(rounds):
        live = (lands & live[..., None]).any(dim=1)  # [n, j]
        live[:, 0] = True
    return live & (x <= positions)


def pruning_rule_accuracy(x: torch.Tensor, hops: torch.Tensor, label: torch.Tensor, rounds: int) -> dict[int, float]:
    """Per hop count, the expected accuracy of answering ``x[j]`` for a ``j`` picked uniformly from
    :func:`pruned_ends` (``rounds`` rounds): the share of the ends that hold the label, averaged over
    the examples (every example has at least one end: its chain's)."""
    ends = pruned_ends(x, rounds)
    hits = (ends & (x == label[:, None])).sum(dim=1) / ends.sum(dim=1)
    return {h: hits[hops == h].float().mean().item() for h in hops.unique().tolist()}


def pruning_baselines(
    x: torch.Tensor, hops: torch.Tensor, label: torch.Tensor, rounds: tuple[int, ...] = (1, 2)
) -> pd.DataFrame:
    """One row per hop count: ``hops`` and, per number of ``rounds``, :func:`pruning_rule_accuracy`
    in a column ``"pruning dead ends, k round(s)"`` (to draw beside the other baselines)."""
    table = pd.DataFrame({"hops": sorted(hops.unique().tolist())})
    for k in rounds:
        table[f"pruning dead ends, {k} round{'s' if k > 1 else ''}"] = table["hops"].map(
            pruning_rule_accuracy(x, hops, label, k)
        )
    return table


def with_pruning_baselines(
    baselines: pd.DataFrame, test_set: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
) -> pd.DataFrame:
    """``baselines`` (one row per ``hops``) with the columns of :func:`pruning_baselines` on
    ``test_set`` ``(x, hops, label)``, the examples the other baselines were measured on."""
    return baselines.merge(pruning_baselines(*test_set), on="hops", validate="one_to_one")
