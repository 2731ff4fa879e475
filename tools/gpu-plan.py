"""What a profile trains, per notebook: runs, optimisation steps, and GPU-minutes at measured rates.

    python tools/gpu-plan.py [PROFILE [BENCH_JSON]]    (default: gpu, figures/gpu/bench-train.json)

Every job of every notebook is called with training replaced by a recorder (the run's name and
config, an untrained model back), so the plan is the runs ``make figures`` would train, each
counted once, in the notebook that first needs it. Minutes use the steps per second summed over
the processes sharing one GPU that ``python -m ponder.bench train`` measured (captured where the
runs capture their step); a family the benchmark file lacks borrows another's rate, and says so.
"""
import json
import sys
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import ponder  # noqa: F401  (pins the numerics before torch)
import torch
from ponder import parallel
from ponder.experiments import acm, hyper_ut, hyper_ut_scratchpad, hyper_ut_vision, notebook_jobs, survey

ROOT = Path(__file__).resolve().parents[1]
# run-name prefix -> (benchmark family prefix, whether those runs capture their step); longest prefix wins
FAMILY = {
    "hyla/sraven": ("sraven", True),
    "hyla/fuzzy": ("fuzzy", True),
    "hyla/text": ("text", False),
    "hut/vision": ("digits U-ViT", True),
    "hut/scratchpad": ("C-PVR", False),  # a 6-layer sequence-to-sequence model: no family of its own
    "hut": ("C-PVR", True),
    "survey/cpvr": ("C-PVR", False),
    "survey/parity": ("parity", False),
    "acm": ("ViT", False),  # the speech model too: no family of its own
}
BORROWED = {"fuzzy": "sraven", "text": "sraven", "digits U-ViT": "ViT"}  # until a benchmark measures them


def rates(bench: Path) -> dict[tuple[str, bool], float]:
    """``{(family prefix, captured): steps/s}``, the slowest of the families that share a prefix;
    captured runs at the captured rate where the benchmark has one (else the eager one)."""
    found = defaultdict(list)
    for row in json.loads(bench.read_text())["families"]:
        for prefix in {prefix for prefix, _ in FAMILY.values() if row["family"].startswith(prefix)}:
            found[prefix, False].append(row["shared_steps_per_s"])
            found[prefix, True].append(row.get("captured_shared_steps_per_s", row["shared_steps_per_s"]))
    return {key: min(values) for key, values in found.items()}


def family(run_name: str) -> tuple[str, bool]:
    """``(benchmark family prefix, whether the run captures its step)`` of a run."""
    return FAMILY[max((p for p in FAMILY if run_name.startswith(p)), key=len)]


def plan(profile: str) -> dict[str, dict[str, list[int]]]:
    """``{notebook: {run group: [runs, steps]}}`` of what ``profile`` trains."""
    seen, table = set(), defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for notebook, todo in notebook_jobs(profile).items():

        def record(run, make, *args, **kwargs):
            if run.key not in seen:
                seen.add(run.key)
                row = table[notebook][run.name if run.name.startswith("acm") else run.name.rsplit("/", 1)[0]]
                row[0] += 1
                row[1] += run.config["train"]["steps"]
            torch.manual_seed(0)
            return make(), {}

        with recording(record):
            for job in (acm.upstream(profile, notebook) if notebook.startswith("acm_") else []) + list(todo):
                job()
    return table


@contextmanager
def recording(record):
    """Every trainer the experiments call replaced by ``record`` (restored on leaving)."""
    trainers = [(m, "train_run") for m in (acm, hyper_ut, hyper_ut_vision, hyper_ut_scratchpad, survey)] + [(parallel, "train_one_thread")]
    saved = [getattr(m, name) for m, name in trainers]
    for m, name in trainers:
        setattr(m, name, record)
    try:
        yield
    finally:
        for (m, name), original in zip(trainers, saved):
            setattr(m, name, original)


def main(profile: str = "gpu", bench: str = str(ROOT / "figures" / "gpu" / "bench-train.json")) -> None:
    measured = rates(Path(bench))
    print(f"{profile}: the runs of every notebook, at the rates of {bench} ({json.loads(Path(bench).read_text())['device']})")
    total, borrowed = 0.0, set()
    for notebook, rows in plan(profile).items():
        minutes = 0.0
        for name, (runs, steps) in sorted(rows.items()):
            fam, captured = family(name)
            if (fam, captured) not in measured:
                borrowed.add(fam)
            rate = measured.get((fam, captured)) or measured[BORROWED[fam], captured]
            minutes += steps / rate / 60
            print(f"  {name:24s} {runs:3d} runs {steps:9,d} steps at {rate:5.0f}/s {steps / rate / 60:5.1f} min{'' if (fam, captured) in measured else f' ({fam}: rate of {BORROWED[fam]})'}")
        total += minutes
        print(f"{notebook:26s} {minutes:5.1f} GPU-min")
    print(f"total {total:.1f} GPU-min" + (f"; not measured, borrowed: {', '.join(sorted(borrowed))}" if borrowed else ""))


if __name__ == "__main__":
    main(*sys.argv[1:])
