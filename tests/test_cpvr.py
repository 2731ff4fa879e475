"""C-PVR: the hop counter, the sampler's exactness, the data-set wrapper, the error messages."""

import numpy as np
import pytest
import torch

from ponder.tasks import cpvr


def test_worked_example():
    x = [3, 9, 4, 6, 0, 2, 8, 1, 5, 7]
    assert cpvr.count_hops(x) == (3, 5)
    assert cpvr.pointer_chain(x) == [0, 3, 6, 8]


@pytest.mark.parametrize("kind", [list, np.array, torch.tensor])
def test_count_hops_accepts_lists_arrays_tensors(kind):
    assert cpvr.count_hops(kind([3, 9, 4, 6, 0, 2, 8, 1, 5, 7])) == (3, 5)


def test_chain_that_stops_at_once():
    assert cpvr.count_hops([0, 5, 1, 2, 3, 4]) == (0, 0)  # x[0] = 0 <= 0: no hop, label 0


def test_maximal_chain():
    length = 16
    x = list(range(1, length)) + [7]  # 0 -> 1 -> ... -> 15, then x[15] = 7 <= 15
    assert cpvr.count_hops(x) == (length - 1, 7)
    assert cpvr.pointer_chain(x) == list(range(length))


def test_backward_pointer_is_a_label_not_a_hop():
    assert cpvr.count_hops([2, 0, 1]) == (1, 1)  # 0 -> 2, x[2] = 1 <= 2
    assert cpvr.count_hops([2, 0, 2]) == (1, 2)  # a self-pointer stops too: x[p] <= p


@pytest.mark.parametrize("end", cpvr.ENDS)
@pytest.mark.parametrize("seed", range(150))
def test_sampled_examples_have_their_hops_and_label(seed, end):
    rng = np.random.default_rng(seed)
    length = int(rng.integers(2, 24))
    allowed = sorted(set(rng.integers(0, length, size=int(rng.integers(1, 4))).tolist()))
    x, hops, label = cpvr.sample(32, length, allowed, seed=seed, end=end)
    assert x.shape == (32, length) and x.dtype == torch.long
    assert hops.shape == label.shape == (32,)
    assert int(x.min()) >= 0 and int(x.max()) < length
    assert set(hops.tolist()) <= set(allowed)
    for row, h, lab in zip(x, hops.tolist(), label.tolist()):
        assert cpvr.count_hops(row) == (h, lab)


def test_sample_is_deterministic_in_the_seed():
    a, b = cpvr.sample(64, 12, [1, 2, 3], seed=7), cpvr.sample(64, 12, [1, 2, 3], seed=7)
    c = cpvr.sample(64, 12, [1, 2, 3], seed=8)
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    assert not torch.equal(a[0], c[0])


def test_fixed_test_set_is_one_draw_per_hop_count_the_same_on_every_call():
    x, hops, label = cpvr.fixed_test_set(cpvr.sample, 12, [3, 1], 50)
    assert hops.tolist() == [3] * 50 + [1] * 50
    assert all(cpvr.count_hops(row) == (h, y) for row, h, y in zip(x, hops.tolist(), label.tolist()))
    again = cpvr.fixed_test_set(cpvr.sample, 12, [1], 50)
    assert torch.equal(again[0], x[50:])  # each hop count's examples depend on that count only
    assert torch.equal(x[:50], cpvr.sample(50, 12, 3, seed=cpvr.TEST_SEED + 3000)[0])


def test_hop_counts_are_drawn_uniformly_from_the_allowed_ones():
    _, hops, _ = cpvr.sample(30_000, 12, [1, 4, 9], seed=0)
    counts = torch.bincount(hops, minlength=10)[[1, 4, 9]].float()
    assert counts.sum() == 30_000
    assert (counts / 10_000 - 1).abs().max() < 0.05


def test_labels_are_uniform_below_the_last_pointer():
    x, hops, label = cpvr.sample(20_000, 8, 7, seed=1)  # 7 hops in length 8: the chain is 0..7
    assert (x[:, :7] == torch.arange(1, 8)).all()
    frequencies = torch.bincount(label, minlength=8).float() / len(label)
    assert (frequencies - 1 / 8).abs().max() < 0.02


def chain_ends(x):
    return torch.tensor([cpvr.pointer_chain(row)[-1] for row in x])


def test_uniform_end_puts_the_chain_end_anywhere_it_can_be():
    length, hops = 12, 4
    x, _, _ = cpvr.sample(16_000, length, hops, seed=2)
    share = torch.bincount(chain_ends(x), minlength=length).float() / len(x)
    assert share[:hops].sum() == 0
    assert (share[hops:] * (length - hops) - 1).abs().max() < 0.06  # 1 / (L - M) for every p_M in [M, L-1]


def test_sorted_end_piles_chain_ends_at_the_last_position():
    length, hops = 12, 6
    x, _, _ = cpvr.sample(16_000, length, hops, seed=2, end="sorted")
    assert (chain_ends(x) == length - 1).float().mean() == pytest.approx(hops / (length - 1), abs=0.015)


def test_no_position_only_rule_beats_chance_by_much_with_uniform_ends():
    """The quick design (L=12, hops up to 6): answering a fixed ``x[j]`` is within 0.15 of the majority label."""
    x, hops, label = cpvr.sample(30_000, 12, list(range(1, 7)), seed=3)
    chance = cpvr.majority_accuracy(hops, label)
    best = {h: a.max().item() for h, a in cpvr.position_rule_accuracy(x, hops, label).items()}
    assert all(best[h] <= chance[h] + 0.15 for h in best), (best, chance)
    x, hops, label = cpvr.sample(30_000, 12, list(range(1, 7)), seed=3, end="sorted")
    shortcut = cpvr.position_rule_accuracy(x, hops, label)[6][11].item()  # "answer x[L-1]" at 6 hops
    assert shortcut > cpvr.majority_accuracy(hops, label)[6] + 0.4  # what the sorted sampler lets through


def test_position_rule_accuracy_counts_matches():
    x = torch.tensor([[1, 0, 2], [2, 0, 1], [1, 1, 0]])
    hops, label = torch.tensor([1, 1, 2]), torch.tensor([0, 1, 0])
    acc = cpvr.position_rule_accuracy(x, hops, label)
    assert torch.equal(acc[1], torch.tensor([0.0, 0.5, 0.5])) and torch.equal(acc[2], torch.tensor([0.0, 0.0, 1.0]))


def test_majority_accuracy():
    hops = torch.tensor([1, 1, 1, 2, 2])
    label = torch.tensor([0, 0, 1, 3, 4])
    assert cpvr.majority_accuracy(hops, label) == pytest.approx({1: 2 / 3, 2: 0.5})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n=4, length=10, hops=10, seed=0), "hops=10 must be <= 9"),
        (dict(n=4, length=10, hops=[1, 12], seed=0), "hops=12 must be <= 9"),
        (dict(n=4, length=10, hops=-1, seed=0), "hops=-1 must be >= 0"),
        (dict(n=-1, length=10, hops=1, seed=0), "n=-1 must be >= 0"),
        (dict(n=4, length=1, hops=0, seed=0), "length=1 must be >= 2"),
        (dict(n=4, length=10, hops=[], seed=0), "non-empty"),
        (dict(n=4, length=10, hops=1, seed=0, end="last"), "end='last' is not allowed"),
    ],
)
def test_sample_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        cpvr.sample(**kwargs)


def test_sample_rejects_non_integer_sizes():
    with pytest.raises(TypeError, match="length must be an integer"):
        cpvr.sample(4, 10.5, 1, seed=0)


def test_count_hops_rejects_values_outside_the_sequence():
    with pytest.raises(ValueError, match=r"\[0, 2\]"):
        cpvr.count_hops([5, 0, 1])
    with pytest.raises(ValueError, match="non-empty"):
        cpvr.count_hops([])


def test_dataset_matches_the_sampler_and_is_cached(isolated_outputs):
    data = cpvr.dataset(n=300, length=10, hops=[1, 2, 3], seed=4)
    assert len(data) == 300
    rows = data[:]
    assert rows["x"].shape == (300, 10)
    for x, h, lab in zip(rows["x"], rows["hops"].tolist(), rows["label"].tolist()):
        assert cpvr.count_hops(x) == (h, lab)
    again = cpvr.dataset(n=300, length=10, hops=(3, 2, 1), seed=4)
    assert again.cache_files == data.cache_files
    assert str(isolated_outputs / "datasets") in data.cache_files[0]["filename"]


@pytest.mark.parametrize("change", [dict(n=301), dict(length=11), dict(hops=[1, 2]), dict(seed=5), dict(end="sorted")])
def test_dataset_fingerprint_covers_every_knob(change):
    base = dict(n=300, length=10, hops=[1, 2, 3], seed=4)
    first = cpvr.dataset(**base).cache_files
    assert cpvr.dataset(**{**base, **change}).cache_files != first
