"""Wall-clock benchmarks: ``python -m ponder.bench [names]`` (``make bench``).

Each benchmark module registers a ``main()`` in :data:`REGISTRY` that times its cases against a
baseline measured in the same run (these machines are noisy: only ratios are quoted) and writes
``results/bench/<name>.json``.
"""

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

from ..paths import ROOT
from ..runner.runs import write_json

RESULTS = ROOT / "results" / "bench"  # where each benchmark writes <name>.json

# name -> "module:function", imported only when run
REGISTRY: dict[str, str] = {
    "acm": "ponder.bench.acm:main",
    "act": "ponder.bench.act:main",
    "gate": "ponder.bench.gate:main",
    "kernels": "ponder.bench.kernels:main",
    "limit": "ponder.bench.limit:main",
    "numerics": "ponder.bench.numerics:main",
    "seeds": "ponder.bench.seeds:main",
    "streams": "ponder.bench.streams:main",
    "train": "ponder.bench.train:main",
}


def write_result(name: str, result: dict) -> Path:
    """Write ``results/bench/<name>.json`` and print it."""
    path = RESULTS / f"{name}.json"
    write_json(path, result)
    print(json.dumps(result, indent=2, default=float))
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m ponder.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    names = parser.parse_args(argv).names or list(REGISTRY)
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}; choose from {sorted(REGISTRY)}")
    if len(names) == 1:
        module, function = REGISTRY[names[0]].split(":")
        getattr(importlib.import_module(module), function)()
        return
    # each in a process of its own: what one leaves behind must not slow the next. On the H200, in
    # the process that had run `kernels` (the profiler) and `acm` first, `train`'s eager steps ran at
    # half the rate of a fresh process, while its processes side by side, started fresh, did not
    for name in names:
        subprocess.run([sys.executable, "-m", "ponder.bench", name], check=True)
