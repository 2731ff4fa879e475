"""The measured-times record: how long the project's commands take, on which machine, in one file.

``figures/TIMES.json`` holds one entry per command it times, each written by the command itself:

* ``make figures`` of every notebook of a profile writes ``figures-PROFILE-cold`` when it started on
  an empty run cache, ``figures-PROFILE-cached`` when it had no run to train (it only re-plotted),
  and ``figures-PROFILE`` otherwise (``cpu`` after ``quick``: what ``cpu`` adds);
* ``make test RECORD=1`` writes ``test`` (ruff, the unit tests and the smoke notebooks, after the install);
* ``python -m ponder.bench.limit --record`` writes ``bench-limit``: each family's training step against what its
  products alone would take, and where the rest goes (:mod:`ponder.bench.limit`, rendered by :func:`limit_table`).

An entry holds the machine (:func:`ponder.repro.provenance.device`), the commit, the wall time, the runs
trained and their summed time (each run trains on one core, so that is CPU time), the peak memory of
the whole process tree and the size of the run cache. The README's and docs' times are generated
blocks rendered from it (:func:`line`, :func:`commands_table`), and ``tests/test_consistency.py``
fails on a time typed into a document instead.
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..ledger.rows import commit
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


def calibration(rounds: int = 3) -> float:
    """Seconds of a fixed piece of training on one thread (200 AdamW steps of a small MLP on one batch), the
    fastest of ``rounds``: how fast this machine trains, to scale times recorded on another (:func:`expected`)."""
    import torch

    from ..runner.training import num_threads

    def once() -> float:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
        optimizer, x = torch.optim.AdamW(model.parameters(), lr=1e-3), torch.randn(128, 64)
        start = time.perf_counter()
        for _ in range(200):
            optimizer.zero_grad()
            model(x).square().mean().backward()
            optimizer.step()
        return time.perf_counter() - start

    with num_threads(1):
        return min(once() for _ in range(rounds))


@dataclass(frozen=True)
class Planned:
    """A run to train as the record counts it: the function that trains it (``hyper_ut.train_cpvr``) and, for a
    declared run (:mod:`ponder.runner.specs`), its name (``hut/cpvr/ut_act``) and optimisation steps."""

    trainer: str
    name: str | None = None
    steps: int | None = None


def resting_on(figures: Path, profile: str) -> tuple[str, bool] | None:
    """The entry of the record that times of ``profile`` rest on, and whether it is the profile's own: its own
    (``figures-PROFILE-cold``, else ``figures-PROFILE``), else ``quick``'s cold one where it counts its runs' steps
    (``by run``); ``None`` without either."""
    entries = read(figures)
    own = next(
        (k for k in (f"figures-{profile}-cold", f"figures-{profile}") if "calibration seconds" in entries.get(k, {})),
        None,
    )
    if own is not None:
        return own, True
    return ("figures-quick-cold", False) if "by run" in entries.get("figures-quick-cold", {}) else None


def run_seconds(figures: Path, profile: str) -> Callable[[Planned], float]:
    """A run's CPU seconds on the machine of the record (:func:`resting_on`; ``0`` for every run without one).

    From the profile's own entry, a run's mean per training function (of every run for a function not recorded).
    From ``quick``'s, the run's steps at the seconds per step its name took there (the entry's mean per step for a
    name ``quick`` did not train; a run with no steps counted as a run of the mean)."""
    found = resting_on(figures, profile)
    if found is None:
        return lambda run: 0.0
    entry = read(figures)[found[0]]
    per_run = {name: 60 * cpu / runs for name, (runs, cpu) in entry["by function"].items()}
    mean_run = 60 * entry["run CPU-minutes"] / max(entry["runs trained"], 1)
    if found[1]:
        return lambda run: per_run.get(run.trainer, mean_run)
    by_run = {name: 60 * cpu / steps for name, (_, cpu, steps) in entry["by run"].items()}
    mean_step = 60 * sum(cpu for _, cpu, _ in entry["by run"].values()) / sum(s for *_, s in entry["by run"].values())
    return lambda run: mean_run if run.steps is None else run.steps * by_run.get(run.name, mean_step)


def expected(figures: Path, profile: str, planned: list[Planned], workers: int, calibrated: float) -> dict | None:
    """What a ``make figures`` of ``profile`` that trains the ``planned`` runs on ``workers`` cores should take here, as
    an entry of the record: ``wall minutes`` (each run's :func:`run_seconds`, spread over the workers, and the rest of
    the entry's wall time, the notebooks' own, as it was), ``run CPU-minutes`` (also ``by function``: runs and
    CPU-minutes), all scaled by this machine's :func:`calibration` ``calibrated`` against the record's, and what it
    ``rests on``; ``None`` without a record to rest on (:func:`resting_on`) or a calibration."""
    found = resting_on(figures, profile)
    if found is None or not calibrated:
        return None
    key, own = found
    entry = read(figures)[key]
    scale = calibrated / entry["calibration seconds"]
    seconds = run_seconds(figures, profile)
    by = {}
    for run in planned:
        by.setdefault(run.trainer, []).append(scale * seconds(run))
    training = sum(map(sum, by.values()))
    rest = scale * max(60 * entry["wall minutes"] - 60 * entry["run CPU-minutes"] / entry["workers"], 0)
    how = "" if own else ", each run's steps at the seconds per step its kind took there"
    return {
        "wall minutes": round((training / workers + rest) / 60, 1),
        "runs to train": len(planned),
        "run CPU-minutes": round(training / 60, 1),
        "by function": {name: [len(s), round(sum(s) / 60, 1)] for name, s in sorted(by.items())},
        "workers": workers,
        "rests on": f"{key} of figures/{RECORD}{how}, scaled by this machine's speed ({scale:.2f}x its time)",
    }


def figures_entry(
    wall: float, trained: list[tuple[Planned, float]], peak: int, cache: Path, workers: int, calibrated: float
) -> dict:
    """The entry of a ``make figures``: ``wall`` seconds, ``(the run, seconds)`` of each run trained, the ``peak``
    bytes of the process tree, the run cache at ``cache``, the ``workers`` it trained on and this machine's
    :func:`calibration`; the runs also counted per function, and per name with their steps (``by run``: what
    :func:`expected` rests on for a profile not yet recorded)."""
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
