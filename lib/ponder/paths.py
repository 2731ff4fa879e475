"""Where things live: the repository root and the folders derived from it.

Every path can be moved with an environment variable (used by the tests to work in a
temporary folder): ``PONDER_RESULTS``, ``PONDER_FIGURES``, ``PONDER_DATA_CACHE``.

``PONDER_SEED`` (set by ``make figures SEED=N`` for N != 0) keeps another seed's figures and
ledger apart from the published ones: ``figures/seed-N/...`` and ``results/<profile>/claims-seed-N``.
"""

import os
from pathlib import Path

from .profiles import EXTENDS

ROOT = Path(__file__).resolve().parents[2]


def results_dir(profile: str) -> Path:
    """``results/<profile>/``: the claims rows of one profile (and its run cache, :func:`runs_dir`)."""
    return Path(os.environ.get("PONDER_RESULTS", ROOT / "results")) / profile


def runs_dir(profile: str) -> Path:
    """The run cache of ``profile``: ``results/<profile>/``, where ``cpu`` shares ``quick``'s (its
    runs are quick's and more of the same; a run's key holds everything it is, so a run both ask
    for is trained once)."""
    return results_dir(EXTENDS.get(profile, profile))


def seed() -> str:
    """The seed of the figures being made: ``PONDER_SEED``, ``"0"`` (the published one) by default."""
    return os.environ.get("PONDER_SEED", "0")


def seed_tag() -> str:
    """``""`` for the published seed 0, ``"seed-N"`` for another."""
    return "" if seed() == "0" else f"seed-{seed()}"


def figures_dir(profile: str) -> Path:
    """``figures/`` for the default ``quick`` profile, ``figures/<profile>/`` for the others, each
    under ``seed-N/`` for another seed than 0.

    ``make test`` runs the notebooks in ``smoke`` and must not overwrite the published figures.
    """
    return Path(os.environ.get("PONDER_FIGURES", ROOT / "figures")) / seed_tag() / profile_folder(profile)


def profile_folder(profile: str) -> str:
    """Where ``profile``'s figures sit under ``figures/``: in it for ``quick``, in ``<profile>/`` for the others."""
    return "" if profile == "quick" else profile


def claims_dir(profile: str) -> Path:
    """``results/<profile>/claims`` (``claims-seed-N`` for another seed): the ledger's rows."""
    tag = seed_tag()
    return results_dir(profile) / ("claims" + (f"-{tag}" if tag else ""))


def data_cache_dir() -> Path:
    """Arrow files of generated data sets (git-ignored, cleared by ``make clean``)."""
    return Path(os.environ.get("PONDER_DATA_CACHE", ROOT / ".cache" / "datasets"))
