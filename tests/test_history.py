"""The product states what is and why; its history lives in git (:data:`DIARY`: the patterns of a
work log, which no tracked file may match)."""

import re
import subprocess

import pytest

from ponder.paths import ROOT

PERIOD_WORDS = ("session", "lease", "issue")  # "<word> <number>" dates a sentence; the project states what is, not when
MAKING_WORDS = ("lent", "lease")  # words that name a machine by how it was obtained; prose names it by its model
# a source cited for what it no longer says
CITED = (rf"\bthe {PERIOD_WORDS[2]}(?:'s\b| (?:asks|says|wants)\b)", r"RUN\.md's rule")
PATTERNS = (
    rf"\b(?:{'|'.join(PERIOD_WORDS)})s? \d+",
    r"\bfound (?:here|earlier)\b",
    rf"\b(?:{'|'.join(MAKING_WORDS)})\b",
    *CITED,
)
DIARY = re.compile("|".join(PATTERNS), re.IGNORECASE)
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
        f"as the {PERIOD_WORDS[2]} asks",
        f"the {PERIOD_WORDS[2]}'s goal",
        *(f"a word of the work: {word}" for word in MAKING_WORDS),
        "as RUN.md's rule says",
    ]
    assert diary_lines("\n".join(numbered)) == numbered
    plain = [
        f"a papermill {PERIOD_WORDS[0]}",
        f"{4} {PERIOD_WORDS[0]}s of work",
        "the release notes",
        "an excellent fit",
        "a known issue of torch",
        "no PRs in the issue index",
    ]
    assert diary_lines("\n".join(plain)) == []


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_no_tracked_file_keeps_a_diary():
    found = {path: lines for path in tracked() if (lines := diary_lines((ROOT / path).read_text(errors="replace")))}
    assert found == {}
