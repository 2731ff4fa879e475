"""The registry of runs: which runs each notebook trains ahead, and what those runs read first.

Each study declares, per notebook, its **jobs** (``studies/<paper>/schedule.py``), declared runs
(:mod:`ponder.runner.specs`, planned from the run cache alone) that cover every run it reads, and its **upstream**,
where its jobs share work, the runs or training streams they read (ACM's base models and phases I-II, the C-PVR
streams, the runs learning rates are chosen on), made first. ``make figures`` trains the jobs of every notebook in
one pool before executing the notebooks (:func:`training`); a notebook calls :func:`prefetch` and then the same
functions, which find the runs in the cache.

No run imports this module or the schedules, so they are in no run's cache key
(:func:`ponder.runner.runs.code_version`): moving a run from one profile's list to another's, or adding a notebook,
retrains nothing. What a profile trains is read from its sizes (each study's ``sizes``). Under ``torchrun`` every
run trains with DistributedDataParallel::

    torchrun --nproc_per_node=8 -m ponder.repro.registry --profile paper
"""

import argparse
from collections.abc import Callable
from functools import partial

import torch.distributed as dist

from ..checks import check_choice
from ..profiles import PROFILES, check_device
from ..runner import parallel
from ..studies.acm import schedule as acm
from ..studies.hyla import schedule as hyla
from ..studies.hyper_ut import schedule as hyper_ut
from ..studies.survey import schedule as survey

Jobs = dict[str, list[parallel.Job]]  # {notebook: jobs}
Family = tuple[Callable[[str, int], Jobs], Callable[[str, int], Jobs] | None]
# name -> (its notebooks' jobs, what they read first), each study's; ``python -m ponder.repro.registry NAME`` trains one
FAMILIES: dict[str, Family] = {**hyper_ut.FAMILIES, **survey.FAMILIES, **hyla.FAMILIES, **acm.FAMILIES}


def notebook_jobs(profile: str, seed: int = 0) -> Jobs:
    """``{notebook: the jobs that train its runs}`` for every notebook whose runs can be trained ahead."""
    return {notebook: js for jobs, _ in FAMILIES.values() for notebook, js in jobs(profile, seed).items()}


def upstream_jobs(profile: str, seed: int = 0) -> Jobs:
    """``{notebook: the shared runs or streams its jobs read}`` for the notebooks that have them."""
    return {nb: js for _, upstream in FAMILIES.values() if upstream for nb, js in upstream(profile, seed).items()}


def prefetch(profile: str, notebook: str, seed: int = 0) -> int:
    """Train a notebook's runs ahead, side by side, one per core (:func:`ponder.runner.parallel.prefetch`):
    what they read first, then each job as soon as that is there. Returns how many were trained."""
    jobs = notebook_jobs(profile, seed)
    todo = jobs[check_choice("notebook", notebook, tuple(jobs))]
    shared = upstream_jobs(profile, seed).get(notebook)
    return parallel.prefetch([], after=[(shared, todo)]) if shared else parallel.prefetch(todo)


def training(profile: str, seed: int = 0, notebooks: list[str] | None = None) -> tuple[list, list, Jobs]:
    """The runs of the named notebooks (default: all that train ahead), for :func:`ponder.runner.parallel.plan`:
    the independent jobs; the groups ``(shared upstream, jobs built on it)``, one per notebook with an
    upstream; and ``{notebook: every job it needs}``. ``make figures`` trains them in one pool over all
    the notebooks (:func:`ponder.repro.notebooks.run`)."""
    todo, upstream = notebook_jobs(profile, seed), upstream_jobs(profile, seed)
    names = [n for n in (notebooks or todo) if n in todo]
    groups = [(upstream[n], todo[n]) for n in names if n in upstream]
    independent = [job for n in names if n not in upstream for job in todo[n]]
    needed = {n: todo[n] + upstream.get(n, []) for n in names}
    return independent, groups, needed


def train_all(profile: str, seed: int = 0, names: list[str] | None = None) -> None:
    """Train the runs of the named families (default: every one of :data:`FAMILIES`): each notebook's
    jobs side by side (:func:`prefetch`), then each loaded, or trained if a worker left it."""
    names = names or list(FAMILIES)
    for name in names:
        check_choice("experiment", name, tuple(FAMILIES))
    for name in names:
        print(f"[{profile}] training {name}", flush=True)
        jobs, _ = FAMILIES[name]
        parallel.train_notebooks(jobs(profile, seed), partial(prefetch, profile, seed=seed))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m ponder.repro.registry",
        description="Train every run of the named experiments (default: all) without plotting.",
    )
    parser.add_argument("names", nargs="*", help=f"experiments to train, of {', '.join(FAMILIES)} (default: all)")
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


if __name__ == "__main__":
    main()
