"""Move a run cache to the keys of today's code, for a change that moves no number.

A run's key hashes its config and the code of every module its experiment imports
(:func:`ponder.runs.config_key`), so a change that only moves or renames code (a new layout, a helper
split off) re-keys runs whose weights it would reproduce bit for bit. Instead of retraining them::

    python -m ponder.migrate OLD_REF [--profile quick] [--dry-run]

takes the library as it was at the commit ``OLD_REF`` (``git archive``), finds for each finished run
folder (one with its ``config.json``) the experiment module whose key at ``OLD_REF`` is the folder's
name, and renames the folder to the key that module gives the same config today. Every folder is
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

from .paths import ROOT, runs_dir

KEYS = """import json, sys
from ponder.runs import config_key
print(json.dumps([config_key(config, [module]) for config, module in json.load(sys.stdin)]))"""


def experiment_modules(lib: Path) -> list[str]:
    """The modules under ``lib/ponder/experiments`` of a tree: those that define runs."""
    package = lib / "ponder"
    return sorted(
        ".".join(("ponder", *p.relative_to(package).with_suffix("").parts))
        for p in (package / "experiments").rglob("*.py")
        if p.name not in ("__init__.py", "__main__.py")
    )


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


def plan(old_lib: Path, new_lib: Path, folders: list[Path]) -> dict[Path, Path | None]:
    """``{folder: where it belongs today}`` (itself if it is there already; ``None`` if no experiment module
    of ``old_lib`` gives its name as a key)."""
    modules = experiment_modules(old_lib)
    configs = [json.loads((folder / "config.json").read_text()) for folder in folders]
    requests = [(config, module) for config in configs for module in modules]
    old, new = keys_at(old_lib, requests), keys_at(new_lib, requests)
    moves = {}
    for i, folder in enumerate(folders):
        found = [j for j in range(i * len(modules), (i + 1) * len(modules)) if old[j] == folder.name]
        moves[folder] = folder.parent / new[found[0]] if found else None
    return moves


def migrate(old_ref: str, profile: str, dry_run: bool = False) -> dict[str, int]:
    """Rename the run folders of ``profile``'s cache from ``old_ref``'s keys to today's; print what it did and
    return the counts ``{"moved", "in place", "target taken", "unknown"}``."""
    folders = finished_runs(runs_dir(profile))
    with tempfile.TemporaryDirectory() as tree:
        archive = subprocess.run(["git", "archive", old_ref, "lib"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        moves = plan(Path(tree) / "lib", ROOT / "lib", folders)
    counts = dict.fromkeys(("moved", "in place", "target taken", "unknown"), 0)
    for folder, target in moves.items():
        where = folder.relative_to(runs_dir(profile))
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
    print(", ".join(f"{n} {what}" for what, n in counts.items()) + f" of {len(folders)} finished runs")
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ponder.migrate", description=__doc__.split("\n\n")[0])
    parser.add_argument("old_ref", help="the commit whose code made the cache's keys")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--dry-run", action="store_true", help="say what would move, move nothing")
    args = parser.parse_args(argv)
    migrate(args.old_ref, args.profile, args.dry_run)


if __name__ == "__main__":
    main()
