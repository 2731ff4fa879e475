"""sraven generator: every instance obeys its rules; split, tokens, counting, ambiguity."""

import itertools

import numpy as np
import pytest
import torch

from ponder.tasks import sraven


def test_split_sizes_and_disjoint():
    train, held = sraven.split(4)
    assert (len(train), len(held)) == (248, 82)
    assert not set(train) & set(held)
    assert all(tuple(sorted(c)) == c for c in train + held)  # unordered: AB and BA are one combination
    assert sraven.split(4) == sraven.split(4)  # fixed


@pytest.mark.parametrize("k,f", [(4, 8), (2, 5), (3, 16)])
def test_every_instance_obeys_its_rules(k, f):
    train, _ = sraven.split(k)
    drawn = sraven.sample(300, train, f, seed=3)
    assert drawn["grid"].shape == (300, 3, 3, k) and drawn["grid"].max() < f and drawn["grid"].min() >= 0
    for grid, rules, perm, combo in zip(drawn["grid"], drawn["rules"], drawn["perm"], drawn["combo"]):
        assert sorted(rules.tolist()) == list(train[combo])
        plain = sraven.unpermute(grid, perm)
        assert all(sraven.follows(rule, plain[:, :, i], f) for i, rule in enumerate(rules))
        for c in range(3):  # the permutation is shared by the rows of a column
            assert all((grid[r, c] == plain[r, c][perm[c]]).all() for r in range(3))


def test_columns_are_permuted_independently():
    drawn = sraven.sample(500, sraven.split(4)[0], 8, seed=0)
    assert (drawn["perm"][:, 0] != drawn["perm"][:, 1]).any(-1).mean() > 0.9
    plain = sraven.sample(5, sraven.split(4)[0], 8, seed=0, permute=False)
    assert (plain["perm"] == np.arange(4)).all()


def test_follows_rejects_broken_rows():
    assert sraven.follows(5, [[1, 2, 3], [4, 4, 0], [7, 7, 6]], 8)
    assert not sraven.follows(5, [[1, 2, 4], [4, 4, 0], [7, 7, 6]], 8)
    assert sraven.follows(7, [[1, 2, 3], [3, 1, 2], [2, 3, 1]], 8)
    assert not sraven.follows(7, [[1, 2, 3], [3, 1, 2], [2, 3, 4]], 8)
    assert sraven.follows(4, [[1, 7, 5], [0, 6, 4], [2, 0, 6]], 8)


def test_tokens_context_then_zero_placeholders():
    drawn = sraven.sample(4, sraven.split(4)[0], 8, seed=1)
    x, target = sraven.tokens(drawn["grid"], 8)
    assert x.shape == (4, 36, 8) and target.shape == (4, 4)
    assert (x[:, :32].sum(-1) == 1).all() and (x[:, 32:] == 0).all()
    assert (x[:, :32].argmax(-1).reshape(4, 8, 4) == torch.as_tensor(drawn["grid"].reshape(4, 9, 4)[:, :8])).all()
    assert (target == torch.as_tensor(drawn["grid"][:, 2, 2])).all()


def test_all_correct_needs_every_feature():
    target = torch.tensor([[1, 2], [3, 4]])
    logits = torch.nn.functional.one_hot(torch.tensor([[0, 0, 1, 2], [0, 0, 3, 0]]), 5).float()
    assert sraven.all_correct(logits, target).tolist() == [True, False]


def test_counting_formula():
    assert sraven.count_tasks(4) == 330 * (24**2 - 4)
    assert [len(sraven.combinations(k)) for k in (2, 3, 4, 5)] == [36, 120, 330, 792]
    assert sraven.grids_per_rule(7, 8) == 56 * 216


def test_ambiguity_checker():
    # a feature that is constant 0 is also addition and subtraction: with a third row (2, 2, ?)
    # constant says 2, addition 4, subtraction 0, so one feature alone is ambiguous (K = 1)
    grid = np.array([[0, 0, 0], [0, 0, 0], [2, 2, 2]])[..., None]
    assert sraven.is_ambiguous(grid, 8)
    clean = np.array([[1, 2, 3], [5, 6, 7], [2, 3, 4]])[..., None]  # progression +1 only
    assert not sraven.is_ambiguous(clean, 8)
    rate = np.mean([sraven.is_ambiguous(g, 8) for g in sraven.sample(200, sraven.split(4)[0], 8, seed=0)["grid"]])
    assert rate < 0.05


def test_distribute_three_answers_the_least_used_value_of_the_set():
    """As the official checker: rows 1-2 permutations of one multiset, row 3's two values in it; the
    answer is the set's value they use least, the smallest on a tie (not the sum minus both)."""

    def allowed(rows12, a, b, f=8):
        return set(np.flatnonzero(sraven.answers(np.array([*rows12[0], *rows12[1], a, b]), f)).tolist())

    assert 4 in allowed([(1, 4, 6), (6, 1, 4)], 6, 1)  # distinct values: the one missing
    assert 1 in allowed([(1, 3, 5), (5, 1, 3)], 5, 5)  # a = b = 5: 1 and 3 unused, the first of them
    assert (1 + 3 + 5 - 10) % 8 not in allowed([(1, 3, 5), (5, 1, 3)], 5, 5)  # not the sum minus a and b
    assert 5 in allowed([(2, 2, 5), (5, 2, 2)], 2, 2)  # a repeated value in the set: 5 unused
    assert allowed([(1, 3, 5), (5, 1, 3)], 2, 1) == set()  # 2 is not in the set: the rule does not apply


def test_dataset_matches_sampler():
    train, _ = sraven.split(2)
    data = sraven.dataset(50, train, 8, seed=4)
    x, target = sraven.dataset_tokens(data, 8)
    drawn = sraven.sample(50, train, 8, seed=4 * 1_000_003)
    assert (target == torch.as_tensor(drawn["grid"][:, 2, 2])).all() and x.shape == (50, 18, 8)


def test_bad_arguments():
    with pytest.raises(ValueError, match="holdout"):
        sraven.split(4, holdout=1.5)
    with pytest.raises(ValueError, match="rule=9"):
        sraven.rule_rows(9, 2, 8, np.random.default_rng(0))


def _fits(rule: int, rows: list[list[int]], f: int) -> bool:
    """Whether the completed ``3 × 3`` grid of one feature obeys ``rule``, written out from the rule
    definitions; distribute three as the official checker reads it (rows 1–2 the same multiset,
    the two given values of row 3 in it, the answer the value of the set they use least)."""
    if rule == 0:
        return all(row[0] == row[1] == row[2] for row in rows)
    if rule in (1, 2, 3, 4):
        step = {1: 1, 2: 2, 3: -1, 4: -2}[rule]
        return all((row[1] - row[0]) % f == step % f and (row[2] - row[1]) % f == step % f for row in rows)
    if rule == 5:
        return all((row[0] + row[1]) % f == row[2] for row in rows)
    if rule == 6:
        return all((row[0] - row[1]) % f == row[2] for row in rows)
    (a, b, answer), first = rows[2], rows[0]
    multiset = sorted(first)
    least_used = min(multiset, key=lambda v: ([a, b].count(v), multiset.index(v)))
    return multiset == sorted(rows[1]) and a in first and b in first and answer == least_used


def _brute_force_ambiguous(grid: np.ndarray, f: int) -> tuple[bool, bool]:
    """``(every_feature, some_other_panel)`` verdicts by trying every one of the ``(K!)³``
    permutations of the three columns' feature slots, one feature and one value at a time."""
    k = grid.shape[-1]
    g = grid.tolist()
    fitting = {}  # (slot in column 1, 2, 3) -> values of that feature's answer that some rule explains

    def values(slots):
        if slots not in fitting:
            rows = [[g[r][c][slots[c]] for c in range(3)] for r in range(3)]
            fitting[slots] = {
                v for v in range(f) if any(_fits(rule, rows[:2] + [rows[2][:2] + [v]], f) for rule in range(8))
            }
        return fitting[slots]

    strict = loose = False
    for q in itertools.product(itertools.permutations(range(k)), repeat=3):
        slots = [(q[0][m], q[1][m], q[2][m]) for m in range(k)]
        fit = [values(s) for s in slots]
        other = [bool(fit[m] - {g[2][2][slots[m][2]]}) for m in range(k)]
        strict |= all(other)
        loose |= all(fit) and any(other)
        if strict and loose:
            break
    return strict, loose


@pytest.mark.parametrize("k,f,n,seed", [(3, 3, 40, 0), (3, 4, 40, 0), (4, 3, 40, 0), (4, 4, 40, 1)])
def test_ambiguity_checker_tries_every_correspondence(k, f, n, seed):
    """K ≥ 3, where pairing only some permutations of the columns changes the verdict: the
    vectorised checker against a brute force over all (K!)³ column permutations."""
    grids = sraven.sample(n, sraven.combinations(k), f, seed=seed)["grid"]
    verdicts = []
    for grid in grids:
        strict, loose = _brute_force_ambiguous(grid, f)
        assert sraven.is_ambiguous(grid, f) == strict
        assert sraven.is_ambiguous(grid, f, every_feature=False) == loose
        verdicts.append(strict)
    assert any(verdicts) and not all(verdicts)  # both kinds occur, so the comparison can fail


def test_baselines():
    assert sraven.chance(2, 8) == 1 / 64
    held = sraven.split(2)[1]
    permuted = sraven.rule_solver_accuracy(sraven.sample(2000, held, 8, seed=0)["grid"], 8)
    aligned = sraven.rule_solver_accuracy(sraven.sample(2000, held, 8, seed=0, permute=False)["grid"], 8)
    assert 0.9 < aligned < 1  # ambiguities and coinciding rules cost a few percent
    assert 0.2 < permuted < 0.3  # slots line up in 1/4 of the K = 2 instances (and rarely by luck)
    grid = np.array([[1, 2, 3], [5, 6, 7], [2, 3, 4]])[None, ..., None]  # progression +1 only
    assert sraven.rule_solver_accuracy(grid, 8) == 1.0
