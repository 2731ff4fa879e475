"""How long a ``make figures`` should take on this machine, from the measured-times record
(:mod:`ponder.repro.measured`).

A fixed piece of training (:func:`calibration`) says how fast this machine trains against the machine of the record.
A profile with its own entry expects each run at its training function's mean there; a profile not yet timed
(``cpu`` before it has run) expects each run's steps at the seconds per step its kind took at ``quick``
(:func:`run_seconds`). ``make figures`` prints the result before it starts and orders its ready runs longest first by
it; ``make plan`` prints it per training function without training anything (:func:`ponder.repro.notebooks.plan`).
"""

import time
from collections.abc import Callable
from pathlib import Path

from .measured import RECORD, Planned, read


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


def expected(
    figures: Path, profile: str, planned: list[Planned], workers: int, calibrated: float, share: float = 1.0
) -> dict | None:
    """What a ``make figures`` of ``profile`` that trains the ``planned`` runs on ``workers`` cores should take here, as
    an entry of the record: ``wall minutes`` (each run's :func:`run_seconds`, spread over the workers, and the rest of
    the entry's wall time, the notebooks' own, as it was, times the ``share`` of the notebooks executed), ``run
    CPU-minutes`` (also ``by function``: runs and CPU-minutes), all scaled by this machine's :func:`calibration`
    ``calibrated`` against the record's, and what it ``rests on``; ``None`` without a record to rest on
    (:func:`resting_on`) or a calibration."""
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
    rest = share * scale * max(60 * entry["wall minutes"] - 60 * entry["run CPU-minutes"] / entry["workers"], 0)
    how = "" if own else ", each run's steps at the seconds per step its kind took there"
    return {
        "wall minutes": round((training / workers + rest) / 60, 1),
        "runs to train": len(planned),
        "run CPU-minutes": round(training / 60, 1),
        "by function": {name: [len(s), round(sum(s) / 60, 1)] for name, s in sorted(by.items())},
        "workers": workers,
        "rests on": f"{key} of figures/{RECORD}{how}, scaled by this machine's speed ({scale:.2f}x its time)",
    }


def duration(minutes: float) -> str:
    """``"25 min"``, or from two hours on ``"6.8 h"``: a wall time as a person reads it."""
    return f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"
