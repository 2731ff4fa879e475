"""Which of ``make lab``'s copies of the notebooks are stale.

``make lab`` copies ``notebooks/*.ipynb`` into ``build/lab/`` only where a notebook is newer than its copy
(``cp -u``; the replaced copy kept as a numbered backup), so a copy saved after its notebook changed (JupyterLab
autosaves) is kept though the notebook moved on. Beside the copies, :data:`RECORD` holds, per copy, a hash of the
cells of the notebook it was made from (:func:`cells_hash`); :func:`stale_copies` names each copy whose notebook's
cells differ from that.

``python -m ponder.repro.lab NOTEBOOKS COPIES`` prints a warning per stale copy (``make lab`` runs it after
copying).
"""

import hashlib
import json
import sys
from pathlib import Path

RECORD = ".sources.json"  # beside the copies: {notebook name: cells_hash of the notebook the copy was made from}


def cells_hash(path: Path) -> str | None:
    """A hash of a notebook's cells, their types and sources (outputs and metadata left out: running a copy
    changes nothing); None for a file that is not a notebook's JSON."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = [(cell["cell_type"], "".join(cell["source"])) for cell in cells]
    except (ValueError, KeyError, TypeError):
        return None
    return hashlib.sha256(json.dumps(text).encode()).hexdigest()


def refresh_hint(notebook: Path, copies: Path) -> str:
    """How to replace a copy of ``notebook`` by the notebook, its copy kept as a numbered backup."""
    return f"to refresh it (your copy kept as {notebook.name}.~N~): cp --backup=numbered {notebook} {copies}/"


def stale_copies(notebooks: Path, copies: Path) -> list[str]:
    """One warning per copy in ``copies`` of a notebook in ``notebooks`` whose cells changed since the copy was
    made, or, where :data:`RECORD` does not say, that differs from its notebook; the record is updated for each
    copy whose cells are its notebook's (just copied, or never edited)."""
    record_path = copies / RECORD
    record = json.loads(record_path.read_text(encoding="utf-8")) if record_path.exists() else {}
    warnings = []
    for notebook in sorted(notebooks.glob("*.ipynb")):
        copy, source = copies / notebook.name, cells_hash(notebook)
        if not copy.exists() or record.get(notebook.name) == source:
            continue
        if cells_hash(copy) == source:
            record[notebook.name] = source
        elif notebook.name in record:
            warnings.append(
                f"{copy} is stale: {notebook} has changed since it was copied; {refresh_hint(notebook, copies)}"
            )
        else:
            warnings.append(
                f"{copy} may be stale: its cells differ from {notebook}'s and no record says which version it was "
                f"copied from; {refresh_hint(notebook, copies)}"
            )
    record_path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return warnings


def main(argv: list[str]) -> None:
    """``NOTEBOOKS COPIES``: print the warnings of :func:`stale_copies` on stderr."""
    notebooks, copies = map(Path, argv)
    for warning in stale_copies(notebooks, copies):
        print(f"warning: {warning}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
