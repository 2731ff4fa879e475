"""The documents say no number that a record holds: times, memory and tallies come from generated blocks.

A time, a memory size or a ledger's tally typed into README.md, TARGETS.md, a page of docs/ or a
notebook's markdown goes stale the first time a command measures it again. Those numbers live in
records that commands write (``figures/TIMES.json``, the ledgers, ``RUN.md``) and reach the documents
through generated blocks (``ponder.repro.readme``), which ``tests/test_readme.py`` holds to the records. This
test fails on such a number typed outside a block, and on a machine named as something it is not.
"""

import json
import re

import pytest

from ponder.paths import ROOT
from ponder.repro.readme import BLOCK

# a number with a unit of time or memory: "31.6 min", "about 9 minutes", "2.9 GB", "87 s", "5–6 min"
MEASURED = re.compile(
    r"(?<![\w.-])\d[\d,.]*(?:\s?[–-]\s?\d[\d,.]*)?\s?(?:s|min|minutes|hours?|CPU-minutes|GPU-minutes|GB|GiB)\b(?!-)"
)
# a ledger's count: "24 holds", "5 does not hold" (not "acm-10 describe")
TALLY = re.compile(r"(?<![\w-])\d+ (?:holds|does not hold|inconclusive|describe)\b")
# numbers that are specifications, not measurements, or records no CPU command rewrites, with why
ALLOWED = {
    ("TARGETS.md", "35 minutes"): "quick's budget: a specification",
    ("docs/reproducibility.md", "35 minutes"): "quick's budget: a specification",
    ("docs/gpu.md", "*"): "measured on an H100 and an H200 (figures/gpu/bench-*.json, figures/gpu/RUN.md)",
}


def documents() -> list[tuple[str, str]]:
    """``(path, text)`` of README.md, TARGETS.md, docs/*.md and each notebook's markdown cells."""
    found = [(name, (ROOT / name).read_text()) for name in ("README.md", "TARGETS.md")]
    found += [(f"docs/{p.name}", p.read_text()) for p in sorted((ROOT / "docs").glob("*.md"))]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        found.append(
            (f"notebooks/{path.name}", "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"))
        )
    return found


def typed_numbers(name: str, text: str) -> list[str]:
    """The measured numbers and tallies ``text`` types outside its generated blocks, less those :data:`ALLOWED`."""
    prose = BLOCK.sub("", text)
    hits = [m.group(0) for pattern in (MEASURED, TALLY) for m in pattern.finditer(prose)]
    return [hit for hit in hits if (name, hit) not in ALLOWED and (name, "*") not in ALLOWED]


@pytest.mark.parametrize("name, text", documents(), ids=[name for name, _ in documents()])
def test_a_document_types_no_measured_time_memory_or_tally(name, text):
    assert not typed_numbers(name, text), (
        f"{name} types numbers that a record holds: {typed_numbers(name, text)}; put them in a generated block "
        "(`<!-- generated: time KEY -->`, `tally`, ...: lib/ponder/repro/readme.py) or point to the record"
    )


@pytest.mark.parametrize("name, text", documents(), ids=[name for name, _ in documents()])
def test_machines_are_named_as_what_they_are(name, text):
    """The timed machines are cloud servers' cores (their model is in the records), not laptops."""
    assert "laptop" not in text.lower(), f"{name} calls a machine a laptop"


def test_the_rule_finds_what_it_is_for():
    said = "quick took 31.6 min (54.6 CPU-minutes, peak 2.9 GB); make test about 9 minutes; 24 holds, 5 does not hold"
    assert typed_numbers("README.md", said) == [
        "31.6 min",
        "54.6 CPU-minutes",
        "2.9 GB",
        "9 minutes",
        "24 holds",
        "5 does not hold",
    ]
    assert typed_numbers("README.md", "acm-9 and acm-10 describe; 16,000 steps; hut-3's 5-part claim") == []
    assert typed_numbers("docs/gpu.md", "about 80 GPU-minutes") == []
    block = "<!-- generated: tally -->\n5 holds, 44 inconclusive.\n<!-- end generated -->\n"
    assert typed_numbers("README.md", "The ledger: " + block) == []
