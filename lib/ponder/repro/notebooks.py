"""``make figures``: train the notebooks' runs and execute the notebooks, then gather the ledger (:func:`run`); the
command line behind the Makefile's notebook targets is :mod:`ponder.repro.cli`."""

import os
import sys
import time
from functools import partial
from pathlib import Path

from ..checks import check_int
from ..ledger.rows import clear, gather, rows, tally
from ..paths import ROOT, figures_dir, profile_folder, runs_dir
from ..runner import parallel, streams
from ..runner.parallel import worker_count
from ..runner.training import cores
from ..targets import TIMED_NOTEBOOKS, of_notebooks
from . import execution, expected, measured, provenance, readme
from .registry import training


def execute(path: Path, out: Path, profile: str, seed: int) -> tuple[str, float, str | None]:
    """Execute one notebook into ``out``; ``(name, seconds, None)`` or ``(name, seconds, error summary)``."""
    start = time.perf_counter()
    try:
        execution.execute(path, out / path.name, profile, seed)
    except Exception as error:  # noqa: BLE001 -- reported, and the other notebooks still run
        lines = [line for line in str(error).strip().splitlines() if line.strip()]
        return path.name, time.perf_counter() - start, (lines[-1] if lines else repr(error))
    return path.name, time.perf_counter() - start, None


# Notebooks that measure wall-clock time (acm-9, survey-4): executed alone, after the others.
def run(profile: str, seed: int = 0, names: list[str] | None = None, jobs: int | None = None) -> Path:
    """Execute notebooks into ``build/<profile>/``, printing each run's and each notebook's time; gather
    the ledger whatever happened, and with it the README's generated blocks when these are committed
    figures (``quick`` or ``cpu``, seed 0: :mod:`ponder.repro.readme`), and each executed notebook's row of
    ``RUN.md`` beside the figures (:mod:`ponder.repro.provenance`); raise ``SystemExit(1)`` after it if a
    notebook failed.

    The C-PVR training streams are drawn first, on every core (:func:`draw_streams`). Then one pool
    of ``jobs`` worker processes (default :func:`ponder.runner.parallel.worker_count`: one per core on the
    CPU, where runs and kernels have one thread each) trains the runs of every notebook
    (:func:`ponder.repro.registry.training`: the runs others build on first, those built on them as
    soon as they have ended, the rest filling the cores) and executes each notebook once its runs
    are there and no run is left to start, so notebooks fill the cores that the last runs leave
    idle. The :data:`~ponder.targets.TIMED_NOTEBOOKS` execute alone at the end, so that nothing else runs beside
    what they time. A run that fails to train does not stop the others: its notebook retrains it
    and reports the error. With one worker nothing trains ahead: each notebook trains its own runs.
    """
    jobs = worker_count() if jobs is None else check_int("jobs", jobs, minimum=1)
    out = ROOT / "build" / profile
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TQDM_DISABLE", "1")  # the kernels' bars would only clutter the copies
    os.environ["PONDER_SEED"] = str(check_int("seed", seed, minimum=0))  # another seed: its own figures and ledger
    paths, failed, made, begin = execution.find(names), [], [], time.perf_counter()
    cold, trained_seconds = not any(p.is_file() for p in runs_dir(profile).rglob("*")), []
    peak = measured.PeakMemory().start()
    calibrated = expected.calibration()  # how fast this machine trains: for the estimate and a whole profile's record
    if not names:  # every notebook rewrites its rows: none left from claims that are no longer made
        clear(profile)
    untimed = [p for p in paths if p.stem not in TIMED_NOTEBOOKS]
    independent, groups, needed = training(profile, seed, [p.stem for p in paths])
    if jobs > 1:
        draw_streams(profile, groups, max(jobs, cores()))
    runs, needs = parallel.plan(independent, groups, keep_going=True) if jobs > 1 else ([], [])
    estimate = expected_time(profile, runs, paths, jobs, calibrated)
    about = ""
    if estimate:
        about = f"; expected: about {expected.duration(estimate['wall minutes'])} ({estimate['rests on']})"
    print(
        f"[{profile}] {len(runs)} run(s) to train and {len(paths)} notebook(s) to execute, {jobs} at a time{about}",
        flush=True,
    )
    typical = expected.run_seconds(figures_dir("quick"), profile)  # of the record: the runs ready start longest first
    position = {parallel.key(job): i for i, job in enumerate(runs)}
    waits = [{position[k] for k in map(parallel.key, needed.get(p.stem, [])) if k in position} for p in untimed]
    trained, executed = iter(range(1, len(runs) + 1)), iter(range(1, len(paths) + 1))

    def elapsed() -> str:
        about = f" of about {estimate['wall minutes']:.0f}" if estimate else ""
        return f"elapsed {(time.perf_counter() - begin) / 60:.1f}{about} min"

    def ran(job: parallel.Job, error: BaseException | None, seconds: float) -> None:
        trained_seconds.append((measured.planned(job), seconds))
        if error is not None:
            print(
                f"  a run failed to train ahead (its notebook will say more): {parallel.failure(job, error)}",
                file=sys.stderr,
            )
        print(
            f"[{profile}]   run {next(trained)}/{len(runs)} {parallel.describe(job)}: {seconds:.0f} s ({elapsed()})",
            flush=True,
        )

    def executed_one(path: Path, result, error: BaseException | None, seconds: float) -> None:
        name, seconds, problem = result if error is None else (path.name, seconds, f"{type(error).__name__}: {error}")
        print(
            f"[{profile}] [{next(executed)}/{len(paths)}] {name} {'done' if problem is None else 'FAILED'} "
            f"in {seconds:.0f} s ({elapsed()})",
            flush=True,
        )
        made.append((path.stem, of_notebooks().get(f"notebooks/{path.name}", []), seconds, problem))
        if problem is not None:
            failed.append((name, problem))

    def train_and_execute(
        runs: list, needs: list[set[int]], notebooks: list[Path], waits: list[set[int]], width: int
    ) -> None:
        calls = parallel.train_calls(runs) + [partial(execute, path, out, profile, seed) for path in notebooks]
        longest_first = [typical(measured.planned(job)) for job in runs] + [0.0] * len(notebooks)
        if calls:
            parallel.schedule(
                calls,
                needs + waits,
                width,
                lambda i, result, error, seconds: (
                    ran(runs[i], error, seconds)
                    if i < len(runs)
                    else executed_one(notebooks[i - len(runs)], result, error, seconds)
                ),
                longest_first,
            )

    train_and_execute(runs, needs, untimed, waits, jobs)
    timed = [p for p in paths if p.stem in TIMED_NOTEBOOKS]
    train_and_execute([], [], timed, [set() for _ in timed], 1)  # alone, after everything else
    ledger = gather(profile)
    if not names and not failed and seed == 0 and profile != "smoke":  # a whole profile: its time, figures/TIMES.json
        wall = time.perf_counter() - begin
        entry = measured.figures_entry(wall, trained_seconds, peak.stop(), runs_dir(profile), jobs, calibrated)
        print(f"timed: {measured.write(figures_dir('quick'), measured.figures_key(profile, cold, len(runs)), entry)}")
    print(
        f"claims ledger: {ledger}: {tally(rows(profile))}; "
        f"provenance: {provenance.record(ledger.parent, profile, made)}"
    )
    if ledger.parent in {ROOT / "figures" / profile_folder(p) for p in readme.SHOWN}:  # the README shows them
        readme.sync_documents(ROOT)
    for name, error in failed:
        print(
            f"FAILED {name}: {error}\n  the executed copy, with the failing cell's traceback: {out / name}",
            file=sys.stderr,
        )
    if failed:
        raise SystemExit(1)
    return ledger


def expected_time(profile: str, runs: list, paths: list[Path], jobs: int, calibrated: float) -> dict | None:
    """:func:`ponder.repro.expected.expected` of training ``runs`` and executing the notebooks ``paths`` of ``profile``
    on ``jobs`` workers, from the record beside ``quick``'s figures."""
    planned, share = [measured.planned(job) for job in runs], len(paths) / len(execution.find())
    return expected.expected(figures_dir("quick"), profile, planned, jobs, calibrated, share)


def plan(profile: str, seed: int = 0, names: list[str] | None = None, jobs: int | None = None) -> dict | None:
    """What ``make figures`` of ``profile`` would train here and how long it should take, from the specs and the run
    cache alone: nothing is built, drawn or trained (``python -m ponder.repro plan``). Prints the runs to train per
    training function with their expected CPU-minutes and the expected wall time on ``jobs`` workers
    (:func:`ponder.repro.expected.expected`, which also says what it rests on); returns that estimate (``None``
    without a record to rest on). The training streams' chunks, drawn before any run on every core, are not counted."""
    jobs = worker_count() if jobs is None else check_int("jobs", jobs, minimum=1)
    paths = execution.find(names)
    independent, groups, _ = training(profile, seed, [p.stem for p in paths])
    runs = [job for job in parallel.plan(independent, groups, keep_going=True)[0] if not streams.is_chunk(job)]
    estimate = expected_time(profile, runs, paths, jobs, expected.calibration())
    if estimate is None:
        print(f"[{profile}] {len(runs)} run(s) to train; no record of figures/{measured.RECORD} to estimate from")
        return None
    print(f"[{profile}] {len(runs)} run(s) to train, {jobs} at a time; expected here (CPU-minutes per function):")
    for name, (count, minutes) in sorted(estimate["by function"].items(), key=lambda item: -item[1][1]):
        print(f"  {name:40s} {count:4d} run(s) {minutes:8.1f}")
    wall = expected.duration(estimate["wall minutes"])
    print(
        f"  in all: {estimate['run CPU-minutes'] / 60:.1f} CPU-hours; about {wall} wall on {jobs} worker(s)"
        f" ({estimate['rests on']})"
    )
    return estimate


def draw_streams(profile: str, groups: list, width: int) -> None:
    """Draw the training streams that the groups' runs read (:mod:`ponder.runner.streams`) before any
    run starts, ``width`` at a time: every core, which on a GPU machine is more than the processes
    sharing the GPU; those of groups whose runs are all cached are left alone. A chunk that fails
    here is drawn by the first run that reads it."""
    drawn, begin = [], time.perf_counter()
    chunks = [
        job
        for upstream, built in groups
        if not all(map(parallel.is_cached, built))
        for job in upstream
        if streams.is_chunk(job)
    ]
    failures = parallel.prefetch(chunks, width, keep_going=True, report=lambda *_: drawn.append(1))
    if drawn:
        print(
            f"[{profile}] {len(drawn)} chunk(s) of training streams drawn in {time.perf_counter() - begin:.0f} s, "
            f"{width} at a time",
            flush=True,
        )
    for line in failures:
        print(f"  a chunk of a training stream failed to draw ahead (its runs will draw it): {line}", file=sys.stderr)
