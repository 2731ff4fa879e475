"""The repository is self-contained: its documents point only at files inside it."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    "README.md",
    "TARGETS.md",
    *sorted(str(p.relative_to(ROOT)) for folder in ("figures", "docs") for p in (ROOT / folder).rglob("*.md")),
]
SOURCES = sorted(
    p
    for pattern in ("lib/ponder/**/*.py", "notebooks/*.ipynb", "*.md", "docs/**/*.md", "Makefile")
    for p in ROOT.glob(pattern)
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_points_outside_the_repository(path):
    text = path.read_text()
    assert not re.search(r"(\.\./|`)shared/", text), (
        f"{path.relative_to(ROOT)} points at the team's shared folder, which a clone does not have"
    )


@pytest.mark.parametrize("document", DOCUMENTS)
def test_relative_links_resolve(document):
    path = ROOT / document
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text()):
        if "://" in target:
            continue
        assert (path.parent / target).exists(), f"{document} links to {target}, which does not exist"
