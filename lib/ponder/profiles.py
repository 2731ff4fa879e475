"""Profiles: how big every experiment is.

* ``smoke`` — tests and CI: every notebook end to end in seconds; numbers are meaningless.
* ``quick`` — default of ``make figures``, sized for 2 CPU cores without a GPU within 35 minutes; what a
  cold run took, and on which machine, is in ``figures/TIMES.json``.
  The comparisons that need several seeds to be judged mostly get one here (the ledger then says
  inconclusive), the grids are thinned and the variants that only add to a figure are left out; ``cpu``
  has the rest.
* ``cpu``   — ``quick``'s task sizes on the same 2 cores, with longer training where a reference must
  converge (the ACM base models, fuzzy logic): every judged comparison on 5 seeds and the full grids
  (learning rates, pool sizes, budgets, depths, ablations); its time: ``figures/TIMES.json``. Its runs are mostly
  ``quick``'s plus more, in one cache (:func:`ponder.paths.runs_dir`); its figures and ledger are
  committed under ``figures/cpu/``.
* ``gpu``   — one GPU (never run end to end; ``docs/gpu.md`` estimates its time from the step
  rates ``python -m ponder.bench train`` measured on an H200): the claims that need scale at the
  papers' model sizes (HYLA sraven at K = 4 and 10.24M instances, Hyper-UT at length 16 with 8
  steps on 3 seeds, ACM on a 12-block ViT), the rest at sizes between ``quick`` and ``paper``, in
  ``quick``'s shape: one seed, thinner grids. The figures made on a GPU so far are provisional
  (``docs/gpu.md`` lists them) and under ``figures/gpu/``.
* ``paper`` — the papers' sizes where known, else the largest faithful setting (several GPUs).

Sizes are data: each experiment has a table ``{profile: sizes}`` in its study's ``sizes`` and reads its
row with :func:`by_profile`, so there is no ``if profile == ...`` scattered through the code. A table
may leave out ``cpu`` where it is ``quick``'s row (:data:`EXTENDS`). The run keys do not hash those
tables, only what a row puts into a run's config: re-sizing ``gpu`` leaves ``quick``'s runs cached.
"""

import os
from collections.abc import Mapping
from typing import TypeVar

from .checks import check_choice

PROFILES = ("smoke", "quick", "cpu", "gpu", "paper")
# The profiles sized for GPUs: on a CPU their runs take days (a step of gpu's 12-block ViT takes
# about 20 s on one core, and its base model trains 4,000 of them).
GPU_PROFILES = ("gpu", "paper")
# A profile a table may leave out, and the row it then reads.
EXTENDS = {"cpu": "quick"}

T = TypeVar("T")


def check_profile(profile: str) -> str:
    """Return ``profile`` if it is known, else raise a ``ValueError`` listing the profiles."""
    return check_choice("profile", profile, PROFILES)


def check_device(profile: str) -> str:
    """Return ``profile`` if it can train here, else raise a ``ValueError`` that says why not: a
    profile of :data:`GPU_PROFILES` where no CUDA device is visible, unless ``PONDER_ALLOW_CPU=1``."""
    if profile not in GPU_PROFILES or os.environ.get("PONDER_ALLOW_CPU") == "1":
        return profile
    import torch  # not at the top: ``import ponder`` pins the numerics before torch is imported

    if not torch.cuda.is_available():
        raise ValueError(
            f"profile {profile!r} is sized for GPUs and no CUDA device is visible: "
            "on this CPU its runs would take days. "
            "The gpu profile's provisional figures, made on an H100 and an H200, are in figures/gpu/ (docs/gpu.md). "
            "Here, use quick or cpu "
            "(or set PONDER_ALLOW_CPU=1 to train it on the CPU all the same)"
        )
    return profile


def by_profile(table: Mapping[str, T], profile: str) -> T:
    """The row of ``table`` for ``profile``; every table must define every profile except those of
    :data:`EXTENDS`, which read the row they extend where they have none."""
    check_profile(profile)
    missing = [p for p in PROFILES if p not in table and p not in EXTENDS]
    if missing:
        raise KeyError(f"profile table lacks {missing}")
    return table[profile] if profile in table else table[EXTENDS[profile]]


def run_sizes(sizes: Mapping[str, object]) -> dict:
    """The part of a profile's ``sizes`` that defines one run, for its cache key: all but ``seeds``
    (which runs a figure trains, not what one run is), so that a run ``quick`` and ``cpu`` both
    train has one key and trains once."""
    return {k: v for k, v in sizes.items() if k != "seeds"}
