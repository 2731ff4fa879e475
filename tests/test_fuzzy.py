"""Fuzzy-logic task: the term split, the functions against a direct evaluation, tokens, R²."""

import numpy as np
import pytest
import torch

from ponder.tasks import fuzzy


@pytest.mark.parametrize("frac,test", [(0.3, 19), (0.5, 33), (0.7, 46)])
def test_split_like_the_official_configuration(frac, test):
    s = fuzzy.split(4, 2, frac_test=frac)
    assert (len(s["test"]), len(s["train"]), len(s["unknown"])) == (test, 66 - test, 6)
    assert not set(s["test"]) & set(s["train"])
    seen = {t for c in s["train"] for t in c}
    assert {t for c in s["test"] for t in c} <= set(range(12)) and max(seen) < 12
    assert {t for c in s["unknown"] for t in c} == {12, 13, 14, 15}
    assert fuzzy.terms(4)[12].tolist() == [1, 1, 0, 0]


def test_every_sequence_obeys_its_function():
    combos = fuzzy.split(4, 2, 0.5)["train"]
    drawn = fuzzy.sample(50, combos, 4, length=8, seed=2)
    patterns = fuzzy.terms(4)
    for x, y, c in zip(drawn["x"], drawn["y"], drawn["combo"]):
        for xi, yi in zip(x, y):
            direct = max(min(xi[v] if patterns[t][v] else 1 - xi[v] for v in range(4)) for t in combos[c])
            assert yi == pytest.approx(direct)
    assert drawn["x"].min() >= 0 and drawn["x"].max() <= 1


def test_tokens_mask_the_query_target():
    seq, target, y = fuzzy.batch(6, fuzzy.split()["train"], 4, 10, seed=0)
    assert seq.shape == (6, 10, 5) and (seq[:, -1, -1] == 0).all()
    torch.testing.assert_close(seq[:, :-1, -1], y[:, :-1])
    torch.testing.assert_close(target, y[:, -1])


def test_fixed_context_shares_the_context_only():
    drawn = fuzzy.sample(5, fuzzy.split()["test"], 4, 6, seed=1, fixed_context=7)
    assert (drawn["x"][:, :-1] == drawn["x"][:1, :-1]).all() and not (drawn["x"][:, -1] == drawn["x"][0, -1]).all()
    other = fuzzy.sample(5, fuzzy.split()["train"], 4, 6, seed=2, fixed_context=7)  # another seed, the same context
    assert (other["x"][:, :-1] == drawn["x"][:1, :-1]).all() and not (other["x"][:, -1] == drawn["x"][:, -1]).all()
    assert not (fuzzy.sample(5, fuzzy.split()["test"], 4, 6, seed=1)["x"][:, :-1] == drawn["x"][:1, :-1]).all()


def test_r2():
    y = torch.tensor([[0.0, 1.0, 0.5], [0.2, 0.4, 0.3]])
    assert fuzzy.r2(y[:, -1], y).tolist() == [1.0, 1.0]
    assert fuzzy.r2(torch.tensor([0.5 + np.sqrt(1 / 6), 0.3]), y)[0].item() == pytest.approx(0.0, abs=1e-6)


def test_dataset_matches_sampler():
    combos = fuzzy.split()["test"]
    seq, target, y = fuzzy.dataset_tokens(fuzzy.dataset(20, combos, 4, 8, seed=3), 4)
    drawn = fuzzy.sample(20, combos, 4, 8, seed=3 * 1_000_003)
    np.testing.assert_allclose(y.numpy(), drawn["y"], rtol=1e-6)
    assert seq.shape == (20, 8, 5)


def test_bad_arguments():
    with pytest.raises(ValueError, match="frac_test"):
        fuzzy.split(frac_test=0)
    with pytest.raises(ValueError, match="length"):
        fuzzy.sample(3, [(0, 1)], 4, length=1)


def test_trivial_baselines():
    y = torch.tensor([[0.0, 1.0, 0.5], [0.2, 0.2, 0.8]])
    torch.testing.assert_close(fuzzy.context_mean(y), torch.tensor([0.5, 0.2]))
    split = fuzzy.split(frac_test=0.7)
    drawn = fuzzy.sample(4000, split["test"], seed=0)
    y = torch.as_tensor(drawn["y"])
    assert fuzzy.r2(fuzzy.context_mean(y), y).mean() < 0  # the query's own spread counts against it
    average = fuzzy.task_average(drawn["x"][:, -1], split["train"])
    one = fuzzy.evaluate(drawn["x"][:5, -1:], fuzzy.terms(4)[np.asarray([split["train"][0]] * 5)])[:, 0]
    torch.testing.assert_close(
        fuzzy.task_average(drawn["x"][:5, -1], split["train"][:1]), torch.as_tensor(one, dtype=torch.float32)
    )
    assert 0.05 < fuzzy.r2(average, y).mean() < 0.3  # knowing the training tasks, not this one
