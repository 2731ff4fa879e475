"""What the C-PVR task allows without following the chain, read off its samplers: the rules that answer without
hopping (the majority label, the best position-only rule, pruning dead ends, one of the two ends) per hop count, and
hut-1's rows on the samplers and the decoy chain (``*_claims``).

Nothing here trains, so nothing here is part of a run's cache key."""

from collections.abc import Sequence

import pandas as pd
import torch

from ....ledger import verdicts
from ....ledger.verdicts import Claim
from ....profiles import by_profile
from ....tasks import cpvr, cpvr_decoys
from ....tasks.cpvr_pruning import with_pruning_baselines
from ..sizes.cpvr import SIZES

# the rules :func:`baselines` draws (of :func:`ponder.tasks.cpvr_decoys.decoy_baselines`' columns)
BASELINES = ("majority label", "best position-only rule", "pruning, 2 rounds", "one of the two ends")


def decoy_rules(length: int, hops: Sequence[int], n: int) -> pd.DataFrame:
    """Per test hop count (``hops``), the accuracy of rules that do not follow the chain (:data:`BASELINES`) on the
    fixed decoy test set of ``n`` examples per hop count (:func:`ponder.tasks.cpvr.fixed_test_set`): the majority
    label, the best "answer ``x[j]``" for a fixed ``j`` chosen per hop count (an upper bound on any one-position
    shortcut), pruning dead ends for two rounds and picking one of the two chain ends, the real one or the decoy's
    (:func:`ponder.tasks.cpvr_decoys.decoy_baselines`)."""
    table = cpvr_decoys.decoy_baselines(*cpvr.fixed_test_set(cpvr_decoys.sample, length, hops, n))
    return table[["hops", *BASELINES]]


def baselines(profile: str) -> pd.DataFrame:
    """:func:`decoy_rules` on the profile's C-PVR test set (hut-2, hut-3, hut-10)."""
    sizes = by_profile(SIZES, profile)
    return decoy_rules(sizes["length"], sizes["test_hops"], sizes["n_test"])


def two_ends_rule(length: int, hops: Sequence[int], n: int) -> pd.DataFrame:
    """Per test hop count, the accuracy of picking one of the two chain ends (:func:`decoy_rules`): what a model
    scores that finds the chains' ends without following the chain from position 0 (hut-7)."""
    return decoy_rules(length, hops, n)[["hops", "one of the two ends"]]


def shortcuts(samples: dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]) -> pd.DataFrame:
    """Per sampler (a name for each ``(x, hops, label)``) and hop count: the chance level (always
    the most frequent label), the best position-only rule "answer ``x[j]``" (its accuracy, its ``j``)
    and pruning dead ends for 1 and 2 rounds (:mod:`ponder.tasks.cpvr_pruning`)."""
    parts = []
    for sampler, (x, hops, label) in samples.items():
        chance = cpvr.majority_accuracy(hops, label)
        rows = [
            {
                "sampler": sampler,
                "hops": h,
                "majority label": chance[h],
                "best position rule": accuracy.max().item(),
                "position": int(accuracy.argmax()),
            }
            for h, accuracy in cpvr.position_rule_accuracy(x, hops, label).items()
        ]
        parts.append(with_pruning_baselines(pd.DataFrame(rows), (x, hops, label)))
    return pd.concat(parts, ignore_index=True)


def sampler_claims(checked: Sequence[bool], table: pd.DataFrame) -> list[Claim]:
    """hut-1's rows on plain C-PVR. ``checked``: per example drawn by the samplers, whether its hop count and label
    are the ones it was sampled with; ``table``: :func:`shortcuts`' rows, one per ``sampler``
    (:data:`ponder.tasks.cpvr.ENDS`) and ``hops``, with columns ``majority label``, ``best position rule`` and
    ``pruning dead ends, <k> round(s)``. The samplers are exact; the other rows describe the chance level, the best
    position-only rule under both ends and pruning dead ends, at 1 / 4 / 8 hops."""
    uniform = table[table.sampler == "uniform"].set_index("hops")
    chance = uniform["majority label"]
    best, shown = table.pivot(index="hops", columns="sampler", values="best position rule"), (1, 4, 8)
    pruning = uniform.filter(like="pruning dead ends")

    def at_shown(values: pd.Series) -> str:
        return " / ".join(f"{values[h]:.2f}" for h in shown)

    return [
        Claim(
            "hut-1",
            "sampled C-PVR examples have exactly the requested hop count and label",
            ours=f"{sum(checked):,} of {len(checked):,}",
            verdict=verdicts.exact(all(checked)),
            kind="exactness check",
        ),
        Claim(
            "hut-1",
            "chance level (majority label) at 1 hop vs at the most hops",
            ours=f"{chance[1]:.2f} vs {chance.iloc[-1]:.2f}",
            verdict=None,
        ),
        Claim(
            "hut-1",
            "best position-only rule (answer x[j]) at 1 / 4 / 8 hops, chain ends uniform vs sorted (FactorExe's "
            "draw), beside the majority label (describes, L=12)",
            ours="; ".join(f"{end} {at_shown(best[end])}" for end in cpvr.ENDS) + f"; majority {at_shown(chance)}",
            verdict=None,
        ),
        Claim(
            "hut-1",
            "pruning dead ends, no hop-by-hop following (about k+1 layers for k rounds, whatever the hop count): "
            "accuracy at 1 / 4 / 8 hops (describes, uniform ends, L=12)",
            ours="; ".join(f"{c.removeprefix('pruning dead ends, ')} {at_shown(pruning[c])}" for c in pruning),
            verdict=None,
        ),
    ]


def decoy_claims(decoys: tuple[torch.Tensor, ...], table: pd.DataFrame) -> list[Claim]:
    """hut-1's rows on C-PVR with a decoy chain. ``decoys``: :func:`ponder.tasks.cpvr_decoys.sample`'s ``x`` ``[n, L]``,
    ``hops``, ``label``, ``decoy_end``, ``decoy_value``; ``table``: its
    :func:`~ponder.tasks.cpvr_decoys.decoy_baselines`, indexed by ``hops``. Exact: every example has its hop count and
    label, and pruning keeps the decoy's end for ``M - 1`` rounds and removes it in the ``M``-th; described: the rules
    that do not follow the chain at 3 / 4 / 5 hops."""
    x, hops, label, decoy_end, _ = decoys
    # kept for M - 1 rounds, removed in the M-th
    in_m_rounds = torch.equal(cpvr_decoys.pruning_rounds(x, decoy_end, int(hops.max())), hops)
    exact_hops = all(cpvr.count_hops(row) == (int(h), int(y)) for row, h, y in zip(x, hops, label))
    rules = ("pruning, 2 rounds", "pruning, M rounds", "one of the two ends", "real end below the decoy's")
    return [
        Claim(
            "hut-1",
            f"with a decoy chain (L={x.shape[1]}): every example has its hop count and label, and pruning keeps the "
            "decoy's end for M - 1 rounds and removes it in the M-th",
            ours=f"{len(x):,} examples: {'yes' if exact_hops and in_m_rounds else 'no'}",
            verdict=verdicts.exact(exact_hops and in_m_rounds),
            kind="exactness check",
        ),
        Claim(
            "hut-1",
            f"with a decoy chain (L={x.shape[1]}), rules that do not follow the chain at 3 / 4 / 5 hops: pruning 2 "
            "rounds, M rounds, one of the two ends; share of real ends below the decoy's (describes)",
            ours="; ".join(f"{c} " + " / ".join(f"{table.loc[h, c]:.2f}" for h in (3, 4, 5)) for c in rules),
            verdict=None,
        ),
    ]
