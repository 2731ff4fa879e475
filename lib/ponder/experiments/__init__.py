"""Train every cached run without plotting: ``python -m ponder.experiments --profile paper``.

Each experiment module registers a ``train_all(profile, seed)`` in :data:`REGISTRY`; the
notebooks call the same functions, so they find the runs in the cache. Under ``torchrun``
every registered run trains with DistributedDataParallel::

    torchrun --nproc_per_node=8 -m ponder.experiments --profile paper
"""
import argparse
import importlib

import torch.distributed as dist

from ..profiles import PROFILES

# name -> "module:function", imported only when run
REGISTRY: dict[str, str] = {"acm": "ponder.experiments.acm:train_all", "survey": "ponder.experiments.survey:train_all", "hyla": "ponder.experiments.hyla:train_all", "hyper_ut": "ponder.experiments.hyper_ut:train_all", "hyper_ut_scratchpad": "ponder.experiments.hyper_ut_scratchpad:train_all", "hyper_ut_vision": "ponder.experiments.hyper_ut_vision:train_all"}


def notebook_jobs(profile: str, seed: int = 0) -> dict[str, list]:
    """``{notebook: the jobs that train its runs}`` for every notebook whose runs can be trained
    ahead (:mod:`ponder.parallel`); the others train in their own cells."""
    from . import acm, hyla, hyper_ut, hyper_ut_scratchpad, hyper_ut_vision, survey, survey_parity

    return {**hyper_ut.jobs(profile, seed), **hyper_ut_scratchpad.jobs(profile, seed), **hyper_ut_vision.jobs(profile, seed), **survey.jobs(profile, seed),
            "survey_parity": survey_parity.jobs(profile, seed), **hyla.jobs(profile, seed), **acm.jobs(profile, seed)}


def pretrain(profile: str, seed: int = 0, notebooks: list[str] | None = None, report=None) -> list[str]:
    """Train the runs of the named notebooks (default: all) before any of them executes, in one pool
    of workers over all of them: one notebook's cells no longer leave a core idle while another
    notebook has runs to train (`make figures`). The runs that jobs share (ACM's base models and
    phases I-II) start first, the ACM runs built on them as soon as they have ended, the other
    notebooks' runs fill the cores meanwhile and after. A job that fails does not stop the others:
    the notebook that needs its run retrains it and reports the error; the failures come back as
    one line each. ``report(done, pending, job, seconds)`` as in :func:`ponder.parallel.prefetch`."""
    from .. import parallel
    from . import acm

    todo, built_on = notebook_jobs(profile, seed), acm.jobs(profile, seed)
    names = [n for n in (notebooks or todo) if n in todo]
    shared = [job for n in names if n in built_on for job in acm.upstream(profile, n, seed)]
    failures = parallel.prefetch([job for n in names if n not in built_on for job in todo[n]], keep_going=True, report=report,
                                 first=shared, then=[job for n in names if n in built_on for job in todo[n]])
    for job in shared:  # without workers (one core) the pool trained nothing: the shared runs here, the rest in the notebooks
        try:
            job()
        except Exception as error:  # noqa: BLE001 -- the notebook that needs it reports it
            failures.append(f"{parallel.describe(job)}: {type(error).__name__}: {error}".splitlines()[0])
    return failures


def train_all(profile: str, seed: int = 0, names: list[str] | None = None) -> None:
    """Train the runs of the named experiments (default: all registered)."""
    names = names or list(REGISTRY)
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown experiment(s) {unknown}; choose from {sorted(REGISTRY)}")
    for name in names:
        module, function = REGISTRY[name].split(":")
        print(f"[{profile}] training {name}", flush=True)
        getattr(importlib.import_module(module), function)(profile, seed)
    if not names:
        print("no experiment trains a model yet")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ponder.experiments", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="experiments to train (default: all)")
    parser.add_argument("--profile", default="quick", choices=PROFILES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    train_all(args.profile, args.seed, args.names)
    if dist.is_initialized():  # under torchrun: leave together, then release the process group
        dist.barrier()
        dist.destroy_process_group()
