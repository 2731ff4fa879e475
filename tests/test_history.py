"""The product states what is and why; its history lives in git (:data:`DIARY`: the patterns of a
work log, which no tracked file may match)."""

import re
import subprocess

import pytest

from ponder.paths import ROOT

PERIOD_WORDS = ("session", "lease")  # "<word> <number>" dates a sentence; the project states what is, not when
DIARY = re.compile(rf"\b(?:{'|'.join(PERIOD_WORDS)})s? \d+|\bfound (?:here|earlier)\b", re.IGNORECASE)
SUFFIXES = (".md", ".py", ".ipynb", ".sh", ".cfg", ".toml", ".yml", ".cff")


def tracked() -> list[str]:
    """The repository's tracked text files of :data:`SUFFIXES` and the Makefile (this file, which
    spells the patterns out, aside)."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [f for f in files if (f.endswith(SUFFIXES) or f == "Makefile") and f != "tests/test_history.py"]


def diary_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if DIARY.search(line)]


def test_the_pattern_finds_a_diary_and_spares_plain_words():
    numbered = [f"measured in {word} {n}" for n, word in enumerate(PERIOD_WORDS, 3)] + [
        f"{PERIOD_WORDS[0].upper()}S {5}-{9}",
        "as found earlier",
    ]
    assert diary_lines("\n".join(numbered)) == numbered
    plain = [f"a papermill {PERIOD_WORDS[0]}", f"the {PERIOD_WORDS[1]} tooling", f"{4} {PERIOD_WORDS[0]}s of work"]
    assert diary_lines("\n".join(plain)) == []


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_no_tracked_file_keeps_a_diary():
    found = {path: lines for path in tracked() if (lines := diary_lines((ROOT / path).read_text(errors="replace")))}
    assert found == {}
