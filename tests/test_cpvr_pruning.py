"""Pruning dead ends: the C-PVR baseline that finds a chain's end without following it."""

import pandas as pd
import pytest
import torch

from ponder.tasks import cpvr
from ponder.tasks.cpvr_pruning import pruned_ends, pruning_baselines, pruning_rule_accuracy, with_pruning_baselines

# the worked example of ponder.tasks.cpvr: 0 -> 3 -> 6 -> 8, label x[8] = 5
WORKED = torch.tensor([[3, 9, 4, 6, 0, 2, 8, 1, 5, 7]])


def test_worked_example_by_hand():
    # forward pointers land on 3, 9, 4, 6, 8; of those, 4, 8 and 9 point no further
    assert pruned_ends(WORKED, 1)[0].nonzero().flatten().tolist() == [4, 8, 9]
    # live after round 1: 0 and 3, 9, 4, 6, 8; their forward pointers land on 3, 6, 8
    assert pruned_ends(WORKED, 2)[0].nonzero().flatten().tolist() == [8]
    hops, label = torch.tensor([3]), torch.tensor([5])
    assert pruning_rule_accuracy(WORKED, hops, label, 1) == pytest.approx({3: 1 / 3})  # values 0, 5, 7
    assert pruning_rule_accuracy(WORKED, hops, label, 2) == {3: 1.0}


def test_the_chain_end_survives_every_round_and_is_alone_after_enough():
    length = 12
    x, hops, label = cpvr.sample(4_000, length, list(range(0, 9)), seed=5)
    ends_at = torch.tensor([cpvr.pointer_chain(row)[-1] for row in x.tolist()])
    for rounds in (1, 2, 3, length - 1):
        assert pruned_ends(x, rounds)[torch.arange(len(x)), ends_at].all()
    assert torch.equal(pruned_ends(x, length - 1).sum(dim=1), torch.ones(len(x), dtype=torch.long))
    assert set(pruning_rule_accuracy(x, hops, label, length - 1).values()) == {1.0}


def test_more_rounds_never_add_ends():
    x, _, _ = cpvr.sample(2_000, 12, list(range(1, 9)), seed=6)
    ends = [pruned_ends(x, rounds) for rounds in range(1, 6)]
    assert all((later <= earlier).all() for earlier, later in zip(ends, ends[1:]))


def test_the_rule_gets_better_with_more_hops_at_the_quick_length():
    """What the baseline shows at L = 12: one round of pruning scores more at 8 hops than at 1."""
    x, hops, label = cpvr.sample(20_000, 12, [1, 8], seed=7)
    accuracy = pruning_rule_accuracy(x, hops, label, 1)
    assert accuracy[8] > accuracy[1] + 0.3, accuracy


def test_rounds_must_be_positive():
    with pytest.raises(ValueError, match="rounds"):
        pruned_ends(WORKED, 0)


def test_baselines_table_has_a_column_per_number_of_rounds():
    x, hops, label = cpvr.sample(1_000, 12, [1, 2, 3], seed=8)
    table = pruning_baselines(x, hops, label, rounds=(1, 3))
    assert table["hops"].tolist() == [1, 2, 3]
    assert table["pruning dead ends, 3 rounds"].tolist() == [
        pruning_rule_accuracy(x, hops, label, 3)[h] for h in (1, 2, 3)
    ]
    assert list(table.columns) == ["hops", "pruning dead ends, 1 round", "pruning dead ends, 3 rounds"]


def test_with_pruning_baselines_adds_the_columns_beside_the_others():
    test_set = cpvr.sample(1_000, 12, [1, 2, 3], seed=9)
    others = pd.DataFrame({"hops": [1, 2, 3], "chance": [0.2, 0.2, 0.2]})
    merged = with_pruning_baselines(others, test_set)
    assert list(merged.columns) == ["hops", "chance", "pruning dead ends, 1 round", "pruning dead ends, 2 rounds"]
    assert merged.drop(columns="chance").equals(pruning_baselines(*test_set))
