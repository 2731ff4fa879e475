"""sraven: symbolic Raven's Progressive Matrices (HYLA paper, arXiv 2406.05816, §4 and App. B).

A problem is a 3×3 grid of panels; each panel is a tuple of ``K`` integer features in
``{0, …, F-1}``. Each feature follows one of the 8 :data:`RULES` along every row (all arithmetic
mod ``F``; each row is drawn independently). The model sees the 8 context panels and must
predict all ``K`` features of the 9th.

* **Latent = rule combination**: a multiset of ``K`` rules (``combinations_with_replacement``),
  330 for K = 4. A fixed permutation puts ``int(0.25 · 330) = 82`` of them in the held-out
  (OOD) set: unordered combinations never straddle the split.
* **Finding correspondences**: per instance and per column a random permutation of the feature
  slots, shared by the three rows of the column, so the task does not split into K
  independent one-feature tasks.
* **Tokens**: one token per feature of a panel, one-hot over ``F``; panels in row-major order,
  the 8 context panels (``8K`` tokens), then ``K`` all-zero placeholder tokens for the answer.
* **Metric**: an instance is solved when all ``K`` predicted features are correct.

Counting (App. B.1): ``C(R+K-1, K) · ((K!)^(G-1) − K)`` tasks.
"""

import itertools
import math
from collections.abc import Sequence

import numpy as np
import torch

from ..checks import check_int

VERSION = "1"
RULES = (
    "constant",
    "progression +1",
    "progression +2",
    "progression −1",
    "progression −2",
    "addition",
    "subtraction",
    "distribute three",
)
STEPS = {1: 1, 2: 2, 3: -1, 4: -2}  # progression rules: the step between columns
GRID = 3  # rows and columns


def combinations(k: int) -> list[tuple[int, ...]]:
    """Every multiset of ``k`` rules, as sorted tuples (330 for k = 4)."""
    return list(itertools.combinations_with_replacement(range(len(RULES)), check_int("k", k, minimum=1)))


def split(k: int, holdout: float = 0.25, seed: int = 0) -> tuple[list, list]:
    """``(in_distribution, held_out)`` rule combinations: a fixed permutation, the first
    ``int(holdout · n)`` held out."""
    if not 0 < holdout < 1:
        raise ValueError(f"holdout={holdout} must lie in (0, 1)")
    combos = combinations(k)
    order = np.random.default_rng(seed).permutation(len(combos))
    cut = int(len(combos) * holdout)
    return [combos[i] for i in order[cut:]], [combos[i] for i in order[:cut]]


def rule_rows(rule: int, n: int, f: int, rng: np.random.Generator) -> np.ndarray:
    """``[n, 3 rows, 3 columns]`` values of one feature following ``rule`` (rows drawn independently)."""
    cols = np.arange(GRID)
    if rule == 0:
        return np.repeat(rng.integers(f, size=(n, GRID, 1)), GRID, axis=2)
    if rule in STEPS:
        return (rng.integers(f, size=(n, GRID, 1)) + STEPS[rule] * cols) % f
    if rule in (5, 6):
        a, b = rng.integers(f, size=(2, n, GRID))
        return np.stack([a, b, (a + b if rule == 5 else a - b) % f], axis=2)
    if rule == 7:
        values = rng.permuted(np.tile(np.arange(f), (n, 1)), axis=1)[:, :GRID]  # 3 distinct values
        order = rng.permuted(np.tile(cols, (n, GRID, 1)), axis=2)  # each row its own arrangement
        return np.take_along_axis(values[:, None, :].repeat(GRID, 1), order, axis=2)
    raise ValueError(f"rule={rule} is not allowed; choose one of 0..{len(RULES) - 1} ({', '.join(RULES)})")


def sample(
    n: int, combos: Sequence[Sequence[int]], f: int = 8, seed: int = 0, permute: bool = True
) -> dict[str, np.ndarray]:
    """Draw ``n`` instances with rule combinations drawn uniformly from ``combos``.

    Returns numpy arrays: ``grid`` ``[n, 3, 3, K]`` (after the column permutations), ``rules``
    ``[n, K]`` (the rule of each *unpermuted* feature), ``perm`` ``[n, 3, K]`` (slot ``j`` of
    column ``c`` holds feature ``perm[c, j]``) and ``combo`` ``[n]`` (index into ``combos``).
    ``permute=False`` keeps the identity (slot = feature), for the latent-code analysis.
    """
    check_int("n", n, minimum=0)
    check_int("f", f, minimum=3)
    combos = np.asarray(combos, dtype=np.int64)
    k = combos.shape[1]
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    combo = rng.integers(len(combos), size=n)
    rules = rng.permuted(combos[combo], axis=1)  # which feature gets which rule: a random assignment
    values = np.zeros((n, GRID, GRID, k), dtype=np.int64)
    for r in range(len(RULES)):
        rows, feats = np.nonzero(rules == r)
        values[rows, :, :, feats] = rule_rows(r, len(rows), f, rng)
    perm = rng.permuted(np.tile(np.arange(k), (n, GRID, 1)), axis=2) if permute else np.tile(np.arange(k), (n, GRID, 1))
    grid = np.take_along_axis(values, perm[:, None, :, :].repeat(GRID, 1), axis=3)
    return {"grid": grid, "rules": rules, "perm": perm, "combo": combo}


def tokens(grid: np.ndarray, f: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x [n, 9K, F] float, target [n, K] long)``: one-hot context features then K zero tokens."""
    n, _, _, k = grid.shape
    flat = torch.as_tensor(grid.reshape(n, GRID * GRID * k))
    x = torch.nn.functional.one_hot(flat, f).float()
    x[:, -k:] = 0.0
    return x, flat[:, -k:].clone()


def batch(n: int, combos, f: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``tokens(sample(...))``: what a training step or an evaluation set needs."""
    return tokens(sample(n, combos, f, seed)["grid"], f)


def answer_logits(logits: torch.Tensor, k: int) -> torch.Tensor:
    """The ``[n, K, F]`` logits at the ``K`` answer placeholders."""
    return logits[:, -k:]


def all_correct(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``[n]`` bool: every feature of the answer panel right (the paper's accuracy)."""
    return (answer_logits(logits, target.shape[1]).argmax(-1) == target).all(-1)


def follows(rule: int, rows: np.ndarray, f: int) -> bool:
    """Whether a ``[3, 3]`` (rows × columns) value grid of one feature obeys ``rule``."""
    rows = np.asarray(rows) % f
    if rule == 0:
        return bool((rows == rows[:, :1]).all())
    if rule in STEPS:
        return bool((np.diff(rows, axis=1) % f == STEPS[rule] % f).all())
    if rule == 5:
        return bool(((rows[:, 0] + rows[:, 1]) % f == rows[:, 2]).all())
    if rule == 6:
        return bool(((rows[:, 0] - rows[:, 1]) % f == rows[:, 2]).all())
    values = set(rows[0])
    return len(values) == GRID and all(set(row) == values for row in rows)


def unpermute(grid: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Undo the column permutations of one ``[3, 3, K]`` grid: feature ``i`` back in slot ``i``."""
    out = np.empty_like(grid)
    for c in range(GRID):
        out[:, c, perm[c]] = grid[:, c]
    return out


def answers(first_two: np.ndarray, f: int) -> np.ndarray:
    """``[..., F]`` bool: which third values some rule allows, given complete rows 1–2 and the
    first two values of row 3. ``first_two`` is ``[..., 8]``: rows 1–2 (3 values each), then 2."""
    r = first_two
    full = np.stack([r[..., 0:3], r[..., 3:6]], axis=-2)  # [..., 2, 3]
    a, b = r[..., 6], r[..., 7]
    values = np.arange(f)
    allowed = np.zeros(r.shape[:-1] + (f,), dtype=bool)

    def put(ok, value):
        nonlocal allowed
        allowed = allowed | (ok[..., None] & (values == (value % f)[..., None]))

    put((full == full[..., :1]).all((-1, -2)) & (a == b), a)
    for step in STEPS.values():
        ok = (np.diff(full, axis=-1) % f == step % f).all((-1, -2))
        put(ok & ((b - a) % f == step % f), b + step)
    put(((full[..., 0] + full[..., 1]) % f == full[..., 2]).all(-1), a + b)
    put(((full[..., 0] - full[..., 1]) % f == full[..., 2]).all(-1), a - b)
    # distribute three, read as the official checker reads it: rows 1-2 the same multiset, a and b in
    # it, and the answer the value of the sorted set that a and b use least (the first on a tie). With a
    # repeated value in row 3 (a = b) this is not the set's sum minus a and b.
    s = np.sort(full, axis=-1)
    values_of_set = s[..., 0, :]  # [..., 3]
    same_set = (values_of_set == s[..., 1, :]).all(-1)
    in_set = lambda v: (values_of_set == v[..., None]).any(-1)  # noqa: E731
    uses = (values_of_set == a[..., None]).astype(int) + (values_of_set == b[..., None])
    least_used = np.take_along_axis(values_of_set, uses.argmin(-1)[..., None], -1)[..., 0]
    put(same_set & in_set(a) & in_set(b), least_used)
    return allowed


def chance(k: int, f: int) -> float:
    """Accuracy of guessing every answer feature uniformly: ``F^-K``."""
    return float(f) ** -k


def rule_solver_accuracy(grid: np.ndarray, f: int) -> float:
    """Expected accuracy of a solver that knows the 8 rules but not the correspondences, on
    ``[n, 3, 3, K]`` grids.

    For each answer slot it takes the values of that slot in every column as one feature and picks
    uniformly among the values some rule allows (:func:`answers`), or among all ``F`` when none
    does. On permuted grids this is what knowing the rules is worth before the correspondences are
    found (about ``(K!)^-2``: the slots line up when the column permutations coincide); on
    unpermuted grids (``sample(..., permute=False)``) it is the ceiling of a rule solver.
    """
    n, _, _, k = grid.shape
    solved = np.ones(n)
    for slot in range(k):
        values = grid[:, :, :, slot].reshape(n, GRID * GRID)
        allowed = answers(values[:, :-1], f)
        count = allowed.sum(-1)
        right = allowed[np.arange(n), values[:, -1]]
        solved *= np.where(count > 0, right / np.maximum(count, 1), 1 / f)
    return float(solved.mean())


def is_ambiguous(grid: np.ndarray, f: int, every_feature: bool = True) -> bool:
    """Brute force over the correspondences between columns: does another answer fit?

    For each choice of feature permutations of the columns, a feature *fits* a value if some rule
    explains its two complete rows and, with that value, its third row. With ``every_feature``
    (the official code's ``check_is_ambiguous``, behind Table A2) an instance is ambiguous when
    some correspondence lets **every** feature of the answer fit a value other than the true one;
    without it, when some correspondence fits a whole answer panel other than the true one.
    Column 1 is the reference (permuting all columns alike only relabels features), so every
    pair of permutations of columns 2 and 3, ``(K!)²`` correspondences, is tried instead of the
    official ``(K!)³``: the same verdict.
    """
    k = grid.shape[-1]
    g = grid.astype(np.int64)
    i, j1, j2 = np.meshgrid(np.arange(k), np.arange(k), np.arange(k), indexing="ij")
    known = np.stack(
        [g[0, 0][i], g[0, 1][j1], g[0, 2][j2], g[1, 0][i], g[1, 1][j1], g[1, 2][j2], g[2, 0][i], g[2, 1][j1]], -1
    )
    candidate = answers(known, f)  # [i, j1, j2, F]: values the third row of that pairing allows
    perms = np.array(list(itertools.permutations(range(k))))  # [K!, K]
    pairs = np.array(list(itertools.product(range(len(perms)), repeat=2)))  # every (column 2, column 3) pair
    p1, p2 = perms[pairs[:, 0]], perms[pairs[:, 1]]  # [(K!)², K] each: feature i sits in slots (i, p1[i], p2[i])
    options = candidate[np.arange(k), p1, p2]  # [(K!)², K, F]
    other = options & (np.arange(f) != g[2, 2][p2][..., None])  # a value other than the true one fits
    if every_feature:
        return bool(other.any(-1).all(-1).any())
    return bool((options.any(-1).all(-1) & other.any(-1).any(-1)).any())


def count_tasks(k: int, rules: int = len(RULES), grid: int = GRID) -> int:
    """App. B.1: ``C(R+K-1, K) · ((K!)^(G-1) − K)`` tasks (rule combinations × correspondences)."""
    return math.comb(rules + k - 1, k) * (math.factorial(k) ** (grid - 1) - k)


def grids_per_rule(rule: int, f: int) -> int:
    """Number of distinct ``[3, 3]`` value grids one feature under ``rule`` can take."""
    if rule == 0 or rule in STEPS:
        return f**GRID  # one free value per row
    if rule in (5, 6):
        return f ** (2 * GRID)  # two free values per row
    return math.comb(f, 3) * math.factorial(3) ** GRID  # a set of 3, each row an arrangement


def count_instances(k: int, f: int) -> int:
    """Instances summed over rule combinations: ``Σ_combos Π_features grids(rule)`` times the
    ``(K!)^3`` column permutations (an upper bound: coincident grids are counted separately)."""
    total = sum(math.prod(grids_per_rule(r, f) for r in combo) for combo in combinations(k))
    return total * math.factorial(k) ** GRID


def _rows(n: int, combos: tuple, f: int, seed: int, version: str, chunk: int = 4096):
    for start in range(0, n, chunk):
        drawn = sample(min(chunk, n - start), combos, f, seed * 1_000_003 + start)
        for grid, rules, perm in zip(drawn["grid"], drawn["rules"], drawn["perm"]):
            yield {"grid": grid.reshape(-1).tolist(), "rules": rules.tolist(), "perm": perm.reshape(-1).tolist()}


def dataset(n: int, combos, f: int, seed: int):
    """A fixed evaluation set as a cached ``datasets.Dataset`` (torch format).

    Columns: ``grid`` ``[n, 9K]`` (row-major panels), ``rules`` ``[n, K]``, ``perm`` ``[n, 3K]``.
    """
    import datasets

    from ..paths import data_cache_dir

    combos = tuple(tuple(int(r) for r in c) for c in combos)
    k = len(combos[0])
    features = datasets.Features(
        {
            "grid": datasets.List(datasets.Value("int64"), length=GRID * GRID * k),
            "rules": datasets.List(datasets.Value("int64"), length=k),
            "perm": datasets.List(datasets.Value("int64"), length=GRID * k),
        }
    )
    data = datasets.Dataset.from_generator(
        _rows,
        features=features,
        gen_kwargs={"n": n, "combos": combos, "f": f, "seed": seed, "version": VERSION},
        cache_dir=str(data_cache_dir()),
    )
    return data.with_format("torch")


def dataset_tokens(data, f: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x, target)`` of a :func:`dataset`."""
    columns = data[:]
    grid, k = columns["grid"].numpy(), columns["rules"].shape[1]
    return tokens(grid.reshape(len(grid), GRID, GRID, k), f)
