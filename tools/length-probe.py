"""Do the attention kinds rank differently when trained longer? A profile's fuzzy-logic or sraven run
of each kind, trained at several lengths on several seeds, scored out of distribution and judged by
the ledger's rule: the probe that sets fuzzy logic's training length (docs/hyla.md, "Stand-ins and why").

    PONDER_RESULTS=/tmp/probe PYTHONPATH=lib python tools/length-probe.py TASK PROFILE --steps S[,S...] [--seeds 0,1,2]
        [--kinds hyla,softmax,linear] [--batch B] [--lr LR] [--held-out FRAC] [--jobs N]

TASK: ``fuzzy`` (the base run of hyla-a1's fuzzy column: N = 32, 70 % held out) or ``sraven``. Each
run is the profile's own (model, recipe, held-out split of its seed) with only its step count, and
``--batch`` / ``--lr`` / ``--held-out`` where given, changed; warmup stays the profile's.
``--held-out`` may list several fractions (hyla-2's drop: ``0.3,0.7``). Runs are
cached like any other (under ``PONDER_RESULTS``) and trained ``--jobs`` at a time, one thread each
(default: one per core), so a probe cut off resumes. Prints one JSON line per run (``ood``: OOD R²
or all-features OOD accuracy; ``train``: the same on training tasks; ``baseline``: the OOD score of
a trivial predictor, the R² of ignoring the context, i.e. the training tasks' average function at
the query, or sraven's chance), then per length each kind's mean ± s.e. over the seeds (and the
baseline's) and the first kind against each other, paired by seed (``d = first − other``), judged as the
ledger judges a claim (holds / does not hold / inconclusive; 3 seeds at least); then whether each
kind gains from the shortest length to the longest (``d = longest − shortest``, paired): where one
does, the shorter runs had not converged, and a ranking drawn from them answers another question.
With several held-out fractions, each is reported so, and per length each kind's drop from the
lowest fraction to the highest, the first kind judged to drop less than each other (paired).
"""

import ponder  # noqa: F401  (before torch: pinned numerics)

# isort: split

import argparse
import json
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

from ponder.ledger.verdicts import Estimate, greater
from ponder.models.attention import KINDS
from ponder.profiles import PROFILES
from ponder.runner import parallel
from ponder.studies.hyla import experiments as hyla


class Task(NamedTuple):
    """A task's base run (``setup``), how one of its runs is declared (``declare(setup, profile, seed)``), the
    field of its held-out fraction, the metrics read as OOD and training-task scores, and the OOD score of a
    trivial predictor (``baseline(run, metrics)``)."""

    setup: Callable
    declare: Callable
    held_out: str
    ood: str
    seen: str
    baseline: Callable
    baseline_name: str


TASKS = {
    "fuzzy": Task(
        hyla.fuzzy_setup,
        partial(hyla.task_spec, "fuzzy"),
        "frac_test",
        "test_r2",
        "train_r2",
        lambda s, metrics: metrics["test_r2_task_average"],
        "ignoring the context",
    ),
    "sraven": Task(
        hyla.sraven_setup,
        partial(hyla.task_spec, "sraven"),
        "holdout",
        "ood_acc",
        "id_acc",
        lambda s, metrics: s.f**-s.k,
        "chance",
    ),
}


def separated(cast: Callable) -> Callable[[str], list]:
    """An argparse type: a comma-separated list, each part ``cast``."""
    return lambda text: [cast(part) for part in text.split(",")]


def arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", choices=TASKS)
    parser.add_argument("profile", choices=PROFILES)
    parser.add_argument("--steps", type=separated(int), required=True, help="training lengths, comma-separated")
    parser.add_argument("--seeds", type=separated(int), default=[0, 1, 2])
    parser.add_argument(
        "--kinds",
        type=separated(str),
        default=["hyla", "softmax", "linear"],
        help="the first is judged against the others",
    )
    parser.add_argument("--batch", type=int, help="batch size (default: the profile's)")
    parser.add_argument("--lr", type=float, help="peak learning rate (default: the profile's)")
    parser.add_argument(
        "--held-out",
        type=separated(float),
        help="fractions of the combinations held out, comma-separated (default: the profile's base run's)",
    )
    parser.add_argument("--jobs", type=int, help="runs trained at a time (default: one per core)")
    args = parser.parse_args(argv)
    if unknown := set(args.kinds) - set(KINDS):
        parser.error(f"unknown kinds {sorted(unknown)}; choose from {list(KINDS)}")
    if len(args.kinds) < 2:
        parser.error("--kinds needs two kinds or more: the first is judged against the others")
    return args


def probe_runs(args: argparse.Namespace) -> list[tuple[object, int]]:
    """``(run description, seed)`` for every held-out fraction × length × kind × seed asked for."""
    task = TASKS[args.task]
    changes = {name: value for name, value in (("batch_size", args.batch), ("lr", args.lr)) if value is not None}
    held_out = [{task.held_out: frac} for frac in args.held_out] if args.held_out else [{}]
    return [
        (task.setup(args.profile, kind=kind, steps=steps, **changes, **frac), seed)
        for frac in held_out
        for steps in args.steps
        for kind in args.kinds
        for seed in args.seeds
    ]


def judge_against(first: str, others: list[str], values: dict[str, list[float]], claim: str) -> None:
    """Print ``first`` against each of ``others`` on per-seed ``values``: ``claim`` names the test."""
    for other in others:
        verdict = greater(values[first], values[other])
        print(f"  {first} {claim} {other}: {verdict.verdict} ({verdict.noise})")


def main(argv=None) -> None:
    args = arguments(argv)
    task = TASKS[args.task]
    runs = probe_runs(args)
    specs = [task.declare(s, args.profile, seed) for s, seed in runs]
    parallel.prefetch(specs, args.jobs)  # side by side; cached runs are read below
    scores, baselines = {}, {}
    for (s, seed), spec in zip(runs, specs):
        metrics = spec.metrics()
        frac, baseline = getattr(s, task.held_out), task.baseline(s, metrics)
        scores[s.kind, s.steps, frac, seed], baselines[frac, seed] = metrics[task.ood], baseline
        print(
            json.dumps(
                {
                    "task": args.task,
                    "kind": s.kind,
                    "seed": seed,
                    "steps": s.steps,
                    "batch_size": s.batch_size,
                    "lr": s.lr,
                    "held_out": frac,
                    "examples": s.steps * s.batch_size,
                    "ood": metrics[task.ood],
                    "train": metrics[task.seen],
                    "baseline": baseline,
                }
            ),
            flush=True,
        )
    first, others, seeds = args.kinds[0], args.kinds[1:], args.seeds
    held_out = sorted({frac for _, _, frac, _ in scores})
    short, long = min(args.steps), max(args.steps)
    for frac in held_out:
        label = f"{frac:g} held out, " if len(held_out) > 1 else ""
        for steps in args.steps:
            per_seed = {kind: [scores[kind, steps, frac, seed] for seed in seeds] for kind in args.kinds}
            print(
                f"{label}{steps} steps: "
                + ", ".join(f"{kind} {Estimate.of(values)}" for kind, values in per_seed.items())
                + f"; {task.baseline_name} {Estimate.of([baselines[frac, seed] for seed in seeds])}"
            )
            judge_against(first, others, per_seed, ">")
        if len(args.steps) > 1:  # converged? each kind's score at the longest length against at the shortest
            print(f"{label}{long} steps against {short}:")
            for kind in args.kinds:
                verdict = greater(
                    [scores[kind, long, frac, seed] for seed in seeds],
                    [scores[kind, short, frac, seed] for seed in seeds],
                )
                print(f"  {kind} gains: {verdict.verdict} ({verdict.noise})")
    if len(held_out) > 1:  # hyla-2's claim: the first kind's score drops least as more is held out
        low, high = held_out[0], held_out[-1]
        for steps in args.steps:
            drop = {
                kind: [scores[kind, steps, low, seed] - scores[kind, steps, high, seed] for seed in seeds]
                for kind in args.kinds
            }
            print(
                f"{steps} steps, the drop from {low:g} to {high:g} held out: "
                + ", ".join(f"{kind} {Estimate.of(values)}" for kind, values in drop.items())
            )
            judge_against(
                first, others, {kind: [-d for d in values] for kind, values in drop.items()}, "drops less than"
            )


if __name__ == "__main__":
    main()
