"""C-PVR: conditional pointer-value retrieval (Hyper-UT, arXiv 2310.08866).

A sequence ``x`` of length ``L`` holds values in ``[0, L-1]``. Start at position 0; while
``x[p] > p`` follow the pointer ``p <- x[p]`` (one hop). The first value with ``x[p] <= p`` is
the label. Worked example::

    x = [3, 9, 4, 6, 0, 2, 8, 1, 5, 7]   ->   0 -> 3 -> 6 -> 8,  3 hops,  label x[8] = 5

An example with exactly ``M`` hops is a chain of positions ``0 < p_1 < ... < p_M <= L-1``,
linked from position 0 (``x[0] = p_1``, ``x[p_i] = p_{i+1}``), with a label drawn uniformly
from ``[0, p_M]`` at ``p_M``. Every other position holds uniform noise in ``[0, L-1]``: it is
never visited. Two ways to draw the chain (``end=``):

* ``"sorted"`` (the reimplementation ``clement-bonnet/FactorExe`` cites the paper for): ``M``
  distinct positions of ``1..L-1``, sorted. The end ``p_M`` is the largest of ``M`` draws, so
  ``P(p_M = L-1) = M / (L-1)``: the rule "answer ``x[L-1]``" (position ``L-1`` always ends a
  chain) scores ``M/(L-1)`` and more, rising exactly over the hop counts held out for testing.
* ``"uniform"`` (the default): the end ``p_M`` uniform over ``[M, L-1]``, then ``p_1..p_{M-1}``
  distinct and sorted below it. ``P(p_M = j) = 1 / (L - M)`` for every reachable ``j``: no
  position is favoured, and the best position-only rule (:func:`position_rule_accuracy`) stays
  near chance while ``L - M`` is large.
"""

from collections.abc import Sequence

import numpy as np
import torch

from ..checks import check_choice, check_int

VERSION = "2"  # bump when the sampler changes: it is part of every data set's fingerprint
ENDS = ("uniform", "sorted")


def count_hops(x) -> tuple[int, int]:
    """``(hops, label)`` of one sequence (list, numpy array or 1-d tensor of ints)."""
    x = [int(v) for v in (x.tolist() if hasattr(x, "tolist") else x)]
    if not x:
        raise ValueError("x must be a non-empty sequence")
    if min(x) < 0 or max(x) >= len(x):
        raise ValueError(f"values of x must lie in [0, {len(x) - 1}] (the sequence length minus one)")
    position, hops = 0, 0
    while x[position] > position:
        position, hops = x[position], hops + 1
    return hops, x[position]


def _hop_counts(n: int, length: int, hops, generator: torch.Generator) -> torch.Tensor:
    """``[n]`` hop counts: ``hops`` itself, or drawn uniformly from the allowed counts."""
    allowed = [hops] if isinstance(hops, (int, np.integer)) else list(hops)
    if not allowed:
        raise ValueError("hops must be an int or a non-empty list of hop counts")
    for h in allowed:
        check_int("hops", h, minimum=0, maximum=length - 1)
    allowed = torch.tensor(allowed, dtype=torch.long)
    return allowed[torch.randint(len(allowed), (n,), generator=generator)]


def _chain(m: torch.Tensor, length: int, end: str, generator: torch.Generator) -> torch.Tensor:
    """``[n, L-1]`` chains: row ``i`` holds ``p_1 < ... < p_{m_i}``, then the padding ``L``."""
    n = len(m)
    slots = torch.arange(length - 1)[None, :]  # [1, L-1]
    keys = torch.rand(n, length - 1, generator=generator)  # a random order of the positions 1..L-1
    if end == "sorted":  # the first m_i of the order, sorted
        picked = torch.where(slots < m[:, None], keys.argsort(dim=1) + 1, length)
    else:  # p_M uniform over [M, L-1]; the first m_i - 1 of the positions below it, sorted
        last = m + (torch.rand(n, generator=generator) * (length - m)).long()  # [n]
        below = keys.masked_fill(slots + 1 >= last[:, None], 2.0).argsort(dim=1) + 1
        picked = torch.where(slots < m[:, None] - 1, below, torch.where(slots == m[:, None] - 1, last[:, None], length))
    return picked.sort(dim=1).values


def sample(
    n: int, length: int, hops: int | Sequence[int], seed: int, end: str = "uniform"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Draw ``n`` C-PVR examples, their chain ends drawn as ``end`` says (module docstring).

    Returns ``x`` (LongTensor ``[n, length]``), ``hops`` and ``label`` (LongTensors ``[n]``) with
    ``count_hops(x[i]) == (hops[i], label[i])``. ``hops`` is one count or a list of allowed
    counts drawn uniformly; a count must lie in ``[0, length-1]``.
    """
    check_int("n", n, minimum=0)
    check_int("length", length, minimum=2)
    check_choice("end", end, ENDS)
    generator = torch.Generator().manual_seed(check_int("seed", seed))
    m = _hop_counts(n, length, hops, generator)  # [n]
    x = torch.randint(length, (n, length), generator=generator)
    chain = _chain(m, length, end, generator)  # p_1..p_m, then padding L
    on_chain = torch.arange(length - 1)[None, :] < m[:, None]  # [n, L-1]
    sources = torch.cat([torch.zeros(n, 1, dtype=torch.long), chain[:, :-1]], dim=1)  # 0, p_1..p_{m-1}
    rows = torch.arange(n)[:, None].expand_as(chain)
    x[rows[on_chain], sources[on_chain]] = chain[on_chain]
    last = torch.where(m > 0, chain.gather(1, (m - 1).clamp(min=0)[:, None])[:, 0], 0)  # p_m (or 0)
    label = (torch.rand(n, generator=generator) * (last + 1)).long()
    x[torch.arange(n), last] = label
    return x, m, label


TEST_SEED = 900_000_000  # the seeds of fixed test sets: far from every training step's
VALIDATION_SEED = 950_000_000  # the seeds of fixed validation sets: far from the test sets' and the steps'


def fixed_test_set(
    sample_fn, length: int, hops: Sequence[int], n: int, first_seed: int = TEST_SEED
) -> tuple[torch.Tensor, ...]:
    """``n`` examples per hop count in ``hops``, the same on every call: ``sample_fn(n, length, h,
    seed=first_seed + 1000 * h)`` for each ``h`` (:func:`sample`, or a variant with its signature),
    its outputs concatenated in the order of ``hops``; ``first_seed=VALIDATION_SEED`` for a
    validation set."""
    parts = [sample_fn(n, length, h, seed=first_seed + 1000 * h) for h in hops]
    return tuple(torch.cat(p) for p in zip(*parts))


def pointer_chain(x) -> list[int]:
    """Positions visited from 0 to the label's position, e.g. ``[0, 3, 6, 8]`` for the example."""
    x = [int(v) for v in (x.tolist() if hasattr(x, "tolist") else x)]
    chain = [0]
    while x[chain[-1]] > chain[-1]:
        chain.append(x[chain[-1]])
    return chain


def majority_accuracy(hops: torch.Tensor, label: torch.Tensor) -> dict[int, float]:
    """Chance level per hop count: accuracy of always answering the most frequent label."""
    chance = {}
    for h in hops.unique().tolist():
        counts = torch.bincount(label[hops == h])
        chance[h] = (counts.max() / counts.sum()).item()
    return chance


def position_rule_accuracy(x: torch.Tensor, hops: torch.Tensor, label: torch.Tensor) -> dict[int, torch.Tensor]:
    """Per hop count, ``[L]`` accuracies of the position-only rules "answer ``x[j]``", ``j = 0..L-1``.

    The best of them is the strongest shortcut that reads one fixed position: a model that
    learned it would look as if it generalised over hops wherever chains tend to end at ``j``.
    """
    return {h: (x[hops == h] == label[hops == h, None]).float().mean(0) for h in hops.unique().tolist()}


def _rows(n: int, length: int, hops: tuple[int, ...], seed: int, end: str, version: str, chunk: int = 4096):
    """Generator for ``datasets``: one dict per example, drawn in chunks of ``chunk``."""
    for start in range(0, n, chunk):
        x, m, label = sample(min(chunk, n - start), length, hops, seed=seed * 1_000_003 + start, end=end)
        for xi, mi, li in zip(x.tolist(), m.tolist(), label.tolist()):
            yield {"x": xi, "hops": mi, "label": li}


def dataset(n: int, length: int, hops: int | Sequence[int], seed: int, end: str = "uniform"):
    """A fixed C-PVR set as a ``datasets.Dataset`` (Arrow, torch format), cached locally.

    Every generation knob (``n``, ``length``, ``hops``, ``seed``, ``end``) and the sampler ``VERSION``
    are ``gen_kwargs``, so they are all in the fingerprint: changing any of them regenerates.
    Columns: ``x`` ``[n, length]``, ``hops`` ``[n]``, ``label`` ``[n]``.
    """
    import datasets

    from ..paths import data_cache_dir

    # a tuple, not a list: ``datasets`` splits list-valued gen_kwargs into shards
    hops = (int(hops),) if isinstance(hops, (int, np.integer)) else tuple(sorted(int(h) for h in hops))
    for h in hops:
        check_int("hops", h, minimum=0, maximum=length - 1)
    features = datasets.Features(
        {
            "x": datasets.List(datasets.Value("int64"), length=length),
            "hops": datasets.Value("int64"),
            "label": datasets.Value("int64"),
        }
    )
    data = datasets.Dataset.from_generator(
        _rows,
        features=features,
        gen_kwargs={
            "n": n,
            "length": length,
            "hops": hops,
            "seed": seed,
            "end": check_choice("end", end, ENDS),
            "version": VERSION,
        },
        cache_dir=str(data_cache_dir()),
    )
    return data.with_format("torch")
