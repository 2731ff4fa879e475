"""Train every cached run without plotting: ``python -m ponder.experiments --profile paper``.

Each experiment module registers a ``train_all(profile, seed)`` in :data:`REGISTRY`; the
notebooks call the same functions, so they find the runs in the cache. Under ``torchrun``
every registered run trains with DistributedDataParallel::

    torchrun --nproc_per_node=8 -m ponder.experiments --profile paper
"""

import argparse
import importlib

import torch.distributed as dist

from ..profiles import PROFILES, check_device

# name -> "module:function", imported only when run
REGISTRY: dict[str, str] = {
    "acm": "ponder.experiments.acm:train_all",
    "survey": "ponder.experiments.survey:train_all",
    "hyla": "ponder.experiments.hyla:train_all",
    "hyper_ut": "ponder.experiments.hyper_ut:train_all",
    "hyper_ut_scratchpad": "ponder.experiments.hyper_ut_scratchpad:train_all",
    "hyper_ut_vision": "ponder.experiments.hyper_ut_vision:train_all",
}


def notebook_jobs(profile: str, seed: int = 0) -> dict[str, list]:
    """``{notebook: the jobs that train its runs}`` for every notebook whose runs can be trained
    ahead (:mod:`ponder.parallel`); the others train in their own cells."""
    from . import acm, hyla, hyper_ut, hyper_ut_scratchpad, hyper_ut_vision, survey, survey_parity

    return {
        **hyper_ut.jobs(profile, seed),
        **hyper_ut_scratchpad.jobs(profile, seed),
        **hyper_ut_vision.jobs(profile, seed),
        **survey.jobs(profile, seed),
        "survey_parity": survey_parity.jobs(profile, seed),
        **hyla.jobs(profile, seed),
        **acm.jobs(profile, seed),
    }


def training(profile: str, seed: int = 0, notebooks: list[str] | None = None) -> tuple[list, list, dict[str, list]]:
    """The runs of the named notebooks (default: all that train ahead), for :func:`ponder.parallel.plan`:
    the independent jobs; the groups ``(shared upstream, jobs built on it)``, one per ACM notebook
    (its base models and phases I-II, then its runs) and per C-PVR notebook (the training streams
    its runs read, then its runs); and ``{notebook: every job it needs}``. ``make figures`` trains
    them in one pool over all the notebooks, which executes each notebook as soon as its runs are
    there (:func:`ponder.notebooks.run`)."""
    from . import acm, hyper_ut, survey

    todo = notebook_jobs(profile, seed)
    upstream = {
        **{n: acm.upstream(profile, n, seed) for n in acm.jobs(profile, seed)},
        **hyper_ut.upstream(profile, seed),
        **survey.upstream(profile, seed),
    }
    names = [n for n in (notebooks or todo) if n in todo]
    groups = [(upstream[n], todo[n]) for n in names if n in upstream]
    independent = [job for n in names if n not in upstream for job in todo[n]]
    needed = {n: todo[n] + upstream.get(n, []) for n in names}
    return independent, groups, needed


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
    parser = argparse.ArgumentParser(
        prog="python -m ponder.experiments", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help="experiments to train (default: all)")
    parser.add_argument("--profile", default="quick", choices=PROFILES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        check_device(args.profile)
    except ValueError as error:  # a GPU profile without a GPU
        parser.error(str(error))
    train_all(args.profile, args.seed, args.names)
    if dist.is_initialized():  # under torchrun: leave together, then release the process group
        dist.barrier()
        dist.destroy_process_group()
