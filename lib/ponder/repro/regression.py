"""The notebooks' regression cells: the smoke profile's numbers, checked by nbval on pinned platforms.

Every notebook that trains ends with one cell tagged ``nbval-check-output`` and :data:`TAG` that
calls :func:`report` with the notebook's frames. It prints them as plain text tables (floats to
3 decimals, 3 significant digits below 0.01) and the ledger rows the notebook recorded, with their
evidence and verdicts. ``make refresh`` stores the smoke profile's output in the notebook and
``make test`` compares a fresh run with it, so a change that moves any trained number fails a
test and shows as a diff in review.

* **Timings** vary from run to run: :func:`report` writes a timing column's values as ``~1.234``
  and a row of a target in :data:`TIMED` as ``timed: ...``; the patterns in
  :data:`SANITIZE` (``--nbval-sanitize-with``) mask both before nbval compares.
* **Platforms**: the numbers are the same bits only where :mod:`ponder.numerics` pins them
  (x86-64 with AVX2, on the CPU). Elsewhere :func:`skip_unpinned` (a pytest hook, loaded by the
  repository's ``conftest.py``) skips these cells, naming the platform: they are never loosened.
* **Storing them**: :func:`refresh` (``make refresh``) executes notebooks in ``smoke`` with a fresh
  run cache and writes each source back with outputs kept only in the checked cells, the JSON
  otherwise as it was, and prints a diff of the stored against the new checked outputs.
"""

import difflib
import json
import math
import numbers
import os
import platform
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

import pandas as pd

from .. import numerics
from ..ledger.rows import recorded
from ..paths import ROOT
from ..targets import TIMED
from . import execution

TAG = "pinned-numbers"
CHECKED = "nbval-check-output"  # the tag of the cells whose outputs nbval compares
SANITIZE = ROOT / "tests" / "nbval-sanitize.cfg"


def _numeric(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def number(value) -> str:
    """A cell of a checked table: floats to 3 decimals, 3 significant digits from 1e-6 to 0.01 (below
    that, float noise around zero reads 0.000), nan as ``—``."""
    if not _numeric(value) or isinstance(value, numbers.Integral):
        return str(value)
    if math.isnan(value):
        return "—"
    return f"{value:.3g}" if 1e-6 <= abs(value) < 0.01 else f"{round(value, 3) + 0.0:.3f}"  # + 0.0: no -0.000


def _columns(frame: pd.DataFrame) -> list[tuple[str, list]]:
    """``(header, values)`` per column, the index's levels first unless it is the default range."""
    named = not isinstance(frame.index, pd.RangeIndex)
    if named:
        frame = frame.reset_index(names=[name if name is not None else "" for name in frame.index.names])
    header = [" ".join(map(str, c)).strip() if isinstance(c, tuple) else str(c) for c in frame.columns]
    return [(h, frame.iloc[:, i].tolist()) for i, h in enumerate(header)]


def table(frame: pd.DataFrame | pd.Series, timings: Sequence[str] = ()) -> str:
    """``frame`` as aligned text (text left, numbers right); columns named in ``timings`` show ``~value``."""
    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    missing = set(timings) - set(map(str, frame.columns))
    if missing:
        raise KeyError(f"timing columns {sorted(missing)} are not in the frame's columns {list(frame.columns)}")
    columns = []
    for header, values in _columns(frame):
        cells = ["~" + number(v) if header in timings else number(v) for v in values]
        numeric = all(map(_numeric, values))
        width = max(map(len, [header, *cells]))
        columns.append([c.rjust(width) if numeric else c.ljust(width) for c in [header, *cells]])
    return "\n".join("  ".join(row).rstrip() for row in zip(*columns))


def rows_text(rows: list[dict]) -> str:
    """Ledger rows: the claim, then what was measured, the verdict and its evidence (``timed:`` for
    rows of :data:`TIMED`)."""
    lines = []
    for r in rows:
        measured = f"ours {r['ours']} | {r['verdict'] or 'describes'}" + (f" | {r['noise']}" if r["noise"] else "")
        lines += [f"[{r['id']}] {r['claim']}", ("  timed: " if r["id"] in TIMED else "  ") + measured]
    return "\n".join(lines)


def report(profile: str, *frames: pd.DataFrame | pd.Series, timings: Sequence[str] = ()) -> None:
    """Print the regression text of a notebook: ``frames`` as tables, then the ledger rows its
    kernel recorded at ``profile``. ``timings``: the frames' columns that hold wall-clock measurements."""
    print(f"{profile} profile: the numbers the regression tests check (~, timed: wall-clock, masked)")
    for frame in frames:
        print()
        print(table(frame, [t for t in timings if t in map(str, frame.columns)]))
    print()
    print(rows_text([r for r in recorded() if r["profile"] == profile]))


def sanitize(text: str) -> str:
    """``text`` with the patterns of :data:`SANITIZE` applied, as nbval applies them before comparing."""
    from nbval.plugin import get_sanitize_patterns

    for regex, replace in get_sanitize_patterns(SANITIZE.read_text()):
        text = re.sub(regex, replace, text)
    return text


def unpinned_reason() -> str | None:
    """Why this machine's smoke numbers need not be the stored ones (``None`` where they must be)."""
    reason = numerics.unsupported_reason()
    if reason is not None:
        return f"{reason} ({platform.machine()}, {platform.system()})"
    if not numerics.pinned():
        return "the numerics of this process are not pinned (was torch or numpy imported before ponder?)"
    import torch

    if torch.cuda.is_available():
        return f"the notebooks train on a CUDA device ({torch.cuda.get_device_name()}), not on the CPU"
    return None


def skip_unpinned(items: list, reason: str | None) -> int:
    """Mark the notebook cells tagged :data:`TAG` and the tests marked ``pinned_bits`` (hashes of
    generated bytes) among pytest ``items`` to be skipped for ``reason`` (nothing if ``None``);
    return how many were marked."""
    if reason is None:
        return 0
    import pytest

    marked = 0
    for item in items:
        cell = getattr(item, "cell", None)
        if (cell is not None and TAG in cell.get("metadata", {}).get("tags", [])) or item.get_closest_marker(
            "pinned_bits"
        ):
            item.add_marker(
                pytest.mark.skip(
                    reason=(
                        f"these bits are promised only on x86-64 with AVX2 on the CPU (ponder.numerics); here: {reason}"
                    )
                )
            )
            marked += 1
    return marked


def pytest_collection_modifyitems(items: list) -> None:
    """pytest hook: skip the checked number cells where the numerics are not pinned."""
    skip_unpinned(items, unpinned_reason())


def execute_smoke(path: Path, seed: int = 0) -> dict:
    """``path`` executed in ``smoke`` with a fresh run cache (as ``make test`` runs it), as notebook JSON."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.dict(os.environ, {"PONDER_RESULTS": str(Path(tmp) / "results")}),
    ):  # the kernel inherits it
        executed = Path(tmp) / path.name
        execution.execute(path, executed, "smoke", seed)
        return json.loads(executed.read_text())


def output_text(outputs: list[dict]) -> list[str]:
    """The lines of ``outputs`` that a reader compares: streams and plain-text results."""
    return [
        line for o in outputs for line in "".join(o.get("text", o.get("data", {}).get("text/plain", ""))).splitlines()
    ]


def checked_text(notebook: dict) -> list[str]:
    """The text nbval compares in the checked cells of ``notebook``: a header line per cell, then
    its streams and plain-text results."""
    lines = []
    for number, cell in enumerate(c for c in notebook["cells"] if c["cell_type"] == "code"):
        if CHECKED not in cell["metadata"].get("tags", []):
            continue
        lines += [f"# code cell {number} ({cell.get('id')})", *output_text(cell["outputs"])]
    return lines


def store_outputs(source: dict, ran: dict) -> None:
    """Give ``source``'s checked cells the outputs of ``ran`` (the same notebook executed), keeping
    the stored ones where they differ only in masked values (timings); clear every other cell's."""
    by_id = {cell.get("id"): cell for cell in ran["cells"]}
    for cell in source["cells"]:
        cell["metadata"].pop("papermill", None)
        cell["metadata"].pop("execution", None)
        if cell["cell_type"] != "code":
            continue
        if CHECKED not in cell["metadata"].get("tags", []):
            cell["outputs"], cell["execution_count"] = [], None
            continue
        new = by_id[cell.get("id")]
        outputs = [o for o in new["outputs"] if o["output_type"] != "display_data"]
        if [sanitize(line) for line in output_text(outputs)] != [
            sanitize(line) for line in output_text(cell["outputs"])
        ]:
            cell["outputs"], cell["execution_count"] = (
                outputs,
                new["execution_count"],
            )  # nbval wants a count beside outputs
    source["metadata"].pop("papermill", None)


def refresh(names: list[str] | None = None, seed: int = 0) -> None:
    """Re-execute notebooks in ``smoke``, store their checked cells' outputs in the sources (the rest
    left as written) and print a diff of the stored against the new checked outputs per notebook."""
    reason = unpinned_reason()
    if reason is not None:
        raise SystemExit(f"not refreshing: the stored smoke numbers are the pinned ones, and here {reason}")
    for path in execution.find(names):
        source = json.loads(path.read_text())
        before = checked_text(source)
        store_outputs(source, execute_smoke(path, seed))
        after = checked_text(source)
        path.write_text(json.dumps(source, indent=1, ensure_ascii=False) + "\n")
        name = f"{path.parent.name}/{path.name}"
        diff = list(difflib.unified_diff(before, after, f"{name} (stored)", f"{name} (new)", lineterm=""))
        print("\n".join(diff) if diff else f"{name}: checked outputs unchanged", flush=True)
