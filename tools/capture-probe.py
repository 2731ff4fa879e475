"""Would a family's training step gain from being replayed as a CUDA graph, or compiled? The rates of
``python -m ponder.bench train`` for the families named and their ``compiled`` variants where the
bench has one (:data:`ponder.bench.train.VARIANTS`), with their step captured too where the bench does
not capture them: one JSON line per row, in the bench's format (``bench-train.json``'s rows), so
``tools/gpu-plan.py``'s rates and rules and this probe's read alike.

    PYTHONPATH=lib python3 tools/capture-probe.py PREFIX[,PREFIX...] [--profile PROFILE]

PREFIX: the start of a family's name (``"ACM phase III"``, ``"A-ViT"``). PROFILE: ``gpu`` on a GPU and
``quick`` otherwise, as the bench. The ACM runs train eagerly: lease 4 (figures/gpu/RUN.md) timed an
ACM phase-III step of the 12-block ViT at 6.0 steps/s alone and 26.4 over 6 processes, its device
busy about 30 ms of the step's 263, so it waits on the host, and a captured step launches once. But 6
processes side by side keep the device busy (26.4 steps/s, where its 31.4 ms a step allow 31.9), so
capturing alone can gain at most 1.2x; compiling fuses the step's thousands of small kernels and
shortens the device's own time (figures/gpu/RUN.md, session 40). A family whose step reads back from
the device cannot be captured: its row says why (``captured_error``). On the CPU only the eager
rates are measured.
"""
import ponder  # noqa: F401  (before torch: pinned numerics)
import argparse
import json
import sys
from contextlib import nullcontext

import torch

from ponder import parallel
from ponder.bench import train as bench


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prefixes", help="starts of the families' names, comma-separated")
    parser.add_argument("--profile", default=None, help="the profile whose sizes the families take (default: the bench's)")
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available()
    profile = args.profile or ("gpu" if cuda else "quick")
    prefixes = tuple(args.prefixes.split(","))
    names = [name for name in bench.families(profile) if bench.base_family(name).startswith(prefixes) and not name.startswith(("bf16 ", "compiled-cublas "))]
    if not names:
        raise SystemExit(f"no family starts with {prefixes}; the families: {sorted(bench.families(profile, variants=False))}")
    rate, processes = bench.matmul_rate(), parallel.worker_count()
    with bench.side_by_side(processes) if processes > 1 else nullcontext() as workers:
        for name in names:
            print(json.dumps({"profile": profile, **bench.family_row(profile, name, rate, cuda, workers, captured=bench.CAPTURED + prefixes)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
