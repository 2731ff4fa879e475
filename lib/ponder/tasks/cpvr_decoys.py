"""C-PVR with a decoy chain: noise that pruning dead ends cannot remove in a few rounds.

On plain C-PVR (:mod:`ponder.tasks.cpvr`) the noise forms short dead fragments, and pruning them
(:mod:`ponder.tasks.cpvr_pruning`) finds the chain's end in about two rounds *whatever the hop
count*: a model of 3-4 layers can score high beyond its training hops without following one
pointer more than in training. Here each example holds, beside the real chain
``0 -> p_1 -> ... -> p_M``, a **decoy chain** ``q_1 -> q_2 -> ... -> q_M`` of ``M - 1`` links
whose end ``q_M`` holds a value ``<= q_M`` too, like the label at ``p_M``::

    x = [3, 1, 6, 8, 9, 1, 0, 2, 5, 7]   real 0 -> 3 -> 8 (label 5); decoy 4 -> 9 (value 7); noise 2 -> 6 dead

* Both chains are drawn alike, in random order: the end uniform over the free positions that leave
  room below it, the other ``M - 1`` positions at random among the free ones below the end.
* Nothing points into the decoy or the real chain from outside: a noise value is uniform over
  ``0..L-1`` except the chain positions above its own position (noise pointing *back* is harmless).
  So the two chains differ in one thing only: position 0 points into the real one.
* Pruning takes ``M`` rounds to remove the decoy's end (its start is dead after one round, the next
  link after two, ...), and until then the two ends cannot be told apart by position: picking one of
  the two surviving ends scores about ``1/2`` at every hop count (:func:`decoy_baselines`).

``2M`` positions besides 0 must fit: ``M <= (L - 1) // 2`` (5 hops at ``L = 12``).
"""

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from ..checks import check_int
from .cpvr import majority_accuracy, pointer_chain, position_rule_accuracy
from .cpvr_pruning import pruned_ends, pruning_rule_accuracy

VERSION = "1"  # bump when the sampler's draws change: it fingerprints the training streams (ponder.runner.streams)


def max_hops(length: int) -> int:
    """The most hops an example of ``length`` can hold beside its decoy: ``(L - 1) // 2``."""
    return (check_int("length", length, minimum=3) - 1) // 2


def _draw_chain(free: list[int], m: int, rng: np.random.Generator) -> list[int]:
    """``m`` increasing positions from ``free``: the end uniform over those with ``m - 1`` free ones below it."""
    ends = [p for i, p in enumerate(free) if i >= m - 1]
    end = ends[rng.integers(len(ends))]
    below = [p for p in free if p < end]
    return sorted(rng.choice(below, m - 1, replace=False).tolist()) + [end]


def sample(n: int, length: int, hops: int | Sequence[int], seed: int) -> tuple[torch.Tensor, ...]:
    """Draw ``n`` examples with a decoy chain (module docstring).

    Returns ``x`` ``[n, L]``, ``hops``, ``label``, ``decoy_end`` (the position ``q_M``) and
    ``decoy_value`` (``x[q_M]``), LongTensors ``[n]`` besides ``x``. ``hops`` is one count or a list
    drawn uniformly, each in ``1..``:func:`max_hops`.
    """
    check_int("n", n, minimum=0)
    allowed = [hops] if isinstance(hops, (int, np.integer)) else list(hops)
    if not allowed:
        raise ValueError("hops must be an int or a non-empty list of hop counts")
    for h in allowed:
        check_int("hops", h, minimum=1, maximum=max_hops(length))
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    x = np.zeros((n, length), dtype=np.int64)
    out = np.zeros((4, n), dtype=np.int64)  # hops, label, decoy end, decoy value
    for i in range(n):
        m = int(allowed[rng.integers(len(allowed))])
        free, chains = list(range(1, length)), {}
        for name in rng.permutation(["real", "decoy"]):
            chains[name] = _draw_chain(free, m, rng)
            free = [p for p in free if p not in chains[name]]
        on_chain = set(chains["real"]) | set(chains["decoy"])
        for position in [0, *free]:  # noise: uniform, but never forward into a chain
            values = [v for v in range(length) if not (v in on_chain and v > position)]
            x[i, position] = values[rng.integers(len(values))]
        for chain, start in ((chains["real"], 0), (chains["decoy"], None)):
            for source, target in zip([start, *chain[:-1]], chain):
                if source is not None:
                    x[i, source] = target
            x[i, chain[-1]] = rng.integers(chain[-1] + 1)  # the end points no further
        out[:, i] = m, x[i, chains["real"][-1]], chains["decoy"][-1], x[i, chains["decoy"][-1]]
    return (torch.from_numpy(x), *(torch.from_numpy(row) for row in out))


def pruning_rounds(x: torch.Tensor, position: torch.Tensor, most: int) -> torch.Tensor:
    """``[n]``: after how many rounds of pruning (:func:`~ponder.tasks.cpvr_pruning.pruned_ends`) ``position[i]``
    is no longer an end of ``x[i]`` (``most + 1`` where it still is after ``most``). The decoy's end takes ``M``."""
    rounds = torch.full_like(position, most + 1)
    for k in range(
        most, 0, -1
    ):  # the ends only shrink from round to round: the last round that removes it is the first
        rounds[~pruned_ends(x, k)[torch.arange(len(x)), position]] = k
    return rounds


def decoy_baselines(
    x: torch.Tensor,
    hops: torch.Tensor,
    label: torch.Tensor,
    decoy_end: torch.Tensor,
    decoy_value: torch.Tensor,
    rounds: tuple[int, ...] = (1, 2),
) -> pd.DataFrame:
    """One row per hop count: the rules that do not follow the chain, on examples of :func:`sample`.

    Columns: the majority label; the best position-only rule; pruning dead ends for each of
    ``rounds`` rounds and for ``M`` rounds (:mod:`~ponder.tasks.cpvr_pruning`, a uniform pick among
    the surviving ends); picking one of the two chain ends at random; and the share of examples whose
    real end lies below the decoy's (about 1/2 when no position tells the chains apart).
    """
    real_end = torch.tensor([pointer_chain(row)[-1] for row in x])
    table = pd.DataFrame({"hops": sorted(hops.unique().tolist())})
    table["majority label"] = table["hops"].map(majority_accuracy(hops, label))
    table["best position-only rule"] = table["hops"].map(
        {h: acc.max().item() for h, acc in position_rule_accuracy(x, hops, label).items()}
    )
    for k in rounds:
        table[f"pruning, {k} round{'s' if k > 1 else ''}"] = table["hops"].map(pruning_rule_accuracy(x, hops, label, k))
    table["pruning, M rounds"] = table["hops"].map(
        lambda h: pruning_rule_accuracy(x[hops == h], hops[hops == h], label[hops == h], h)[h]
    )
    table["one of the two ends"] = table["hops"].map(
        lambda h: (0.5 + 0.5 * (decoy_value[hops == h] == label[hops == h]).float().mean()).item()
    )
    table["real end below the decoy's"] = table["hops"].map(
        lambda h: (real_end[hops == h] < decoy_end[hops == h]).float().mean().item()
    )
    return table
