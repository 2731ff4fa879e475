"""The product states what is and why; its history lives in git. No tracked document, docstring,
comment or notebook names a work session or a device lease, or says what was "found here"."""
import re
import subprocess

import pytest

from ponder.paths import ROOT

DIARY = re.compile(r"\b(?:sessions?|leases?) \d+|\bfound (?:here|earlier)\b", re.IGNORECASE)
SUFFIXES = (".md", ".py", ".ipynb", ".sh", ".cfg", ".toml", ".yml", ".cff")


def tracked() -> list[str]:
    """The repository's tracked text files of :data:`SUFFIXES` and the Makefile (this file, which
    spells the patterns out, aside)."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [f for f in files if (f.endswith(SUFFIXES) or f == "Makefile") and f != "tests/test_history.py"]


def diary_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if DIARY.search(line)]


def test_the_pattern_finds_a_diary_and_spares_plain_words():
    assert diary_lines("measured in session 36\nlease 4's probe\nas found earlier") != []
    assert len(diary_lines("a\nsessions 15-19\nLease 3, H200")) == 2
    assert diary_lines("a papermill session; the lease tooling; 4 sessions of work") == []


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_no_tracked_file_keeps_a_diary():
    found = {path: lines for path in tracked() if (lines := diary_lines((ROOT / path).read_text(errors="replace")))}
    assert found == {}
