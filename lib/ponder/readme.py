"""The README's numbers come from the figures folder, never from a hand: its generated blocks.

A result typed into the README goes stale the first time a run changes (it happened: the
Hyper-UT table kept numbers of runs that had since been retrained). So every result the README
shows sits in a block that ``make figures`` rewrites from what the notebooks wrote::

    <!-- generated: KIND [ARGUMENT] -->
    ... (rewritten) ...
    <!-- end generated -->

===============  =================================================================
block            what it holds
===============  =================================================================
``tally``        the ledger's count per verdict (``figures/CLAIMS.md``)
``ledger P``     the ledger rows of the targets ``P-*`` (``hut``, ``acm``, ...):
                 id, claim, ours, verdict; the evidence stays in the ledger
``table ID``     ``figures/ID.md``, a table a notebook wrote (``save_table``)
===============  =================================================================

A block may name another profile's committed figures last (``ledger hut cpu``, ``tally cpu``):
it is then rewritten from ``figures/<profile>/``.

:func:`sync` rewrites the blocks; ``make figures`` calls it after writing the committed figures
(those of :data:`SHOWN`, seed 0), and ``tests/test_readme.py`` checks that the committed README equals what
:func:`sync` makes of the committed figures, so the two cannot be committed out of step.
"""
import re
from pathlib import Path

import pandas as pd

from .paths import profile_folder
from .plots import markdown_table
from .profiles import PROFILES
from .verify import LEDGER, ledger

SHOWN = ("quick", "cpu")  # the profiles whose committed figures the README's blocks show

BLOCK = re.compile(r"(<!-- generated: (?P<spec>[^>]*?) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.DOTALL)
OPEN = re.compile(r"<!-- generated: ")
KINDS = ("tally", "ledger", "table")
SHOWN_COLUMNS = ("id", "claim", "ours", "verdict")


class NotMade(LookupError):
    """A block's figure or ledger rows were not made (their notebook has not run for this profile)."""


def tally_line(ledger_text: str) -> str:
    """The ledger's line that counts its verdicts (``"11 holds, 5 does not hold, ..."``)."""
    for line in ledger_text.splitlines():
        if re.match(r"^\d+ holds, \d+ does not hold, \d+ inconclusive, \d+ describe\.$", line):
            return line
    raise ValueError("the ledger has no line counting its verdicts")


def ledger_rows(ledger_text: str, prefix: str) -> str:
    """The ledger's rows of the targets ``<prefix>-*`` as a Markdown table of :data:`SHOWN_COLUMNS`."""
    found = [row for target, rows in ledger(ledger_text).items() if target.split("-")[0] == prefix for row in rows]
    if not found:
        raise NotMade(f"the ledger has no rows of targets {prefix}-*")
    return markdown_table(pd.DataFrame(found, columns=list(SHOWN_COLUMNS)))


def render(spec: str, figures: Path) -> str:
    """The text of the block ``spec`` (``"tally"``, ``"ledger hut"``, ``"table hut-3"``, each optionally
    followed by a profile: ``"ledger hut cpu"``) from ``figures`` (or its profile's folder)."""
    kind, *argument = spec.split()
    if argument and argument[-1] in PROFILES:
        figures = figures / profile_folder(argument.pop())
    if kind not in KINDS or len(argument) != (kind != "tally"):
        raise ValueError(f"unknown README block {spec!r}: one of 'tally', 'ledger PREFIX', 'table TARGET-ID', optionally followed by a profile")
    if kind == "table":
        path = figures / f"{argument[0]}.md"
        if not path.exists():
            raise NotMade(f"README block {spec!r}: {path} was not written (run its notebook)")
        return path.read_text()
    if not (figures / LEDGER).exists():
        raise NotMade(f"README block {spec!r}: {figures / LEDGER} was not written (run the notebooks)")
    text = (figures / LEDGER).read_text()
    return tally_line(text) + "\n" if kind == "tally" else ledger_rows(text, argument[0])


def sync(text: str, figures: Path) -> str:
    """``text`` (a README) with every generated block rewritten from ``figures``."""
    if len(OPEN.findall(text)) != len(BLOCK.findall(text)):
        raise ValueError("a README block '<!-- generated: ... -->' has no '<!-- end generated -->'")
    return BLOCK.sub(lambda m: m.group(1) + render(m.group("spec"), figures) + m.group(4), text)


def sync_file(readme: Path, figures: Path) -> bool:
    """Rewrite ``readme``'s generated blocks from ``figures``; ``True`` if it changed."""
    before = readme.read_text()
    after = sync(before, figures)
    if after != before:
        readme.write_text(after)
    return after != before
