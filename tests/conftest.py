"""Every test works in temporary folders: nothing is written into results/, figures/ or .cache/."""

import ponder  # noqa: F401  (first: pins the numerics before any test module imports torch)

# isort: split

import os

import pytest

os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")


@pytest.fixture(autouse=True)
def isolated_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PONDER_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("PONDER_DATA_CACHE", str(tmp_path / "datasets"))
    return tmp_path


@pytest.fixture
def run_one_cell(tmp_path):
    """``run_one_cell(code)``: a notebook of that one cell, executed by papermill as the project runs
    its notebooks (:func:`ponder.repro.execution.papermill_execute`); the cell's outputs."""
    import nbformat

    from ponder.repro import execution

    def run(code: str) -> list:
        nb = nbformat.v4.new_notebook(
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
        )
        nb.cells = [nbformat.v4.new_code_cell(code)]
        nbformat.write(nb, tmp_path / "one-cell.ipynb")
        execution.papermill_execute(tmp_path / "one-cell.ipynb", tmp_path / "one-cell-out.ipynb")
        return nbformat.read(tmp_path / "one-cell-out.ipynb", as_version=4).cells[0].outputs

    return run
