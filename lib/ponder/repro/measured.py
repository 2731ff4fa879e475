"""The measured-times record: how long the project's commands take, on which machine, in one file.

``figures/TIMES.json`` holds one entry per command it times, each written by the command itself:

* ``make figures`` of every notebook of a profile writes ``figures-PROFILE-cold`` when it started on
  an empty run cache, ``figures-PROFILE-cached`` when it had no run to train (it only re-plotted),
  and ``figures-PROFILE`` otherwise (``cpu`` after ``quick``: what ``cpu`` adds);
* ``make test RECORD=1`` writes ``test`` (ruff, the unit tests and the smoke notebooks, after the install);
* ``python -m ponder.bench.limit --record`` writes ``bench-limit``: each family's training step against what its
  products alone would take, and where the rest goes (:mod:`ponder.bench.limit`, rendered by :func:`limit_table`);
* ``python -m ponder.repro plan --profile P --record`` writes ``estimate-P``: what a ``make figures`` of ``P`` should
  take on this machine (:mod:`ponder.repro.expected`), shown until ``figures-P`` is measured.

An entry holds the machine (:func:`ponder.repro.provenance.device`), the commit, the wall time, the runs
trained and their summed time (each run trains on one core, so that is CPU time), the peak memory of
the whole process tree and the size of the run cache. The README's and docs' times are generated
blocks rendered from it (:func:`line`, :func:`commands_table`), and ``tests/test_consistency.py``
fails on a time typed into a document instead.
"""

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import psutil

from ..ledger.rows import commit
from ..runner.specs import Chosen, Spec, declared
from .provenance import device

RECORD = "TIMES.json"
LIMIT = "bench-limit"  # the entry of python -m ponder.bench.limit --record


def path(figures: Path) -> Path:
    """The record beside the committed figures (``figures/TIMES.json``)."""
    return figures / RECORD


def read(figures: Path) -> dict[str, dict]:
    """Every entry of the record (empty if there is none)."""
    return json.loads(path(figures).read_text()) if path(figures).exists() else {}


def write(figures: Path, key: str, entry: dict) -> Path:
    """Replace the entry ``key`` of the record, keep the others; return the record's path."""
    entries = read(figures) | {key: {"machine": device(), "commit": commit(), **entry}}
    path(figures).write_text(json.dumps(dict(sorted(entries.items())), indent=1) + "\n")
    return path(figures)


def tree_memory() -> int:
    """Bytes resident in this process and every process it started (workers, kernels)."""
    me = psutil.Process()
    total = 0
    for process in [me, *me.children(recursive=True)]:
        try:
            total += process.memory_info().rss
        except psutil.Error:  # it ended between the listing and the read
            pass
    return total


class PeakMemory:
    """Samples :func:`tree_memory` every ``every`` seconds in a thread between :meth:`start` and :meth:`stop`."""

    def __init__(self, every: float = 2.0):
        self.every, self.bytes = every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            self.bytes = max(self.bytes, tree_memory())
            if self._stop.wait(self.every):
                return

    def start(self) -> "PeakMemory":
        self._thread.start()
        return self

    def stop(self) -> int:
        """The largest sample, in bytes (one more is taken now)."""
        self._stop.set()
        self._thread.join()
        return max(self.bytes, tree_memory())


def folder_bytes(folder: Path) -> int:
    """The bytes of every file under ``folder``."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


@dataclass(frozen=True)
class Planned:
    """A run to train as the record counts it: the function that trains it (``hyper_ut.train_cpvr``) and, for a
    declared run (:mod:`ponder.runner.specs`), its name (``hut/cpvr/ut_act``) and optimisation steps."""

    trainer: str
    name: str | None = None
    steps: int | None = None


def figures_entry(
    wall: float, trained: list[tuple[Planned, float]], peak: int, cache: Path, workers: int, calibrated: float
) -> dict:
    """The entry of a ``make figures``: ``wall`` seconds, ``(the run, seconds)`` of each run trained, the ``peak``
    bytes of the process tree, the run cache at ``cache``, the ``workers`` it trained on and this machine's
    :func:`~ponder.repro.expected.calibration`; the runs also counted per function, and per name with their steps
    (``by run``: what :func:`ponder.repro.expected.run_seconds` rests on for a profile not yet recorded)."""
    by, by_run = {}, {}
    for run, seconds in trained:
        by.setdefault(run.trainer, []).append(seconds)
        if run.name is not None and run.steps is not None:
            by_run.setdefault(run.name, []).append((seconds, run.steps))
    return {
        "wall minutes": round(wall / 60, 1),
        "runs trained": len(trained),
        "run CPU-minutes": round(sum(seconds for _, seconds in trained) / 60, 1),
        "by function": {name: [len(s), round(sum(s) / 60, 1)] for name, s in sorted(by.items())},
        "by run": {
            name: [len(r), round(sum(s for s, _ in r) / 60, 3), sum(n for _, n in r)]
            for name, r in sorted(by_run.items())
        },
        "peak memory GB": round(peak / 2**30, 1),
        "run cache GB": round(folder_bytes(cache) / 2**30, 2),
        "workers": workers,
        "calibration seconds": round(calibrated, 3),
    }


def figures_key(profile: str, cold: bool, trained: int) -> str:
    """The entry a whole-profile ``make figures`` writes: begun on an empty run cache, with nothing to train, or
    otherwise."""
    return f"figures-{profile}" + ("-cold" if cold else "-cached" if trained == 0 else "")


def line(figures: Path, key: str) -> str:
    """One sentence of the entry ``key``, for a document's ``time KEY`` block."""
    entry = read(figures).get(key)
    if entry is None:
        return f"not measured yet: the command that writes `{key}` into `figures/{RECORD}` has not run.\n"
    said = f"{entry['wall minutes']} min wall on a {entry['machine']}"
    if "runs trained" in entry:
        said += (
            f": {entry['runs trained']} runs trained in {entry['run CPU-minutes']} CPU-minutes, peak memory"
            f" {entry['peak memory GB']} GB, run cache {entry['run cache GB']} GB"
        )
    return f"{said} (commit `{entry['commit']}`).\n"


def by_function(figures: Path, key: str) -> str:
    """The runs of the entry ``key`` per training function: a table of runs and CPU-minutes, largest first."""
    entry = read(figures).get(key)
    if entry is None or not entry.get("by function"):
        return f"not measured yet: no `{key}` in `figures/{RECORD}`.\n"
    rows = sorted(entry["by function"].items(), key=lambda item: -item[1][1])
    table = ["| function | runs | CPU-minutes |", "| --- | --- | --- |"]
    return "\n".join(table + [f"| `{name}` | {runs} | {cpu} |" for name, (runs, cpu) in rows]) + "\n"


def estimate_of(entries: dict[str, dict], key: str) -> dict | None:
    """The estimate ``python -m ponder.repro plan --profile PROFILE --record`` kept (``estimate-PROFILE``) of the
    entry ``figures-PROFILE``; ``None`` without one."""
    return entries.get(f"estimate-{key.removeprefix('figures-')}") if key.startswith("figures-") else None


def minutes(figures: Path, key: str) -> str:
    """The wall time of ``key`` as a table cell, in whole minutes (its machine in :func:`commands_table`); for a
    ``figures-PROFILE`` not measured, its :func:`estimate_of`."""
    entries = read(figures)
    if key in entries:
        return f"{entries[key]['wall minutes']:.0f} min"
    estimate = estimate_of(entries, key)
    if estimate is None:
        return "not measured yet"
    wall = estimate["wall minutes"]
    return (
        f"not measured yet; expected about {wall / 60:.0f} h ({estimate['runs to train']} runs, "
        f"{estimate['run CPU-minutes'] / 60:.0f} CPU-hours) by `python -m ponder.repro plan`"
    )


COMMANDS = (  # (command, what it does, its entry)
    ("`make test`", "ruff, unit tests, the smoke notebooks with their checked numbers (after installing)", "test"),
    ("`make figures`", "trains and plots every notebook at `quick` (empty run cache)", "figures-quick-cold"),
    ("`make figures` again", "re-plots from the run cache", "figures-quick-cached"),
    ("`make figures PROFILE=cpu`", "what `cpu` adds after `quick`: every judged comparison's seeds", "figures-cpu"),
)


def commands_table(figures: Path) -> str:
    """The README's table of the timed commands: what each does, its wall time, its peak memory and the run cache it
    leaves (where recorded), and the machine it was measured on."""
    entries = read(figures)
    rows = [
        "| command | what it does | wall time | peak memory, run cache | measured on |",
        "| --- | --- | --- | --- | --- |",
    ]
    for command, does, key in COMMANDS:
        entry = entries.get(key, {})
        memory = f"{entry['peak memory GB']} GB, {entry['run cache GB']} GB" if "peak memory GB" in entry else "—"
        machine = entry.get("machine") or (estimate_of(entries, key) or {}).get("machine", "—")
        rows.append(f"| {command} | {does} | {minutes(figures, key)} | {memory} | {machine} |")
    return "\n".join(rows) + "\n"


def limit_table(figures: Path) -> str:
    """The entry ``bench-limit`` as a table: per family, its step, the time of its products at the machine's rate,
    the distance between them, and the parts of the step in milliseconds, after a line naming the machine."""
    entry = read(figures).get(LIMIT)
    if entry is None:
        return f"not measured yet: `python -m ponder.bench.limit --record` writes `{LIMIT}` into `figures/{RECORD}`.\n"
    parts = list(entry["families"][0]["parts_ms"])
    rows = [
        f"On a {entry['machine']}, one thread, the pinned matrix products at {entry['matmul_gflops']:.0f} GFLOP/s"
        f" (commit `{entry['commit']}`); times in ms per step:",
        "",
        "| family | step | products alone | distance | " + " | ".join(parts) + " |",
        "| --- " * (4 + len(parts)) + "|",
    ]
    for row in entry["families"]:
        cells = [row["family"], f"{row['step_ms']:.1f}", f"{row['limit_ms']:.2f}", f"{row['distance']:.0f}×"]
        rows.append("| " + " | ".join(cells + [f"{row['parts_ms'][part]:.1f}" for part in parts]) + " |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> None:
    """``python -m ponder.repro.measured test SECONDS``: record ``make test``'s wall time (the Makefile's
    ``RECORD=1``)."""
    import argparse

    from ..paths import ROOT

    parser = argparse.ArgumentParser(prog="python -m ponder.repro.measured", description=main.__doc__)
    parser.add_argument("key", choices=["test"])
    parser.add_argument("seconds", type=float)
    args = parser.parse_args(argv)
    print(f"recorded: {write(ROOT / 'figures', args.key, {'wall minutes': round(args.seconds / 60, 1)})}")


if __name__ == "__main__":
    main()


def trainer(job: Callable[[], object]) -> str:
    """The function a job calls, by module: ``hyper_ut.cpvr.train_cpvr`` (``ponder.studies.`` left out); a declared
    run's :attr:`~ponder.runner.specs.Spec.trainer` (``hyper_ut.train_cpvr``)."""
    if declared(job):
        return job.trainer
    func = job.func if isinstance(job, partial) else job
    return f"{func.__module__}.{func.__name__}".removeprefix("ponder.studies.")


def planned(job: Callable[[], object]) -> Planned:
    """A job as the measured-times record counts it: its :func:`trainer` and, for a declared run, its name and
    optimisation steps (a run chosen among others: those of the first it is chosen among, trained as they are)."""
    spec = job.among[0] if isinstance(job, Chosen) else job
    if not isinstance(spec, Spec):
        return Planned(trainer(job))
    steps = spec.config.get("train", {}).get("steps")
    return Planned(trainer(job), spec.name, None if steps is None else steps * max(len(spec.together), 1))
