"""Move a run cache to the keys of today's code, for a change that moves no number.

A run's key hashes its config and the code of every module its experiment imports
(:func:`ponder.runner.runs.config_key`), so a change that only moves or renames code (a new layout, a helper
split off) re-keys runs whose weights it would reproduce bit for bit. Instead of retraining them::

    python -m ponder.repro.migrate OLD_REF [--profile quick] [--dry-run]

takes the library as it was at the commit ``OLD_REF`` (``git archive``), finds for each finished run
folder (one with its ``config.json``) the experiment module whose key at ``OLD_REF`` is the folder's
name, and renames the folder to the key that module gives the same config today. A config that names the runs it
builds on by their keys (ACM's phases name their base model) is keyed after them, with their keys of today
in its place, and its ``config.json`` is rewritten so. Every folder is
accounted for: moved, already at today's key, or named as unknown (made by neither). Each tree
computes its keys with its own code, in a process of its own.

Whether the change really moves no number is not the migration's to say: ``make figures`` then
``make verify`` on the migrated cache does (every non-timing target identical).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ..paths import ROOT, runs_dir
from ..runner.runs import imported_by, write_json

KEYS = """import json, sys
try:
    from ponder.runner.runs import config_key
except ImportError:  # a tree whose run cache code is the module ponder.runs
    from ponder.runs import config_key
print(json.dumps([config_key(config, [module]) for config, module in json.load(sys.stdin)]))"""
SPECS = ("ponder.runner.specs", "ponder.specs")  # where a tree declares its runs (Spec, Chosen)


def module_name(path: str) -> str:
    """``lib/ponder/studies/acm/phases.py`` -> ``ponder.studies.acm.phases`` (a package by its folder)."""
    parts = Path(path).relative_to("lib").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


STUDIES = ("studies", "experiments", "methods")  # where a tree keeps the papers' runs (the last two: by kind)


def experiment_modules(lib: Path) -> list[str]:
    """The modules of a tree that define runs: those of its studies (:data:`STUDIES`) that import its run specs
    (:data:`SPECS`)."""
    package = lib / "ponder"
    paths = [p for folder in STUDIES for p in (package / folder).rglob("*.py")]
    names = [module_name(str(p.relative_to(lib.parent))) for p in paths]
    return sorted(n for n in names if set(SPECS) & imported_by(n, package, every_statement=True))


def moved_modules(old_ref: str, root: Path = ROOT) -> dict[str, str]:
    """``{module at old_ref: its name today}`` for every module of ``lib/ponder`` that git finds moved since
    ``old_ref`` (``git diff -M``: a file renamed, its content at least half the same)."""
    listing = subprocess.run(
        ["git", "diff", "-M", "--name-status", old_ref, "--", "lib/ponder"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [line.split("\t") for line in listing.splitlines()]
    return {module_name(r[1]): module_name(r[2]) for r in rows if r[0].startswith("R") and r[2].endswith(".py")}


def keys_at(lib: Path, requests: list[tuple[dict, str]]) -> list[str]:
    """``config_key(config, [module])`` for each request, computed by the code under ``lib``."""
    env = {**os.environ, "PYTHONPATH": str(lib)}
    done = subprocess.run(
        [sys.executable, "-c", KEYS], input=json.dumps(requests), env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def finished_runs(cache: Path) -> list[Path]:
    """The run folders of a cache that hold a finished run (``config.json`` is written last but one)."""
    return sorted(p.parent for p in cache.rglob("config.json"))


def mentions(value, names: set[str]) -> set[str]:
    """The strings among ``names`` that occur as values anywhere in the JSON ``value`` (a run's config names
    the runs it builds on by their keys, as ACM's phases name their base model)."""
    if isinstance(value, dict):
        return set().union(*(mentions(v, names) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(mentions(v, names) for v in value))
    return {value} & names if isinstance(value, str) else set()


def renamed(value, keys: dict[str, str]):
    """The JSON ``value`` with every string that is a key of ``keys`` replaced by its value."""
    if isinstance(value, dict):
        return {k: renamed(v, keys) for k, v in value.items()}
    if isinstance(value, list):
        return [renamed(v, keys) for v in value]
    return keys.get(value, value) if isinstance(value, str) else value


def plan(
    old_lib: Path, new_lib: Path, folders: list[Path], moved: dict[str, str] | None = None
) -> dict[Path, tuple[Path, dict] | None]:
    """``{folder: (where it belongs today, its config today)}`` (the folder itself if it is there already;
    ``None`` if no experiment module of ``old_lib`` gives its name as a key). ``moved`` names the modules
    that have another name today (:func:`moved_modules`); a run keyed by one is keyed by its new name.

    A config that names other runs by their keys is keyed after them, with their keys of today in place of
    the old ones: in rounds, each taking the folders whose named runs are all placed."""
    modules = experiment_modules(old_lib)
    today_name = {module: (moved or {}).get(module, module) for module in modules}
    configs = {folder: json.loads((folder / "config.json").read_text()) for folder in folders}
    names = {folder.name for folder in folders}
    keys: dict[str, str] = {}  # old key -> today's, of the folders placed so far
    moves: dict[Path, tuple[Path, dict] | None] = {}
    while pending := [folder for folder in folders if folder not in moves]:
        placed = {folder.name for folder in moves}
        ready = [f for f in pending if mentions(configs[f], names) <= placed | {f.name}] or pending
        today = {folder: renamed(configs[folder], keys) for folder in ready}
        old = keys_at(old_lib, [(configs[folder], module) for folder in ready for module in modules])
        new = keys_at(new_lib, [(today[folder], today_name[module]) for folder in ready for module in modules])
        for i, folder in enumerate(ready):
            found = [j for j in range(i * len(modules), (i + 1) * len(modules)) if old[j] == folder.name]
            moves[folder] = (folder.parent / new[found[0]], today[folder]) if found else None
            if found:
                keys[folder.name] = new[found[0]]
    return moves


def migrate(old_ref: str, profile: str, dry_run: bool = False) -> dict[str, int]:
    """Rename the run folders of ``profile``'s cache from ``old_ref``'s keys to today's; print what it did and
    return the counts ``{"moved", "in place", "target taken", "unknown"}``."""
    folders = finished_runs(runs_dir(profile))
    with tempfile.TemporaryDirectory() as tree:
        archive = subprocess.run(["git", "archive", old_ref, "lib"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        moves = plan(Path(tree) / "lib", ROOT / "lib", folders, moved_modules(old_ref))
    counts = dict.fromkeys(("moved", "in place", "target taken", "unknown"), 0)
    for folder, move in moves.items():
        where, (target, config) = folder.relative_to(runs_dir(profile)), move or (None, None)
        if target is None:
            counts["unknown"] += 1
            print(f"unknown: {where} (no experiment module at {old_ref} gives this key; it stays and is not read)")
        elif target == folder:
            counts["in place"] += 1
        elif target.exists():
            counts["target taken"] += 1
            print(f"kept: {where} (today's key {target.name} is there already)")
        else:
            counts["moved"] += 1
            print(f"{'would move' if dry_run else 'moved'}: {where} -> {target.name}")
            if not dry_run:
                folder.rename(target)
                write_json(target / "config.json", config)
    print(", ".join(f"{n} {what}" for what, n in counts.items()) + f" of {len(folders)} finished runs")
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ponder.repro.migrate", description=__doc__.split("\n\n")[0])
    parser.add_argument("old_ref", help="the commit whose code made the cache's keys")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--dry-run", action="store_true", help="say what would move, move nothing")
    args = parser.parse_args(argv)
    migrate(args.old_ref, args.profile, args.dry_run)


if __name__ == "__main__":
    main()
