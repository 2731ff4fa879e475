"""How hard ACM's image stand-in is for a profile's base ViT, and for harder scenes.

    PYTHONPATH=lib python tools/scene-probe.py PROFILE [SCENE ...] [--seed S] [--jobs J] [--out DIR]

SCENE: changes to the textured scene's knobs (``ponder.tasks.images.SCENES["textured"]``:
``jitter``, ``texture``, ``noise``), as ``noise=0.15`` or ``jitter=0.5,texture=0.6``; ``textured``
(the default) is the scene as it is. For each scene, in a process of its own, the profile's base
ViT (``acm.base_model``) and ZTW's exits on it (``acm.early_exits``) train on that scene and are
evaluated on its test set. Prints one JSON line per scene: the base's test accuracy and MMACs per
image, and the exits' best accuracy at a quarter and at half of the base's MMACs or less (``null``:
no exit that cheap; the first of 4 blocks costs more than a quarter, with the embedding and its head).

Why (figures/gpu/RUN.md, lease 3): at ``gpu`` the 12-block ViT reaches 0.986 on the textured
digits and its exits reach that accuracy at a fifth of its depth, so acm-3 cannot separate ACM
from the baselines. A stand-in fit for that model leaves room between the base and its exits at a
quarter of the compute. The runs go to ``DIR/<profile>/<scene>/`` (default ``results/scene-probe``),
never into the run cache: a scene's knobs are not in a run's key.
"""
import argparse
import json
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import ponder  # noqa: F401  (pins the numerics before torch)
from ponder.experiments import acm
from ponder.paths import ROOT
from ponder.tasks import images

KNOBS = tuple(images.SCENES[acm.SCENE])  # jitter, texture, noise


def parse_scene(text: str) -> dict[str, float]:
    """``"noise=0.15,texture=0.6"`` -> ``{"noise": 0.15, "texture": 0.6}``; ``"textured"`` -> ``{}``."""
    if text == "textured":
        return {}
    changes = {}
    for part in text.split(","):
        knob, _, value = part.partition("=")
        if knob not in KNOBS or not value:
            raise ValueError(f"a scene is KNOB=VALUE[,KNOB=VALUE...] with KNOB one of {KNOBS}, or 'textured'; got {text!r}")
        changes[knob] = float(value)
    return changes


def probe(profile: str, scene: str, seed: int, out: Path) -> dict:
    """Train and evaluate the base ViT and its exits on ``scene`` (in this process: it changes the scene)."""
    os.environ["PONDER_RESULTS"] = str(out / profile / scene)  # read by the run cache when it is used
    images.SCENES[acm.SCENE] = dict(images.SCENES[acm.SCENE], **parse_scene(scene))
    _, base = acm.base_model(profile, seed)
    _, exits = acm.early_exits(profile, seed)
    best = lambda share: max((p["accuracy"] for p in exits["curve"] if p["macs"] <= share * base["macs"]), default=None)  # noqa: E731
    return {"profile": profile, "scene": scene, "knobs": images.SCENES[acm.SCENE], "seed": seed, "base_accuracy": base["accuracy"],
            "base_mmacs": base["macs"] / 1e6, "exits_best_at_quarter_macs": best(1 / 4), "exits_best_at_half_macs": best(1 / 2)}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile")
    parser.add_argument("scenes", nargs="*", default=["textured"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "scene-probe")
    args = parser.parse_args(argv)
    for scene in args.scenes:
        parse_scene(scene)  # refuse a bad one before anything trains
    # a fresh process per scene: the scene is changed in the process, and its test set cached there
    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn"), max_tasks_per_child=1) as pool:
        for line in pool.map(probe, [args.profile] * len(args.scenes), args.scenes, [args.seed] * len(args.scenes), [args.out] * len(args.scenes)):
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
