"""Every test works in temporary folders: nothing is written into results/, figures/ or .cache/."""
import os

import pytest

import ponder  # noqa: F401  (first: pins the numerics before any test module imports torch)

os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")


@pytest.fixture(autouse=True)
def isolated_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PONDER_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("PONDER_DATA_CACHE", str(tmp_path / "datasets"))
    return tmp_path
