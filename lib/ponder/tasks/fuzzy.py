"""In-context regression of fuzzy-logic functions (HYLA paper, arXiv 2406.05816, §3 and App. B).

With Zadeh's operators (AND = min, OR = max, NOT x = 1 − x) a task is a function of ``L``
variables in disjunctive normal form with ``K`` terms; each term is a conjunction of *all* ``L``
variables, some negated, so there are ``2^L`` terms (bit 1 = the variable appears un-negated)::

    f(x) = max_{t in terms} min_{v} (x_v if t_v = 1 else 1 − x_v),       x ~ U[0, 1]^L

* **Term split** (official ``logic_4var_2term``): the last 25 % of the terms in product order
  (1100, 1101, 1110, 1111 for L = 4) are removed: combinations of them are the *unknown terms*
  set. The C(12, 2) = 66 combinations of the remaining terms are shuffled with a fixed seed and
  the first ``int(frac_test · 66)`` are held out: every held-out task uses only terms seen in
  training, never together.
* **Sequence**: ``N`` tokens ``[x, f(x)]`` (dimension ``L + 1``); the last one is the query, its
  ``f(x)`` is masked to 0 and the model predicts it (mean-squared error).
* **R²** per sequence: ``1 − (ŷ − y_query)² / Var(y_1..y_N)``, averaged over sequences.
"""

import itertools
from collections.abc import Sequence

import numpy as np
import torch

from ..checks import check_int

VERSION = "1"


def terms(n_vars: int) -> np.ndarray:
    """``[2^L, L]`` every term as a bit pattern, in product order (1 = un-negated)."""
    return np.array(list(itertools.product((0, 1), repeat=check_int("n_vars", n_vars, minimum=1))), dtype=np.int64)


def split(
    n_vars: int = 4, n_terms: int = 2, frac_test: float = 0.7, frac_unknown_terms: float = 0.25, seed: int = 0
) -> dict[str, list]:
    """Term-index combinations: ``train``, ``test`` (held-out combinations of known terms) and
    ``unknown`` (combinations of the removed terms)."""
    if not 0 < frac_test < 1:
        raise ValueError(f"frac_test={frac_test} must lie in (0, 1)")
    total = 2**n_vars
    kept = total - int(total * frac_unknown_terms)
    known = list(itertools.combinations(range(kept), n_terms))
    order = np.random.default_rng(seed).permutation(len(known))
    cut = int(len(known) * frac_test)
    return {
        "train": [known[i] for i in order[cut:]],
        "test": [known[i] for i in order[:cut]],
        "unknown": list(itertools.combinations(range(kept, total), n_terms)),
    }


def evaluate(x: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """``f(x)`` for ``x`` ``[n, N, L]`` and the tasks' term patterns ``[n, K, L]`` -> ``[n, N]``."""
    literal = np.where(patterns[:, None, :, :] == 1, x[:, :, None, :], 1 - x[:, :, None, :])  # [n, N, K, L]
    return literal.min(-1).max(-1)


def sample(
    n: int,
    combos: Sequence[Sequence[int]],
    n_vars: int = 4,
    length: int = 32,
    seed: int = 0,
    fixed_context: int | None = None,
) -> dict[str, np.ndarray]:
    """Draw ``n`` sequences with tasks drawn uniformly from ``combos``.

    Returns ``x`` ``[n, N, L]``, ``y`` ``[n, N]`` (every target, the query's last) and ``combo``
    ``[n]`` (index into ``combos``). ``fixed_context``, a seed, draws the ``N − 1`` context inputs
    once from it and shares them across the sequences (only the query input and the task vary), for
    the latent-code analysis: two samples with the same ``fixed_context`` share their context.
    """
    check_int("n", n, minimum=0)
    check_int("length", length, minimum=2)
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    combo = rng.integers(len(combos), size=n)
    patterns = terms(n_vars)[np.asarray(combos)[combo]]  # [n, K, L]
    x = rng.random((n, length, n_vars))
    if fixed_context is not None:
        x[:, :-1] = np.random.default_rng(check_int("fixed_context", fixed_context, minimum=0)).random(
            (length - 1, n_vars)
        )
    return {"x": x, "y": evaluate(x, patterns), "combo": combo}


def tokens(x: np.ndarray, y: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """``(tokens [n, N, L+1], target [n])``: ``[x, f(x)]`` per example, the query's ``f`` masked to 0."""
    seq = torch.as_tensor(np.concatenate([x, y[..., None]], -1), dtype=torch.float32)
    seq[:, -1, -1] = 0.0
    return seq, torch.as_tensor(y[:, -1], dtype=torch.float32)


def batch(n: int, combos, n_vars: int, length: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(tokens, target, y)`` of :func:`sample`: what training and evaluation use."""
    drawn = sample(n, combos, n_vars, length, seed)
    seq, target = tokens(drawn["x"], drawn["y"])
    return seq, target, torch.as_tensor(drawn["y"], dtype=torch.float32)


def r2(prediction: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-sequence R²: ``1 − (ŷ − y_N)² / Var(y_1..y_N)`` (``[n]``); average it for the paper's number."""
    return 1 - (prediction - y[:, -1]) ** 2 / y.var(dim=1, unbiased=False)


def context_mean(y: torch.Tensor) -> torch.Tensor:
    """``[n]``: the mean of the ``N − 1`` context targets ``y`` ``[n, N]`` (its R² is about
    −1/(N−1): the query's own spread counts against it)."""
    return y[:, :-1].mean(dim=1)


def task_average(query: np.ndarray, combos: Sequence[Sequence[int]], n_vars: int = 4) -> torch.Tensor:
    """``[n]``: the average over the tasks ``combos`` of ``f(query)`` for queries ``[n, L]``, the best
    prediction that ignores the context (with ``combos`` the training tasks: what a model reaches
    without reading the task from the context, the level it must leave)."""
    patterns = terms(n_vars)[np.asarray(combos)]  # [C, K, L]
    query = np.asarray(query, dtype=np.float64)[:, None, :]  # [n, 1, L]
    values = [evaluate(query, np.broadcast_to(p, (len(query),) + p.shape))[:, 0] for p in patterns]
    return torch.as_tensor(np.mean(values, axis=0), dtype=torch.float32)


def _rows(n: int, combos: tuple, n_vars: int, length: int, seed: int, version: str, chunk: int = 4096):
    for start in range(0, n, chunk):
        drawn = sample(min(chunk, n - start), combos, n_vars, length, seed * 1_000_003 + start)
        for x, y, c in zip(drawn["x"], drawn["y"], drawn["combo"]):
            yield {"x": x.reshape(-1).tolist(), "y": y.tolist(), "combo": combos[c]}


def dataset(n: int, combos, n_vars: int, length: int, seed: int):
    """A fixed evaluation set as a cached ``datasets.Dataset``: ``x`` ``[n, N·L]``, ``y`` ``[n, N]``,
    ``combo`` ``[n, K]`` (the task's term indices)."""
    import datasets

    from ..paths import data_cache_dir

    combos = tuple(tuple(int(t) for t in c) for c in combos)
    features = datasets.Features(
        {
            "x": datasets.List(datasets.Value("float64"), length=length * n_vars),
            "y": datasets.List(datasets.Value("float64"), length=length),
            "combo": datasets.List(datasets.Value("int64"), length=len(combos[0])),
        }
    )
    gen = {"n": n, "combos": combos, "n_vars": n_vars, "length": length, "seed": seed, "version": VERSION}
    return datasets.Dataset.from_generator(
        _rows, features=features, gen_kwargs=gen, cache_dir=str(data_cache_dir())
    ).with_format("numpy")


def dataset_tokens(data, n_vars: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(tokens, target, y)`` of a :func:`dataset`."""
    columns = data[:]
    x, y = columns["x"].reshape(len(columns["y"]), -1, n_vars), columns["y"]
    seq, target = tokens(x, y)
    return seq, target, torch.as_tensor(y, dtype=torch.float32)
