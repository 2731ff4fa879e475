"""The README's and docs' numbers come from the figures folder, never from a hand: generated blocks.

A result typed into a document goes stale the first time a run changes. So every result the
README and the pages of ``docs/`` show sits in a block that ``make figures`` rewrites from what
the notebooks wrote::

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
``headlines``    one row per paper headline claim (:data:`ponder.targets.HEADLINES`): paper, claim,
                 the paper's number, ours, verdict, scale, a link to its paper page
``thumbnails``   a row of the headline targets' figures, each a link to its full size
``gallery``      every target: its figure, its ledger rows and the notebook that makes it
``notebooks``    per notebook, its targets and those with a figure in the profile's folder
``time KEY``     one entry of the measured-times record ``figures/TIMES.json``
                 (:mod:`ponder.repro.measured`): wall time, machine, runs, memory
``by-function K``  that entry's runs and CPU-minutes per training function
``commands``     the table of the timed commands, their times and machines from that record
``limit``        that record's ``bench-limit``: per model family, a training step against its products alone
``numerics``     the CPUs ``tests/numerics_hashes.json`` records the probe's bits on: entries and how taken
===============  =================================================================

Links in a block are written relative to the document (the README at the root, a page in ``docs/``).

A block may name another profile's committed figures last (``ledger hut cpu``, ``tally cpu``):
it is then rewritten from ``figures/<profile>/``.

:func:`sync` rewrites the blocks; ``make figures`` calls it after writing the committed figures
(those of :data:`SHOWN`, seed 0) on the README and every page of ``docs/`` (:data:`DOCUMENTS`), and
``tests/test_readme.py`` checks that each committed document equals what :func:`sync` makes of the
committed figures, so the two cannot be committed out of step.
"""

import json
import os
import re
import sys
from pathlib import Path

import pandas as pd

from ..paths import ROOT, profile_folder
from ..plots import markdown_table
from ..profiles import PROFILES
from ..targets import BY_ID, HEADLINES, of_notebooks
from . import measured
from .verdict_cells import marked, rule_note, tally_line, verdict_with_reason
from .verify import LEDGER, ledger

SHOWN = ("quick", "cpu")  # the profiles whose committed figures the README's blocks show

BLOCK = re.compile(r"(<!-- generated: (?P<spec>[^>]*?) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.DOTALL)
OPEN = re.compile(r"<!-- generated: ")
# blocks of the measured-times record and of the numerics record, not of a figures folder
RECORDED = ("time", "by-function", "commands", "limit", "numerics")
NUMERICS = Path("tests") / "numerics_hashes.json"  # beside the figures folder: the probe's bits per CPU
KINDS = ("tally", "ledger", "table", "headlines", "thumbnails", "gallery", "notebooks", *RECORDED)
SHOWN_COLUMNS = ("id", "claim", "ours", "verdict")
PAPERS = {
    "hut": ("Hyper-UT", "docs/hyper-ut.md"),
    "acm": ("ACM", "docs/acm.md"),
    "hyla": ("HYLA", "docs/hyla.md"),
    "survey": ("Survey", "docs/survey.md"),
}


def documents(root: Path = ROOT) -> list[Path]:
    """The documents with generated blocks under ``root``: the README and the pages of ``docs/``
    (its research notes, in ``docs/research/``, have none)."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


class NotMade(LookupError):
    """A block's figure or ledger rows were not made (their notebook has not run for this profile)."""


def ledger_rows(ledger_text: str, prefix: str) -> str:
    """The ledger's rows of the targets ``<prefix>-*`` as a Markdown table of :data:`SHOWN_COLUMNS`."""
    found = [
        {**row, "verdict": marked(verdict_with_reason(row), ledger_text)}
        for target, rows in ledger(ledger_text).items()
        if target.split("-")[0] == prefix
        for row in rows
    ]
    if not found:
        raise NotMade(f"the ledger has no rows of targets {prefix}-*")
    return markdown_table(pd.DataFrame(found, columns=list(SHOWN_COLUMNS)))


def _scale(row: dict, profile: str) -> str:
    """A row's scale: the profile and the seeds its evidence counts (``n=3``)."""
    seeds = re.findall(r"\(n=(\d+)\)", row.get("evidence", ""))
    return f"{profile}, {max(map(int, seeds))} seed{'s' * (max(map(int, seeds)) > 1)}" if seeds else profile


def headline_rows(ledger_text: str, profile: str, base: str) -> str:
    """The rows of :data:`HEADLINES` as a Markdown table; links relative to ``base`` (the root)."""
    by_target = ledger(ledger_text)
    table = []
    for target, start in HEADLINES:
        row = next((r for r in by_target.get(target, []) if r["claim"].startswith(start)), None)
        if row is None:
            raise NotMade(f"the ledger has no row of {target} whose claim starts {start!r}")
        paper, page = PAPERS[target.split("-")[0]]
        table.append(
            (
                paper,
                row["claim"],
                row["paper"],
                row["ours"],
                marked(verdict_with_reason(row), ledger_text),
                _scale(row, profile),
                f"[{target}]({base}{page}#{target})",
            )
        )
    return markdown_table(
        pd.DataFrame(table, columns=["paper", "claim", "paper's number", "ours", "verdict", "scale", "more"])
    )


def thumbnails(figures: Path, base: str) -> str:
    """The headline targets' figures in one row, 160 pixels wide, each a link to its full size."""
    links = []
    for target in dict.fromkeys(target for target, _ in HEADLINES):
        if not (figures / f"{target}.png").exists():
            raise NotMade(f"{figures / target}.png was not made (run its notebook)")
        links.append(f'<a href="{base}{target}.png"><img src="{base}{target}.png" width="160" alt="{target}"></a>')
    return "\n".join(links) + "\n"


def targets_of(notebooks: list[str]) -> set[str]:
    """The target ids of the named notebooks (names with or without ``.ipynb``)."""
    saved = of_notebooks()
    return {target for name in notebooks for target in saved.get(f"notebooks/{Path(name).stem}.ipynb", [])}


def notebook_of(target: str) -> str:
    """The notebook that makes ``target`` (``notebooks/NAME.ipynb``)."""
    if target not in BY_ID:
        raise LookupError(f"no notebook makes {target}: it is not in ponder.targets.TARGETS")
    return f"notebooks/{BY_ID[target].notebook}.ipynb"


def notebook_status(figures: Path) -> str:
    """Per notebook: its targets and how many of them have a figure in ``figures``."""
    rows = []
    for name, targets in of_notebooks().items():
        made = [t for t in targets if (figures / f"{t}.png").exists()]
        rows.append(
            (name.split("/")[1].removesuffix(".ipynb"), ", ".join(made) or "—", f"{len(made)} of {len(targets)}")
        )
    return markdown_table(pd.DataFrame(rows, columns=["notebook", "figures made", "of its targets"]))


def gallery(ledger_text: str, figures: Path, base: str, root: str) -> str:
    """Every target with a figure in ``figures``: a heading, the figure, its ledger rows and its notebook."""
    by_target = ledger(ledger_text)

    def order(path):
        return (
            list(PAPERS).index(path.stem.split("-")[0]),
            path.stem.split("-")[1].lstrip("a").zfill(3),
            path.stem,
        )

    parts = []
    for png in sorted(figures.glob("*.png"), key=order):
        target = png.stem
        rows = [(r["claim"], r["ours"], marked(r["verdict"], ledger_text)) for r in by_target.get(target, [])]
        notebook = notebook_of(target)
        parts.append(
            f"### {target}\n\n[![{target}]({base}{png.name})]({base}{png.name})\n\n"
            + (markdown_table(pd.DataFrame(rows, columns=["claim", "ours", "verdict"])) + "\n" if rows else "")
            + f"Made by [{notebook}]({root}{notebook}).\n"
        )
    return "\n".join(parts)


def render(spec: str, figures: Path, base: str = "figures/") -> str:
    """The text of the block ``spec`` (``"tally"``, ``"ledger hut"``, ``"table hut-3"``, ``"headlines"``,
    ``"thumbnails"``, ``"gallery"``, each optionally followed by a profile: ``"ledger hut cpu"``) from
    ``figures`` (or its profile's folder); ``base`` is the figures folder's path from the document."""
    kind, *argument = spec.split()
    if kind in ("time", "by-function") and len(argument) == 1:
        return (measured.line if kind == "time" else measured.by_function)(figures, argument[0])
    if kind in ("commands", "limit") and not argument:
        return (measured.commands_table if kind == "commands" else measured.limit_table)(figures)
    if kind == "numerics" and not argument:
        return numerics_table(figures.parent / NUMERICS)
    profile = "quick"
    if argument and argument[-1] in PROFILES:
        profile = argument.pop()
        figures = figures / profile_folder(profile)
        base = f"{base}{profile_folder(profile)}/" if profile_folder(profile) else base
    if kind not in KINDS or kind in RECORDED or len(argument) != (kind in ("ledger", "table")):
        raise ValueError(
            f"unknown README block {spec!r}: one of 'tally', 'ledger PREFIX', 'table TARGET-ID', 'headlines', "
            "'thumbnails', 'gallery', optionally followed by a profile, or 'time KEY', 'by-function KEY', 'commands', "
            "'limit', 'numerics'"
        )
    root = base.split("figures/")[0]
    if kind == "thumbnails":
        return thumbnails(figures, base)
    if kind == "notebooks":
        return notebook_status(figures)
    if kind == "table":
        path = figures / f"{argument[0]}.md"
        if not path.exists():
            raise NotMade(f"README block {spec!r}: {path} was not written (run its notebook)")
        return path.read_text()
    if not (figures / LEDGER).exists():
        raise NotMade(f"README block {spec!r}: {figures / LEDGER} was not written (run the notebooks)")
    text = (figures / LEDGER).read_text()
    if kind == "tally":
        return tally_line(text) + "\n"
    if kind == "headlines":
        table = headline_rows(text, profile, root)
    else:
        table = gallery(text, figures, base, root) if kind == "gallery" else ledger_rows(text, argument[0])
    return table + rule_note(text, base, profile)


def numerics_table(record: Path) -> str:
    """The CPUs of the numerics record (``tests/numerics_hashes.json``): per CPU, how many of the probe's entries it
    holds (the probe's entries: every one any CPU holds) and how they were taken."""
    data = json.loads(record.read_text())
    probe = set().union(*data["machines"].values())
    rows = ["| CPU | entries | how |", "| --- | --- | --- |"]
    for machine, entries in data["machines"].items():
        count = f"all {len(probe)}" if len(entries) == len(probe) else f"{len(entries)} of {len(probe)}"
        rows.append(f"| {machine} | {count} | {data['how'][machine]} |")
    return "\n".join(rows) + "\n"


def sync(text: str, figures: Path, base: str = "figures/") -> str:
    """``text`` (a document) with every generated block rewritten from ``figures``, links through ``base``."""
    if len(OPEN.findall(text)) != len(BLOCK.findall(text)):
        raise ValueError("a README block '<!-- generated: ... -->' has no '<!-- end generated -->'")
    return BLOCK.sub(lambda m: m.group(1) + render(m.group("spec"), figures, base) + m.group(4), text)


def base_of(document: Path, figures: Path) -> str:
    """The figures folder's path as seen from ``document`` (``figures/`` from the root, ``../figures/`` from docs/)."""
    return os.path.relpath(figures, document.parent).replace(os.sep, "/") + "/"


def sync_file(readme: Path, figures: Path) -> bool:
    """Rewrite ``readme``'s generated blocks from ``figures``; ``True`` if it changed."""
    before = readme.read_text()
    after = sync(before, figures, base_of(readme, figures))
    if after != before:
        readme.write_text(after)
    return after != before


def sync_documents(root: Path = ROOT) -> None:
    """Rewrite the generated blocks of the README and docs/ under ``root`` from its committed figures,
    saying which changed, or say why a document was left as it was: after a subset of the notebooks
    in a fresh clone, some blocks' rows were never made."""
    for document in documents(root):
        name = document.relative_to(root)
        try:
            if sync_file(document, root / "figures"):
                print(f"{name}: its generated blocks rewritten from the figures of {', '.join(SHOWN)}")
        except NotMade as missing:
            print(
                f"{name} left as it was: {missing} (make figures of every notebook, "
                f"PROFILE={' and '.join(SHOWN)}, rewrites it)",
                file=sys.stderr,
            )
