"""Where things live: the repository root and the folders derived from it.

Every path can be moved with an environment variable (used by the tests to work in a
temporary folder): ``PONDER_RESULTS``, ``PONDER_FIGURES``, ``PONDER_DATA_CACHE``.
"""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def results_dir(profile: str) -> Path:
    """``results/<profile>/``: the run cache and the claims rows of one profile."""
    return Path(os.environ.get("PONDER_RESULTS", ROOT / "results")) / profile


def figures_dir(profile: str) -> Path:
    """``figures/`` for the default ``quick`` profile, ``figures/<profile>/`` for the others.

    ``make test`` runs the notebooks in ``smoke`` and must not overwrite the published figures.
    """
    base = Path(os.environ.get("PONDER_FIGURES", ROOT / "figures"))
    return base if profile == "quick" else base / profile


def data_cache_dir() -> Path:
    """Arrow files of generated data sets (git-ignored, cleared by ``make clean``)."""
    return Path(os.environ.get("PONDER_DATA_CACHE", ROOT / ".cache" / "datasets"))
