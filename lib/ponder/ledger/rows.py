"""The claims ledger: the judged rows of every notebook, gathered per profile.

An analysis function measures and judges a target's claims with the rule of
:mod:`ponder.ledger.verdicts` and returns them as :class:`~ponder.ledger.verdicts.Claim` values;
a notebook calls :func:`record` on them (:func:`claim` records one row), and each row goes to
``results/<profile>/claims/<target>.json``. :func:`gather` collects every row of a profile into
``CLAIMS.md`` in the profile's figures folder (``figures/CLAIMS.md`` for ``quick``), with
:data:`~ponder.ledger.verdicts.RULE` in its header.
"""

import functools
import hashlib
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from ..paths import ROOT, claims_dir, figures_dir, seed
from ..profiles import check_profile
from ..runner.runs import module_file, source_shape, write_json
from ..targets import TIMED
from .verdicts import RULE, VERDICTS, Claim, Verdict

# what a judged row checks: a claim of the paper, a check of our set-up (the task needs what the claim
# supposes), a check with no noise (a generator's exactness), a wall-clock timing of this machine, a claim
# about a method of one's own (ponder.studies.survey.methods)
KINDS = ("paper claim", "design check", "exactness check", "timing", "method claim")
SHOWN = {
    "holds": "holds",
    "does not hold": "**does not hold**",
    "inconclusive": "inconclusive",
    None: "—",
}  # a verdict's cell in the ledger
OLDER = " (*older*)"  # after the verdict of a row whose code has changed since it was made (code_of)
_RECORDED: dict[tuple[str, str], dict] = {}  # (target, claim) -> the row this process recorded last


def _fmt(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.3g}"
    return str(value)


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table line ``| a | b |``, stripped (``\\|`` inside a cell is a literal bar)."""
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\) \| ", line.strip()[2:-2])]


def claim(
    target: str, text: str, ours, verdict: Verdict | None, *, profile: str, paper=None, kind: str | None = None
) -> dict:
    """Record one claim of ``target`` with its ``verdict`` (None: describes what is seen); return its row.

    ``ours`` and ``paper`` are the measured and the published value (numbers or short strings); ``kind``,
    one of :data:`KINDS`, what a judged row checks (``None``: a timing for :data:`ponder.targets.TIMED`, a paper
    claim otherwise).
    The target's rows are the ones this process records: the first claim of a target in a process (a notebook's
    kernel, which claims all of a target's rows) drops the rows an earlier run recorded, so a claim whose text a
    notebook no longer makes leaves the ledger with it; a later claim with the same ``text`` replaces the row.
    """
    check_profile(profile)
    if verdict is not None and not isinstance(verdict, Verdict):
        raise TypeError(
            "verdict must come from ponder.ledger.verdicts (greater, above, below, judge, exact) or be None, "
            f"got {verdict!r}"
        )
    if kind is not None and (verdict is None or kind not in KINDS):
        raise ValueError(f"kind={kind!r}: a judged row's kind is one of {', '.join(KINDS)}")
    if verdict is None:
        judged = {"verdict": None, "noise": "", "kind": None}
    else:
        kind = kind or ("timing" if target in TIMED else "paper claim")
        judged = {"verdict": verdict.verdict, "noise": verdict.noise, "kind": kind}
    row = {
        "id": target,
        "claim": text,
        "paper": _fmt(paper),
        "ours": _fmt(ours),
        **judged,
        "profile": profile,
        **made_by(),
    }
    path = claims_dir(profile) / f"{target}.json"
    rows = json.loads(path.read_text()) if path.exists() else []
    rows = [r for r in rows if (target, r["claim"]) in _RECORDED and r["claim"] != text] + [row]
    write_json(path, rows)
    _RECORDED[(target, text)] = row
    return row


def record(claims: Iterable[Claim], profile: str) -> None:
    """Record every row of ``claims`` (:func:`claim`), in order (a notebook's cell ends on it and shows nothing)."""
    for c in claims:
        claim(c.target, c.text, c.ours, c.verdict, profile=profile, paper=c.paper, kind=c.kind)


def recorded() -> list[dict]:
    """The rows :func:`claim` recorded in this process (a notebook's kernel), in the order first recorded."""
    return list(_RECORDED.values())


def rows(profile: str) -> list[dict]:
    """Every recorded row of ``profile``, ordered by target id."""
    folder = claims_dir(profile)
    found = []
    for path in sorted(folder.glob("*.json")):
        for r in json.loads(path.read_text()):
            if "verdict" not in r:
                raise ValueError(
                    f"{path} holds a row of an older ledger format ({r.get('claim')!r}): run every notebook "
                    f"(make figures), or delete {folder}"
                )
            found.append(r)
    return sorted(found, key=lambda r: target_order(r["id"]))


def clear(profile: str) -> None:
    """Delete every recorded row of ``profile`` (before all of its notebooks run again)."""
    for path in claims_dir(profile).glob("*.json"):
        path.unlink()


def target_order(target: str) -> tuple:
    """Sort key of a target id: by group, then by number (``hut-2`` before ``hut-10``)."""
    group, _, number = target.partition("-")
    return (group, int(number) if number.isdigit() else math.inf, number)


@functools.cache
def commit() -> str:
    """The commit the code came from (``+ changes`` if lib/ or notebooks/ differ from it), or ``unknown``.

    Read once per process (a notebook's kernel), like the code the process imported."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "lib", "notebooks", "pyproject.toml"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" + changes" if dirty else "")


def made_by() -> dict:
    """What makes the rows this process claims, and the hash of it (:func:`code_of`): the notebook
    its kernel executes (``PONDER_NOTEBOOK``, set by :func:`ponder.repro.execution.execute`; none in a plain
    process) and every ``ponder`` module imported so far, among them the experiments that trained
    its runs and the analysis that judged them, except the registry, which only says what trains ahead."""
    made = {
        "notebook": os.environ.get("PONDER_NOTEBOOK"),
        "modules": sorted(
            name
            for name in sys.modules
            if name.split(".")[0] == "ponder" and name != "ponder.repro.registry" and module_file(name)
        ),
    }
    return {"made by": made, "code": code_of(made)}


def code_of(made: dict) -> str:
    """Hash of the code a row was made by, as it is now: each module's syntax tree without its docstrings
    (:func:`ponder.runner.runs.source_shape`) and the code cells of the notebook; ``gone`` if one no longer exists.

    A row is *older* when this no longer equals the hash it was recorded with: its numbers may move
    once its notebook runs again. Comments, docstrings, Markdown cells and modules its kernel did not
    import change without marking it."""
    digest = hashlib.sha256()
    for name in made["modules"]:
        path = module_file(name)
        if path is None or not path.is_file():
            return "gone"
        digest.update(f"{name}\n{_shape(path, path.read_bytes())}\n".encode())
    if made["notebook"]:
        path = ROOT / "notebooks" / made["notebook"]
        if not path.is_file():
            return "gone"
        cells = json.loads(path.read_text())["cells"]
        digest.update("\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code").encode())
    return digest.hexdigest()[:12]


@functools.lru_cache(maxsize=1024)
def _shape(path: Path, source: bytes) -> str:
    """:func:`ponder.runner.runs.source_shape` of ``path``, whose bytes are ``source``: parsed once per version
    of the file, since a ledger's rows share most of their modules."""
    return source_shape(path)


def target_ids() -> list[str]:
    """Every target id of ``TARGETS.md``, in its order."""
    return re.findall(r"^\| ([a-z]+-[a-z0-9]+) \|", (ROOT / "TARGETS.md").read_text(), flags=re.MULTILINE)


def is_older(row: dict) -> bool:
    """Whether the code that made ``row`` has changed since (:func:`code_of`)."""
    return "made by" not in row or row["code"] != code_of(row["made by"])


def provenance(found: list[dict]) -> list[str]:
    """The ledger's lines on what it does not cover: targets without rows, and rows whose code has
    changed since they were made (:func:`is_older`; their notebooks have not run since)."""
    lines = []
    missing = [t for t in target_ids() if t not in {r["id"] for r in found}]
    if missing:
        lines.append(f"No rows (their notebooks have not run into this ledger): {', '.join(missing)}.")
    older = sorted({r["id"] for r in found if is_older(r)}, key=target_order)
    if older:
        lines.append(
            "Rows whose code has changed since they were made (marked *older*; their notebooks have not run "
            f"since): {', '.join(older)}."
        )
    return lines


def tally(found: list[dict]) -> str:
    """``"3 holds, 1 does not hold, 2 inconclusive, 4 describe"`` for ledger rows."""
    counts = [f"{sum(r['verdict'] == v for r in found)} {v}" for v in VERDICTS]
    return ", ".join(counts + [f"{sum(r['verdict'] is None for r in found)} describe"])


def tally_by_kind(found: list[dict]) -> str:
    """The judged rows' count per verdict for each of :data:`KINDS` that has rows:
    ``"By kind: paper claims 2 holds, 1 inconclusive; timings 1 holds"``."""
    parts = []
    for kind in KINDS:
        of_kind = [r["verdict"] for r in found if r["verdict"] is not None and r.get("kind") == kind]
        if of_kind:
            parts.append(f"{kind}s " + ", ".join(f"{of_kind.count(v)} {v}" for v in VERDICTS if v in of_kind))
    return "By kind: " + "; ".join(parts)


GENERATED = "Generated by `make figures`; every row was judged by its notebook on what it measured."  # the header's


def judged_by(ledger_text: str) -> str:
    """The rule a ledger's verdicts were judged by: the paragraph of its header after :data:`GENERATED`
    (:func:`gather` writes :data:`ponder.ledger.verdicts.RULE` there); empty without one."""
    paragraphs = ledger_text.split("\n\n")
    return next((paragraphs[i + 1] for i, p in enumerate(paragraphs[:-1]) if p == GENERATED), "")


def by_this_rule(ledger_text: str) -> bool:
    """Whether a ledger was judged by the rule this code applies (:data:`ponder.ledger.verdicts.RULE`). A committed
    ledger judged by another keeps its verdicts until its notebooks run again; the blocks mark them."""
    return judged_by(ledger_text) == RULE


def gather(profile: str) -> Path:
    """Write the ledger of ``profile`` as a Markdown table with a count per verdict; return its path."""
    check_profile(profile)
    found = rows(profile)
    lines = [
        f"# Claims ledger ({profile} profile, seed {seed()}, commit {commit()})",
        "",
        GENERATED,
        "",
        RULE,
        "",
        tally(found) + ".",
        "",
        tally_by_kind(found) + ".",
        "",
        *(line + "\n" for line in provenance(found)),
        "| id | claim | paper | ours | evidence | verdict | kind |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in found:
        cells = [
            r["id"],
            r["claim"],
            r["paper"],
            r["ours"],
            r["noise"],
            SHOWN[r["verdict"]] + (OLDER if is_older(r) else ""),
            r.get("kind") or "—",
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    out = figures_dir(profile) / "CLAIMS.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return out
