"""``make verify``: after ``make figures``, is every target's output the committed one?

For each target of a profile's figures folder (``figures/`` for ``quick``) it compares the files
made anew (``<target>.png``, ``.pdf``, ``.md``) byte for byte with ``git show <ref>:<path>``, and
the target's rows of ``CLAIMS.md`` with the committed ones (the ledger's header, which names the
commit, is not compared, nor the mark of a row made by older code, which says where a row came from,
not what it says). The figures are saved without timestamps or software metadata
(:func:`ponder.plots.save_figure`), so on a pinned platform (:mod:`ponder.numerics`) an unchanged
target gives the same bytes. The targets of :data:`ponder.targets.TIMED` show
wall-clock times: they are reported, marked as timing ones, and expected to differ. For a target
that differs, its ledger rows are printed side by side, committed beside new. A target whose notebook
did not run into the new ledger (after ``make figures NOTEBOOKS=...``: the ledger's "No rows" line
names it) is reported as *not run*, neither identical nor differing. ``make verify NOTEBOOKS=...``
compares just the targets of those notebooks.
"""

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..ledger.rows import OLDER, by_this_rule, table_cells, target_order
from ..targets import TIMED

FILE = re.compile(r"^(?P<target>[a-z]+-[a-z0-9]+)\.(png|pdf|md)$")
NOT_RUN = re.compile(r"^No rows \(their notebooks have not run into this ledger\): (?P<targets>.*)\.$", re.MULTILINE)
LEDGER = "CLAIMS.md"


def git(root: Path, *args: str) -> subprocess.CompletedProcess:
    """``git args`` in ``root``, output as bytes, never raising on a non-zero exit."""
    return subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)


def committed(root: Path, ref: str, path: str) -> bytes | None:
    """The bytes of ``path`` (relative to ``root``) at ``ref``, ``None`` if it is not there."""
    shown = git(root, "show", f"{ref}:{path}")
    return shown.stdout if shown.returncode == 0 else None


def committed_names(root: Path, ref: str, folder: str) -> list[str]:
    """The names of the entries directly in ``folder`` at ``ref``."""
    listed = git(root, "ls-tree", "--name-only", ref, "--", f"{folder}/")
    return [Path(line).name for line in listed.stdout.decode().splitlines()]


def ledger(text: str) -> dict[str, list[dict]]:
    """The rows of a ``CLAIMS.md`` per target id, each a dict of its columns."""
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    if not lines:
        return {}
    header, rows = table_cells(lines[0]), [dict(zip(table_cells(lines[0]), table_cells(line))) for line in lines[2:]]
    if "id" not in header:
        raise ValueError(f"not a claims ledger: its table has no id column ({header})")
    by_target: dict[str, list[dict]] = {}
    for row in rows:
        by_target.setdefault(row["id"], []).append(row)
    return by_target


def same_rows(old: list[dict], new: list[dict]) -> bool:
    """Whether two lists of ledger rows say the same, a verdict's mark :data:`~ponder.ledger.rows.OLDER` aside."""

    def content(rows: list[dict]) -> list[dict]:
        return [{**row, "verdict": row["verdict"].removesuffix(OLDER)} for row in rows]

    return content(old) == content(new)


@dataclass
class Target:
    """How one target's outputs compare with the committed ones."""

    name: str
    files: dict[str, str] = field(default_factory=dict)  # file name -> identical | differs | new | not made
    old_rows: list[dict] = field(default_factory=list)
    new_rows: list[dict] = field(default_factory=list)
    run: bool = True  # whether its notebook ran into the new ledger

    @property
    def timed(self) -> bool:
        return self.name in TIMED

    @property
    def identical(self) -> bool:
        return set(self.files.values()) <= {"identical"} and same_rows(self.old_rows, self.new_rows)


def file_status(made: Path, old: bytes | None) -> str:
    """``identical``, ``differs``, ``new`` (not committed) or ``not made`` (committed only)."""
    if not made.exists():
        return "not made"
    if old is None:
        return "new"
    return "identical" if made.read_bytes() == old else "differs"


def not_run(ledger_text: str) -> set[str]:
    """The targets a ledger says no notebook ran into it (its "No rows" line, :func:`ponder.ledger.rows.provenance`)."""
    found = NOT_RUN.search(ledger_text)
    return set(found["targets"].split(", ")) if found else set()


def compare(root: Path, folder: str, ref: str = "HEAD") -> list[Target]:
    """Every target of ``folder`` (relative to ``root``) made anew against ``ref``, in id order."""
    here = root / folder
    names = {p.name for p in here.iterdir() if p.is_file()} if here.is_dir() else set()
    names |= set(committed_names(root, ref, folder))
    old_ledger = committed(root, ref, f"{folder}/{LEDGER}")
    old = ledger(old_ledger.decode()) if old_ledger is not None else {}
    new_text = (here / LEDGER).read_text() if (here / LEDGER).exists() else ""
    new, unrun = ledger(new_text), not_run(new_text)
    targets = {
        t: Target(t, old_rows=old.get(t, []), new_rows=new.get(t, []), run=t not in unrun)
        for t in old.keys() | new.keys()
    }
    for name in sorted(names):
        match = FILE.match(name)
        if match:
            target = targets.setdefault(match["target"], Target(match["target"]))
            target.files[name] = file_status(here / name, committed(root, ref, f"{folder}/{name}"))
    return [targets[t] for t in sorted(targets, key=target_order)]


def side_by_side(old_rows: list[dict], new_rows: list[dict]) -> list[str]:
    """Lines showing each claim's committed fields beside its new ones (rows matched by claim text)."""
    old, new = {r["claim"]: r for r in old_rows}, {r["claim"]: r for r in new_rows}
    lines = []
    for claim in [*old, *(c for c in new if c not in old)]:
        before, after = old.get(claim, {}), new.get(claim, {})
        fields = [f for f in [*before, *(f for f in after if f not in before)] if f not in ("id", "claim")]
        width = max(len("committed"), *(len(before.get(f, "(none)")) for f in fields))
        lines += [f"    {claim}", f"      {'':<9} {'committed':<{width}} | new"]
        lines += [f"      {f:<9} {before.get(f, '(none)'):<{width}} | {after.get(f, '(none)')}" for f in fields]
    return lines


def summary(target: Target) -> str:
    """One line: the target, whether it is identical, its files and ledger rows."""
    files = ", ".join(f"{name.split('.', 1)[1]} {status}" for name, status in target.files.items()) or "no files"
    rows = (
        "ledger rows identical"
        if same_rows(target.old_rows, target.new_rows)
        else f"ledger rows differ ({len(target.old_rows)} committed, {len(target.new_rows)} new)"
    )
    if not target.run:
        return f"{target.name:<9} not run   its notebook did not run into this ledger"
    verdict = "identical" if target.identical else "DIFFERS"
    return f"{target.name:<9} {verdict:<9} {'timing ' if target.timed else ''}{files}; {rows}"


def verify(root: Path, folder: str, ref: str = "HEAD", only: set[str] | None = None) -> int:
    """Print the comparison of every target (of the targets ``only``, where given); return how many targets
    that time nothing differ."""
    targets = [t for t in compare(root, folder, ref) if only is None or t.name in only]
    head = git(root, "rev-parse", "--short", ref).stdout.decode().strip() or ref
    print(f"{folder}/ made here against {ref} ({head}); timing targets ({', '.join(TIMED)}) differ by design")
    old_ledger = committed(root, ref, f"{folder}/{LEDGER}")
    if old_ledger is not None and not by_this_rule(old_ledger.decode()):
        print(
            f"the committed {LEDGER} was judged by another rule (its header states it): a row's verdict and evidence "
            "may differ for that alone"
        )
    for target in targets:
        print(summary(target))
        if target.run and target.old_rows != target.new_rows:
            print("\n".join(side_by_side(target.old_rows, target.new_rows)))
    unrun = [t.name for t in targets if not t.run]
    differing = [t.name for t in targets if t.run and not t.identical and not t.timed]
    timed = [t.name for t in targets if t.run and t.timed]
    print(
        f"{len(targets) - len(differing) - len(timed) - len(unrun)} identical, "
        f"{len(differing)} differ ({', '.join(differing) or 'none'}), {len(timed)} timing"
        + (f", {len(unrun)} not run ({', '.join(unrun)})" if unrun else "")
    )
    return len(differing)
