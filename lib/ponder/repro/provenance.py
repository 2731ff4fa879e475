"""Where a profile's figures came from: ``RUN.md`` beside them, one row per notebook, written by ``make figures``.

Each notebook that ``make figures`` executes replaces its row: the command that remakes it, the
commit, the device and torch it ran on, its wall time and whether it succeeded. Rows of notebooks
not executed this time, and rows written by hand for files no notebook makes (a benchmark's JSON
copied from a GPU), stay as they were, so the table always says what made each file in the folder.
Everything above the table (its title and notes) is kept too.
"""

import os
import platform
from pathlib import Path

from ..ledger.rows import commit, table_cells

COLUMNS = ("made by", "files", "command", "commit", "device", "torch", "wall time", "status")
TITLE = """# Where these figures came from

One row per notebook (or file no notebook makes): the command that remakes it, the commit, the device and
torch it ran on, its wall time and its status. `make figures` rewrites the rows of the notebooks it executes.
"""


def device() -> str:
    """The device the notebooks trained on: the CUDA device's name, or what the CPU is (its model, x86-64
    family and model numbers, AVX2 / AVX-512) and how many cores this process may use."""
    import torch

    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    fields = {}
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                name, _, value = line.partition(":")
                fields.setdefault(name.strip(), value.strip())
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or platform.machine()
    if "cpu family" in fields:
        flags = fields.get("flags", "").split()
        vector = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
        name += f" (family {fields['cpu family']} model {fields['model']}, {vector})"
    return f"{len(os.sched_getaffinity(0))}-core {name}"


def read(path: Path) -> tuple[str, dict[str, dict]]:
    """``(the text above the table, {made by: row})`` of an existing ``RUN.md`` (empty if none)."""
    if not path.exists():
        return TITLE, {}
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("| ")), len(lines))
    header = table_cells(lines[start]) if start < len(lines) else list(COLUMNS)
    rows = {}
    for line in lines[start + 2 :]:
        if line.startswith("| "):
            row = dict(zip(header, table_cells(line)))
            rows[row[header[0]]] = {column: row.get(column, "—") for column in COLUMNS}
    return "\n".join(lines[:start]).rstrip() + "\n", rows


def write(path: Path, preamble: str, rows: dict[str, dict]) -> None:
    """``preamble``, then ``rows`` as a Markdown table of :data:`COLUMNS`, in order of ``made by``."""
    escape = lambda cell: str(cell).replace("|", "\\|")  # noqa: E731
    table = ["| " + " | ".join(COLUMNS) + " |", "| " + " | ".join("---" for _ in COLUMNS) + " |"]
    table += ["| " + " | ".join(escape(rows[key][column]) for column in COLUMNS) + " |" for key in sorted(rows)]
    path.write_text(preamble.rstrip() + "\n\n" + "\n".join(table) + "\n")


def record(folder: Path, profile: str, executed: list[tuple[str, list[str], float, str | None]]) -> Path:
    """Replace the rows of the ``executed`` notebooks (``(name, targets, seconds, problem)``, problem
    ``None`` when it succeeded) in ``folder/RUN.md``; return its path."""
    import torch

    path = folder / "RUN.md"
    folder.mkdir(parents=True, exist_ok=True)
    preamble, rows = read(path)
    made_on, at = device(), commit()
    for name, targets, seconds, problem in executed:
        rows[f"notebook {name}"] = {
            "made by": f"notebook {name}",
            "files": ", ".join(targets) or "—",
            "command": f"`python -m ponder.repro run {name} --profile {profile}`",
            "commit": f"`{at}`",
            "device": made_on,
            "torch": torch.__version__,
            "wall time": f"{seconds:.0f} s (its runs trained ahead)",
            "status": "made by this commit's code" if problem is None else f"failed: {problem.splitlines()[0][:120]}",
        }
    write(path, preamble, rows)
    return path
