"""Profiles: how big every experiment is.

* ``smoke`` — tests and CI: every notebook end to end in seconds; numbers are meaningless.
* ``quick`` — default of ``make figures``: a 2-core laptop without a GPU, all notebooks ≤ 35 min.
* ``gpu``   — one GPU (an H100) for about 20 minutes in all: the claims that need scale at the
  papers' model sizes (HYLA sraven at K = 4, Hyper-UT at length 16 with 8 steps, ACM on a
  12-block ViT), the rest at sizes between ``quick`` and ``paper``. Its figures are committed
  under ``figures/gpu/``.
* ``paper`` — the papers' sizes where known, else the largest faithful setting (several GPUs).

Sizes are data: each experiment keeps a table ``{profile: sizes}`` and reads its row with
:func:`by_profile`, so there is no ``if profile == ...`` scattered through the code.
"""
from typing import Mapping, TypeVar

from .checks import check_choice

PROFILES = ("smoke", "quick", "gpu", "paper")

T = TypeVar("T")


def check_profile(profile: str) -> str:
    """Return ``profile`` if it is known, else raise a ``ValueError`` listing the profiles."""
    return check_choice("profile", profile, PROFILES)


def by_profile(table: Mapping[str, T], profile: str) -> T:
    """The row of ``table`` for ``profile``; every table must define every profile."""
    check_profile(profile)
    missing = [p for p in PROFILES if p not in table]
    if missing:
        raise KeyError(f"profile table lacks {missing}")
    return table[profile]
