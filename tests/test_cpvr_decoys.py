"""ponder.tasks.cpvr_decoys: C-PVR with a decoy chain that pruning dead ends needs M rounds to remove."""

import pytest
import torch

from ponder.tasks import cpvr_decoys as D
from ponder.tasks.cpvr import count_hops, pointer_chain
from ponder.tasks.cpvr_pruning import pruned_ends


def forward_sources(row: list[int], position: int) -> list[int]:
    """The positions whose value points forward to ``position``."""
    return [i for i, v in enumerate(row) if v == position and v > i]


def decoy_chain(row: list[int], end: int, hops: int) -> list[int]:
    """The decoy's positions, walked back from its end over its ``hops - 1`` links."""
    chain = [end]
    for _ in range(hops - 1):
        (source,) = forward_sources(row, chain[0])  # exactly one link into every decoy position but the first
        chain.insert(0, source)
    return chain


def test_examples_have_their_hops_and_label_and_a_decoy_that_nothing_points_into():
    x, hops, label, decoy_end, decoy_value = D.sample(500, 12, [1, 2, 3, 4, 5], seed=3)
    assert x.shape == (500, 12) and set(hops.tolist()) == {1, 2, 3, 4, 5}
    for row, h, answer, end, value in zip(
        x.tolist(), hops.tolist(), label.tolist(), decoy_end.tolist(), decoy_value.tolist()
    ):
        assert count_hops(row) == (h, answer)
        assert row[end] == value <= end  # the decoy ends like the real chain: pointing no further
        decoy, real = decoy_chain(row, end, h), pointer_chain(row)
        assert len(set(decoy) | set(real)) == 2 * h + 1  # disjoint chains
        assert forward_sources(row, decoy[0]) == []  # nothing points into the decoy
        assert all(
            forward_sources(row, p) == [s] for s, p in zip(real, real[1:])
        )  # nor into the real chain from outside


def test_pruning_removes_the_decoy_end_after_exactly_m_rounds():
    x, hops, _, decoy_end, _ = D.sample(400, 12, [1, 2, 3, 4, 5], seed=0)
    rows = torch.arange(len(x))
    for m in range(1, 6):
        at = hops == m
        assert not pruned_ends(x[at], m)[rows[: at.sum()], decoy_end[at]].any()
        if m > 1:
            assert pruned_ends(x[at], m - 1)[rows[: at.sum()], decoy_end[at]].all()


def test_pruning_rounds_counts_the_rounds_until_a_position_is_no_longer_an_end():
    x, hops, label, decoy_end, _ = D.sample(400, 12, [1, 2, 3, 4, 5], seed=2)
    assert torch.equal(D.pruning_rounds(x, decoy_end, 5), hops)
    real_end = torch.tensor([pointer_chain(row)[-1] for row in x.tolist()])
    assert (D.pruning_rounds(x, real_end, 5) == 6).all()  # the real end is never pruned


def test_the_two_ends_cannot_be_told_apart_by_position():
    table = D.decoy_baselines(*D.sample(6000, 12, [3, 4, 5], seed=1))
    assert table["real end below the decoy's"].between(0.45, 0.55).all()  # s.e. about 0.011 per hop count
    assert (table["pruning, 2 rounds"] < 0.6).all() and (table["pruning, M rounds"] > 0.99).all()


def test_sampling_is_deterministic_and_checks_its_arguments():
    first, again, other = D.sample(50, 12, 3, seed=7), D.sample(50, 12, 3, seed=7), D.sample(50, 12, 3, seed=8)
    assert all(torch.equal(a, b) for a, b in zip(first, again)) and not torch.equal(first[0], other[0])
    assert D.max_hops(12) == 5 and D.max_hops(14) == 6
    with pytest.raises(ValueError, match="hops"):
        D.sample(10, 12, 6, seed=0)  # 2 * 6 positions do not fit beside position 0
    with pytest.raises(ValueError, match="hops"):
        D.sample(10, 12, [0, 1], seed=0)
