"""What each notebook trains, one module per experiment; ``python -m ponder.experiments --profile paper``
trains every run without plotting.

Every module of :data:`MODULES` has the same protocol:

* ``jobs(profile, seed)``: ``{notebook: [jobs]}``, the runs each of its notebooks trains ahead
  (:mod:`ponder.parallel`; a notebook's other runs train in its own cells);
* ``upstream(profile, seed)``, where its runs read shared work: ``{notebook: [jobs]}``, the runs
  (ACM's base models and phases I-II) or training streams (C-PVR) those jobs read, made first;
The jobs cover every run a notebook needs: :func:`train_all` trains them (``make results``), and
the notebooks call :func:`prefetch` and then the same functions, so they find the runs in the
cache. Under ``torchrun`` every run trains with DistributedDataParallel::

    torchrun --nproc_per_node=8 -m ponder.experiments --profile paper
"""

import argparse
import importlib
from functools import partial
from types import ModuleType

import torch.distributed as dist

from .. import parallel
from ..checks import check_choice
from ..profiles import PROFILES, check_device

MODULES = ("hyper_ut", "hyper_ut_scratchpad", "hyper_ut_vision", "survey", "survey_parity", "hyla", "acm")


def experiment(name: str) -> ModuleType:
    """The experiment module ``name`` of :data:`MODULES`, imported when first asked for."""
    return importlib.import_module(f"{__name__}.{check_choice('experiment', name, MODULES)}")


def _by_notebook(part: str, profile: str, seed: int) -> dict[str, list]:
    found = {}
    for name in MODULES:
        by_notebook = getattr(experiment(name), part, None)
        found |= by_notebook(profile, seed) if by_notebook else {}
    return found


def notebook_jobs(profile: str, seed: int = 0) -> dict[str, list]:
    """``{notebook: the jobs that train its runs}`` for every notebook whose runs can be trained ahead."""
    return _by_notebook("jobs", profile, seed)


def upstream_jobs(profile: str, seed: int = 0) -> dict[str, list]:
    """``{notebook: the shared runs or streams its jobs read}`` for the notebooks that have them."""
    return _by_notebook("upstream", profile, seed)


def prefetch(profile: str, notebook: str, seed: int = 0) -> int:
    """Train a notebook's runs ahead, side by side, one per core (:func:`ponder.parallel.prefetch`):
    what they read first, then each job as soon as that is there. Returns how many were trained."""
    jobs = notebook_jobs(profile, seed)
    todo = jobs[check_choice("notebook", notebook, tuple(jobs))]
    shared = upstream_jobs(profile, seed).get(notebook)
    return parallel.prefetch([], after=[(shared, todo)]) if shared else parallel.prefetch(todo)


def training(profile: str, seed: int = 0, notebooks: list[str] | None = None) -> tuple[list, list, dict[str, list]]:
    """The runs of the named notebooks (default: all that train ahead), for :func:`ponder.parallel.plan`:
    the independent jobs; the groups ``(shared upstream, jobs built on it)``, one per notebook with an
    ``upstream``; and ``{notebook: every job it needs}``. ``make figures`` trains them in one pool over
    all the notebooks, which executes each notebook as soon as its runs are there
    (:func:`ponder.notebooks.run`)."""
    todo, upstream = notebook_jobs(profile, seed), upstream_jobs(profile, seed)
    names = [n for n in (notebooks or todo) if n in todo]
    groups = [(upstream[n], todo[n]) for n in names if n in upstream]
    independent = [job for n in names if n not in upstream for job in todo[n]]
    needed = {n: todo[n] + upstream.get(n, []) for n in names}
    return independent, groups, needed


def train_all(profile: str, seed: int = 0, names: list[str] | None = None) -> None:
    """Train the runs of the named experiments (default: every module of :data:`MODULES`): each
    notebook's jobs side by side (:func:`prefetch`), then each loaded, or trained if a worker left it."""
    names = names or list(MODULES)
    for name in names:
        check_choice("experiment", name, MODULES)
    for name in names:
        print(f"[{profile}] training {name}", flush=True)
        parallel.train_notebooks(experiment(name).jobs(profile, seed), partial(prefetch, profile, seed=seed))


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
