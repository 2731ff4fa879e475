"""The command line ``python -m ponder.repro ACTION`` behind the Makefile's notebook targets (``make figures``,
``make test``, ``make refresh``, ``make verify``).

* ``run``     — execute every notebook (or the named ones) with ``profile``/``seed`` injected and
  ``interactive=False`` (:mod:`ponder.repro.execution`); executed copies go to ``build/<profile>/``,
  never over the sources; then gather the claims ledger (:func:`ponder.repro.notebooks.run`).
* ``plan``    — what ``run`` would train and how long it should take here, from the specs and the run cache
  alone (:func:`ponder.repro.notebooks.plan`); ``--record`` keeps the estimate in ``figures/TIMES.json``.
* ``prepare`` — inject the parameters without executing (what ``make test`` hands to nbval:
  :func:`ponder.repro.execution.prepare`).
* ``refresh`` — after a change (``make refresh``): store the smoke profile's checked outputs in the
  notebooks and print their diff (:func:`ponder.repro.regression.refresh`).
* ``verify``  — after ``make figures`` (``make verify``): per target, are the figures and ledger
  rows made here identical to the committed ones (:mod:`ponder.repro.verify`)? Given notebooks, just their targets.
"""

import argparse
from pathlib import Path

from ..paths import ROOT, figures_dir
from ..profiles import PROFILES, check_device
from . import execution, measured, notebooks, readme, regression
from .verify import verify


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m ponder.repro", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("action", choices=["run", "plan", "prepare", "refresh", "verify"])
    parser.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    parser.add_argument("--profile", default="quick", choices=PROFILES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help=(
            "runs trained and notebooks executed at a time (run; default one per core; "
            "the timing notebooks always alone)"
        ),
    )
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "nbval", help="folder for prepare")
    parser.add_argument("--ref", default="HEAD", help="the commit verify compares with")
    parser.add_argument("--record", action="store_true", help="plan: keep the estimate as estimate-PROFILE")
    args = parser.parse_args(argv)
    try:
        execution.find(args.names)
        if args.action == "run":
            check_device(args.profile)
    except ValueError as error:  # a misspelt name, a GPU profile without a GPU: say so, as for any bad argument
        parser.error(str(error))
    if args.action == "run":
        notebooks.run(args.profile, args.seed, args.names, args.jobs)
    elif args.action == "plan":
        estimate = notebooks.plan(args.profile, args.seed, args.names, args.jobs)
        if args.record and estimate is not None and not args.names:
            print(f"recorded: {measured.write(ROOT / 'figures', f'estimate-{args.profile}', estimate)}")
    elif args.action == "refresh":
        regression.refresh(args.names, args.seed)
    elif args.action == "verify":
        only = readme.targets_of(args.names) if args.names else None
        raise SystemExit(1 if verify(ROOT, str(figures_dir(args.profile).relative_to(ROOT)), args.ref, only) else 0)
    else:
        execution.prepare(args.profile, args.out, args.seed, args.names)
