"""Do the attention kinds rank differently when trained longer? A profile's fuzzy-logic or sraven run
of each kind, trained at several lengths on several seeds, scored out of distribution and judged by
the ledger's rule: the probe behind the README's "Trained longer, HYLA leads on fuzzy logic".

    PONDER_RESULTS=/tmp/probe PYTHONPATH=lib python tools/length-probe.py TASK PROFILE --steps S[,S...] [--seeds 0,1,2]
        [--kinds hyla,softmax,linear] [--batch B] [--lr LR] [--held-out FRAC] [--jobs N]

TASK: ``fuzzy`` (the base run of hyla-a1's fuzzy column: N = 32, 70 % held out) or ``sraven``. Each
run is the profile's own (model, recipe, held-out split of its seed) with only its step count, and
``--batch`` / ``--lr`` / ``--held-out`` where given, changed; warmup stays the profile's.
``--held-out`` may list several fractions (hyla-2's drop: ``0.3,0.7``). Runs are
cached like any other (under ``PONDER_RESULTS``) and trained ``--jobs`` at a time, one thread each
(default: one per core), so a probe cut off resumes. Prints one JSON line per run (``ood``: OOD R² or all-features OOD
accuracy; ``train``: the same on training tasks), then per length each kind's mean ± s.e. over the
seeds and the first kind against each other, paired by seed (``d = first − other``), judged as the
ledger judges a claim (holds / does not hold / inconclusive; 3 seeds at least); then whether each
kind gains from the shortest length to the longest (``d = longest − shortest``, paired): where one
does, the shorter runs had not converged, and a ranking drawn from them answers another question.
With several held-out fractions, each is reported so, and per length each kind's drop from the
lowest fraction to the highest, the first kind judged to drop less than each other (paired).
"""
import ponder  # noqa: F401  (before torch: pinned numerics)
import argparse
import json
from functools import partial

from ponder import parallel
from ponder.claims import Estimate, greater
from ponder.experiments import hyla
from ponder.models.attention import KINDS
from ponder.profiles import PROFILES

# per task: the profile's base run, its trainer, the field of its held-out fraction, and the metrics
# read as OOD and training-task scores
TASKS = {
    "fuzzy": (hyla.fuzzy_setup, hyla.train_fuzzy_once, "frac_test", "test_r2", "train_r2"),
    "sraven": (hyla.sraven_setup, hyla.train_sraven_once, "holdout", "ood_acc", "id_acc"),
}


def integers(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


def fractions(text: str) -> list[float]:
    return [float(part) for part in text.split(",")]


def arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", choices=TASKS)
    parser.add_argument("profile", choices=PROFILES)
    parser.add_argument("--steps", type=integers, required=True, help="training lengths, comma-separated")
    parser.add_argument("--seeds", type=integers, default=[0, 1, 2])
    parser.add_argument("--kinds", type=lambda text: text.split(","), default=["hyla", "softmax", "linear"], help="the first is judged against the others")
    parser.add_argument("--batch", type=int, help="batch size (default: the profile's)")
    parser.add_argument("--lr", type=float, help="peak learning rate (default: the profile's)")
    parser.add_argument("--held-out", type=fractions, help="fractions of the combinations held out, comma-separated (default: the profile's base run's)")
    parser.add_argument("--jobs", type=int, help="runs trained at a time (default: one per core)")
    args = parser.parse_args(argv)
    if unknown := set(args.kinds) - set(KINDS):
        parser.error(f"unknown kinds {sorted(unknown)}; choose from {list(KINDS)}")
    if len(args.kinds) < 2:
        parser.error("--kinds needs two kinds or more: the first is judged against the others")
    return args


def probe_runs(args: argparse.Namespace) -> list[tuple[object, int]]:
    """``(run description, seed)`` for every held-out fraction × length × kind × seed asked for."""
    setup, _, field = TASKS[args.task][:3]
    changes = {name: value for name, value in (("batch_size", args.batch), ("lr", args.lr)) if value is not None}
    held_out = [{field: frac} for frac in args.held_out] if args.held_out else [{}]
    return [(setup(args.profile, kind=kind, steps=steps, **changes, **frac), seed) for frac in held_out for steps in args.steps for kind in args.kinds for seed in args.seeds]


def judge_against(first: str, others: list[str], values: dict[str, list[float]], claim: str) -> None:
    """Print ``first`` against each of ``others`` on per-seed ``values``: ``claim`` names the test."""
    for other in others:
        verdict = greater(values[first], values[other])
        print(f"  {first} {claim} {other}: {verdict.verdict} ({verdict.noise})")


def main(argv=None) -> None:
    args = arguments(argv)
    _, train, field, ood, seen = TASKS[args.task]
    runs = probe_runs(args)
    jobs = [partial(train, s, args.profile, seed) for s, seed in runs]
    parallel.prefetch(jobs, args.jobs)  # side by side; cached runs load below
    scores = {}
    for (s, seed), job in zip(runs, jobs):
        metrics = job()[1]
        scores[s.kind, s.steps, getattr(s, field), seed] = metrics[ood]
        print(json.dumps({"task": args.task, "kind": s.kind, "seed": seed, "steps": s.steps, "batch_size": s.batch_size, "lr": s.lr,
                          "held_out": getattr(s, field), "examples": s.steps * s.batch_size, "ood": metrics[ood], "train": metrics[seen]}), flush=True)
    first, others, seeds = args.kinds[0], args.kinds[1:], args.seeds
    held_out = sorted({frac for _, _, frac, _ in scores})
    short, long = min(args.steps), max(args.steps)
    for frac in held_out:
        label = f"{frac:g} held out, " if len(held_out) > 1 else ""
        for steps in args.steps:
            per_seed = {kind: [scores[kind, steps, frac, seed] for seed in seeds] for kind in args.kinds}
            print(f"{label}{steps} steps: " + ", ".join(f"{kind} {Estimate.of(values)}" for kind, values in per_seed.items()))
            judge_against(first, others, per_seed, ">")
        if len(args.steps) > 1:  # converged? each kind's score at the longest length against at the shortest
            print(f"{label}{long} steps against {short}:")
            for kind in args.kinds:
                verdict = greater([scores[kind, long, frac, seed] for seed in seeds], [scores[kind, short, frac, seed] for seed in seeds])
                print(f"  {kind} gains: {verdict.verdict} ({verdict.noise})")
    if len(held_out) > 1:  # hyla-2's claim: the first kind's score drops least as more is held out
        low, high = held_out[0], held_out[-1]
        for steps in args.steps:
            drop = {kind: [scores[kind, steps, low, seed] - scores[kind, steps, high, seed] for seed in seeds] for kind in args.kinds}
            print(f"{steps} steps, the drop from {low:g} to {high:g} held out: " + ", ".join(f"{kind} {Estimate.of(values)}" for kind, values in drop.items()))
            judge_against(first, others, {kind: [-d for d in values] for kind, values in drop.items()}, "drops less than")


if __name__ == "__main__":
    main()
