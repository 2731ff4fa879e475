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
