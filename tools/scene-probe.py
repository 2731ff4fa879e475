"""How hard ACM's image stand-in is for a profile's base ViT, and for harder scenes.

    PYTHONPATH=lib python tools/scene-probe.py PROFILE [SCENE ...] [--seed S] [--jobs J]

SCENE: a name of ``ponder.tasks.images.SCENES`` (``textured``, the default, ``plain``), or changes
to the knobs of the profile's own scene (``acm.scene(profile)``: ``jitter``, ``texture``,
``noise``), as ``noise=0.15`` or ``jitter=0.5,texture=0.6``. For each scene, in a process of its
own, the profile's base ViT (``acm.base_model``) and ZTW's exits on it (``acm.early_exits``) train
on that scene and are evaluated on its test set. Prints one JSON line per scene: the base's test
accuracy and MMACs per image, and the exits' best accuracy at a quarter and at half of the base's
MMACs or less (``null``: no exit that cheap; the first of 4 blocks costs more than a quarter, with
the embedding and its head).

Why (figures/gpu/RUN.md, lease 3): at ``gpu`` the 12-block ViT reaches 0.986 on the textured
digits and its exits reach that accuracy at a fifth of its depth, so acm-3 cannot separate ACM
from the baselines. A stand-in fit for that model leaves room between the base and its exits at a
quarter of the compute. The base model's config holds its scene's knobs, so the runs go to the
profile's run cache like any other: the probe's runs of the scene a profile adopts are that
profile's own base model and exits, trained already.
"""
import argparse
import dataclasses
import json
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor

import ponder  # noqa: F401  (pins the numerics before torch)
from ponder.experiments import acm
from ponder.profiles import by_profile
from ponder.tasks import images

KNOBS = tuple(field.name for field in dataclasses.fields(images.Scene))  # jitter, texture, noise


def parse_scene(profile: str, text: str) -> images.Scene:
    """A name of ``images.SCENES`` -> that scene; ``"noise=0.15,texture=0.6"`` -> the profile's scene with those knobs."""
    if text in images.SCENES:
        return images.SCENES[text]
    changes = {}
    for part in text.split(","):
        knob, _, value = part.partition("=")
        if knob not in KNOBS or not value:
            raise ValueError(f"a scene is KNOB=VALUE[,KNOB=VALUE...] with KNOB one of {KNOBS}, or one of {tuple(images.SCENES)}; got {text!r}")
        changes[knob] = float(value)
    return dataclasses.replace(acm.scene(profile), **changes)


def probe(profile: str, text: str, seed: int) -> dict:
    """Train and evaluate the base ViT and its exits on the scene ``text`` (in this process: it changes the profile's row)."""
    scene = parse_scene(profile, text)
    acm.SIZES[profile] = dict(by_profile(acm.SIZES, profile), scene=scene)
    _, base = acm.base_model(profile, seed)
    _, exits = acm.early_exits(profile, seed)
    best = lambda share: max((p["accuracy"] for p in exits["curve"] if p["macs"] <= share * base["macs"]), default=None)  # noqa: E731
    return {"profile": profile, "scene": text, "knobs": dataclasses.asdict(scene), "seed": seed, "base_accuracy": base["accuracy"],
            "base_mmacs": base["macs"] / 1e6, "exits_best_at_quarter_macs": best(1 / 4), "exits_best_at_half_macs": best(1 / 2)}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile")
    parser.add_argument("scenes", nargs="*", default=["textured"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    for text in args.scenes:
        parse_scene(args.profile, text)  # refuse a bad one before anything trains
    # a fresh process per scene: the scene is set in the process's copy of the profile's row
    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn"), max_tasks_per_child=1) as pool:
        for line in pool.map(probe, [args.profile] * len(args.scenes), args.scenes, [args.seed] * len(args.scenes)):
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
