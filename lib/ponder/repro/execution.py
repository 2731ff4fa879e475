"""Executing a notebook: the one way ``make figures``, ``make test``, ``make refresh`` and the tests run
the notebooks in ``notebooks/``, each on the notebooks' kernel with its parameters injected by papermill
(``profile``, ``seed``, ``interactive=False``)."""

import os
from pathlib import Path

from ..paths import ROOT
from ..profiles import check_profile

NOTEBOOKS = ROOT / "notebooks"


def find(names: list[str] | None = None) -> list[Path]:
    """The notebooks in ``notebooks/`` (all, or those named, with or without ``.ipynb``)."""
    every = sorted(NOTEBOOKS.glob("*.ipynb"))
    if not names:
        return every
    by_stem = {p.stem: p for p in every}
    unknown = [n for n in names if Path(n).stem not in by_stem]
    if unknown:
        raise ValueError(f"unknown notebook(s) {unknown}; choose from {sorted(by_stem)}")
    return [by_stem[Path(n).stem] for n in names]


def parameters(profile: str, seed: int) -> dict:
    """What a notebook's ``parameters`` cell is given: the profile, the seed, no widgets."""
    return {"profile": check_profile(profile), "seed": seed, "interactive": False}


def papermill_execute(source: Path, target: Path, parameters: dict | None = None, **options) -> None:
    """papermill runs ``source`` into ``target`` on the notebooks' kernel, reached over Unix sockets.

    The kernel manager is :class:`ponder.repro.kernels.AsyncSocketKernelManager`: kernels started side by
    side never race for a TCP port. ``options``: papermill's (``cwd``, ``prepare_only``, ...).
    """
    import papermill

    from .kernels import AsyncSocketKernelManager

    papermill.execute_notebook(
        str(source),
        str(target),
        parameters=parameters,
        kernel_name="python3",
        progress_bar=False,
        kernel_manager_class=AsyncSocketKernelManager,
        **options,
    )


def execute(source: Path, target: Path, profile: str, seed: int) -> None:
    """Execute the notebook ``source`` into ``target`` with ``profile`` and ``seed`` injected, in
    ``source``'s folder (where its relative paths point). Its kernel knows the notebook by name
    (``PONDER_NOTEBOOK``), which each ledger row it makes records (:func:`ponder.ledger.rows.made_by`)."""
    os.environ["PONDER_NOTEBOOK"] = source.name  # the kernel papermill starts next inherits it
    papermill_execute(source, target, parameters(profile, seed), cwd=str(source.parent))


def prepare(profile: str, out: Path, seed: int = 0, names: list[str] | None = None) -> list[Path]:
    """Copies of the notebooks in ``out`` with parameters injected and nothing executed (what
    ``make test`` hands to nbval)."""
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for path in find(names):
        target = out / path.name
        papermill_execute(path, target, parameters(profile, seed), prepare_only=True)
        made.append(target)
    return made
