"""Parity task (ponder.tasks.parity): values, difficulty, labels, determinism, errors."""

import pytest
import torch

from ponder.tasks import parity


def test_worked_example():
    x = torch.tensor([1.0, 0, -1, 1, 0, 0])
    assert parity.difficulty(x).item() == 3 and parity.parity(x).item() == 0


@pytest.mark.parametrize("dim,nonzero", [(8, 3), (12, [1, 2, 3, 4]), (5, 5), (4, 0)])
def test_sampled_examples(dim, nonzero):
    x, k, label = parity.sample(500, dim, nonzero, seed=1)
    assert x.shape == (500, dim) and x.dtype == torch.float32
    assert set(x.unique().tolist()) <= {-1.0, 0.0, 1.0}
    assert torch.equal(parity.difficulty(x), k)
    assert torch.equal(label, (x == 1).sum(1) % 2)
    allowed = {nonzero} if isinstance(nonzero, int) else set(nonzero)
    assert set(k.tolist()) == allowed


def test_labels_and_positions_are_balanced():
    x, _, label = parity.sample(20_000, 10, [2, 5], seed=0)
    assert abs(label.float().mean().item() - 0.5) < 0.02
    position_rate = (x != 0).float().mean(0)  # every position equally likely to be non-zero
    assert (position_rate - 0.35).abs().max() < 0.02


def test_deterministic_in_seed():
    a, b = parity.sample(64, 8, [1, 2, 3], seed=7), parity.sample(64, 8, [1, 2, 3], seed=7)
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    assert not torch.equal(a[0], parity.sample(64, 8, [1, 2, 3], seed=8)[0])


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="nonzero"):
        parity.sample(4, 8, 9, seed=0)
    with pytest.raises(ValueError, match="nonzero"):
        parity.sample(4, 8, [], seed=0)
    with pytest.raises(ValueError, match="dim"):
        parity.sample(4, 0, 0, seed=0)
