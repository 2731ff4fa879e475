"""Parity, the task of ACT (Graves 2016) and PonderNet (Banino et al. 2021).

A vector ``x`` of ``dim`` entries in ``{-1, 0, 1}``; the label is the parity of the number of
``+1`` entries. The *difficulty* is the number of non-zero entries ``k``: an example of
difficulty ``k`` has ``k`` positions, chosen uniformly, each ``+1`` or ``-1`` with equal chance,
and zeros elsewhere. Worked example::

    x = [1, 0, -1, 1, 0, 0]   ->   difficulty 3, two +1 entries, label 0

Extrapolation (PonderNet §3.1): train on difficulties ``1..n`` and test on ``n+1..dim``.
"""

from collections.abc import Sequence

import torch

from ..checks import check_int


def parity(x: torch.Tensor) -> torch.Tensor:
    """``[..., dim] -> [...]`` long: the number of ``+1`` entries modulo 2."""
    return (x == 1).sum(dim=-1) % 2


def difficulty(x: torch.Tensor) -> torch.Tensor:
    """``[..., dim] -> [...]`` long: the number of non-zero entries."""
    return (x != 0).sum(dim=-1)


def sample(
    n: int, dim: int, nonzero: int | Sequence[int], seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Draw ``n`` parity examples.

    Returns ``x`` (float ``[n, dim]`` in ``{-1, 0, 1}``), the difficulty ``k`` and the label (long
    ``[n]``). ``nonzero`` is one difficulty or a list of allowed difficulties drawn uniformly;
    each must lie in ``[0, dim]``.
    """
    check_int("n", n, minimum=0)
    check_int("dim", dim, minimum=1)
    allowed = [nonzero] if isinstance(nonzero, int) else list(nonzero)
    if not allowed:
        raise ValueError("nonzero must be an int or a non-empty list of difficulties")
    for k in allowed:
        check_int("nonzero", k, minimum=0, maximum=dim)
    generator = torch.Generator().manual_seed(check_int("seed", seed))
    k = torch.tensor(allowed)[torch.randint(len(allowed), (n,), generator=generator)]  # [n]
    rank = torch.rand(n, dim, generator=generator).argsort(dim=1).argsort(dim=1)  # a random order
    signs = torch.randint(2, (n, dim), generator=generator) * 2 - 1
    x = torch.where(rank < k[:, None], signs, 0).float()
    return x, k, parity(x)
