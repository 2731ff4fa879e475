"""hut-8: ViT vs U-ViT+ACT vs HyperU-ViT on scikit-learn's digits (stand-in for ImageNet-1k).

The three models share the ViT's patch embedding (``ponder.models.vit``) and differ in their
depth loop, exactly as on C-PVR (``ponder.studies.hyper_ut.cpvr``):

* **ViT**: ``T`` different blocks (kind ``transformer``), and a ViT of ``matched_depth`` blocks, about as many
  layers as HyperU-ViT uses on average: the claim "matches ViT with fewer layers" means something only if a
  ViT that deep does not match it as well;
* **U-ViT+ACT**: one shared block with ACT, at most ``T`` steps (kind ``ut_act``);
* **HyperU-ViT**: Hyper-UT, the block's weights generated per image and step from the routed pool, ACT (``hyper_act``).

Reported per seed: top-1 on the fixed test split (``test_copies`` renderings of each test digit),
average layers used ``N``, and the layer savings ``1 - N / T`` (the abstract claims Hyper-UT
matches ViT on ImageNet with >70 % savings); and, per test image, the layers it used
(:func:`layers_per_image`: does halting adapt to the image?).
"""

from dataclasses import asdict

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from ...checks import check_int
from ...models.kinds import ACT_KINDS, build, parameter_count
from ...models.vit import ViT
from ...profiles import by_profile, run_sizes
from ...runner.specs import Recipe, Spec
from ...runner.training import TrainConfig, default_device
from ...tasks import images
from .sizes.vision import SIZES, VARIANTS

KINDS = ("transformer", "ut_act", "hyper_act")
LABELS = {"transformer": "ViT", "ut_act": "U-ViT+ACT", "hyper_act": "HyperU-ViT"}


def models(profile: str) -> dict[str, tuple[str, int | None]]:
    """hut-8's models by label: ``(kind, depth)``, the depth ``None`` for the profile's ``T`` (the ViT's blocks,
    the ACT models' most steps), else the shallow ViT's ``matched_depth``. The ViT and HyperU-ViT everywhere; the
    shallow ViT and U-ViT+ACT where the profile trains the variants
    (:data:`~ponder.studies.hyper_ut.sizes.vision.VARIANTS`)."""
    matched = by_profile(SIZES, profile)["matched_depth"]
    every = {
        LABELS["transformer"]: ("transformer", None),
        f"{matched}-block ViT": ("transformer", matched),
        LABELS["ut_act"]: ("ut_act", None),
        LABELS["hyper_act"]: ("hyper_act", None),
    }
    compared = (LABELS["transformer"], LABELS["hyper_act"])
    return {label: m for label, m in every.items() if by_profile(VARIANTS, profile) or label in compared}


EVAL_BATCH = 1024


class PatchEmbedding(nn.Module):
    """The ViT's patches + class token + positions (``ViT.embed``) without its blocks:
    ``[B, 1, H, W] -> [B, 1+P, D]``."""

    def __init__(self, image: int, patch: int, dim: int):
        super().__init__()
        vit = ViT(image=image, patch=patch, channels=1, dim=dim, depth=1, heads=1)
        self.patch_embed, self.cls, self.positions = vit.patch_embed, vit.cls, vit.positions

    forward = ViT.embed


def scene(profile: str) -> images.Scene:
    """The scene the profile's digits are drawn in (its row's ``scene``: a name of :data:`images.SCENES`
    or an :class:`images.Scene`); the runs' config holds its knobs."""
    return images.scene_of(by_profile(SIZES, profile)["scene"])


def vision_run(kind: str, profile: str, seed: int, depth: int | None = None) -> Spec:
    """One digits model, of ``depth`` blocks or steps instead of the profile's ``T`` where given, declared
    (:mod:`ponder.runner.specs`; its training: :func:`vision_recipe`).

    The ACT kinds hold their halting unit for the model's ``act_hold`` of training, as on C-PVR
    (``hyper_ut.cpvr_spec``): without it, U-ViT+ACT at the gpu size halted every image after one layer
    within 50 steps on the CPU, its loss still at chance, and at the gpu size on an H200 it ended
    at one layer.
    The step is not captured as a CUDA graph: captured, ACT runs all ``T`` = 12 steps masked, and on
    the H200 that ran 39 steps/s summed over 6 processes against 367 eagerly (figures/gpu/RUN.md)."""
    sizes = by_profile(SIZES, profile)
    m = sizes["model"]
    if depth is not None:
        check_int("depth", depth, minimum=1)
    hold = {"hold": "depth.halting", "hold_for": m["act_hold"]} if kind in ACT_KINDS else {}
    cfg = TrainConfig(steps=sizes["steps"], batch_size=sizes["batch_size"], lr=sizes["lr"], seed=seed, **hold)
    config = {"kind": kind, "sizes": {**run_sizes(sizes), "scene": asdict(scene(profile))}, "train": cfg.as_dict()}
    config |= {} if depth is None else {"depth": depth}
    return Spec(f"hut/vision/{kind}", config, profile, (__name__,), vision_recipe, "hyper_ut_vision.train_vision")


def vision_recipe(config: dict) -> Recipe:
    """How a digits run of ``config`` (:func:`vision_run`) trains: ``CE + tau * mean(N + R)`` on fresh renderings
    each step; evaluated on the test split (:func:`test_outputs`): ``top1``, ``layers`` and ``params``."""
    sizes, cfg = config["sizes"], TrainConfig(**config["train"])
    m = sizes["model"] | ({"steps": config["depth"]} if "depth" in config else {})
    geometry = dict(size=sizes["size"], canvas=sizes["canvas"], scene=images.Scene(**sizes["scene"]))

    def make():
        embedding = PatchEmbedding(sizes["canvas"], sizes["patch"], m["dim"])
        return build(config["kind"], 0, m, embedding=embedding, classes=images.CLASSES)

    def batches(step):
        return images.sample(cfg.batch_size, seed=cfg.seed * 1_000_003 + step, **geometry)

    def loss(model, batch):
        x, y = batch
        out = model(x)
        return F.cross_entropy(out.logits, y) + m["tau"] * out.ponder.mean()

    def evaluate(model):
        correct, layers = test_outputs(model, sizes)
        return {
            "top1": correct.sum().item() / len(correct),
            "layers": layers.sum().item() / len(layers),
            "params": parameter_count(model),
        }

    return Recipe(make, loss, batches, cfg, evaluate)


def train_vision(kind: str, profile: str, seed: int, depth: int | None = None):
    """Train (or load) one digits model (:func:`vision_run`); ``(model, metrics)`` with ``top1``, ``layers`` and
    ``params``."""
    return vision_run(kind, profile, seed, depth)()


@torch.no_grad()
def test_outputs(model: nn.Module, sizes: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """``[n]`` bool, each test image classified right, and ``[n]`` the layers it used (ACT's ``N``; all of
    them for the ViT), over the ``test_copies`` renderings of every held-out digit, at a run's ``sizes`` (its
    config's)."""
    model.eval()
    x, y = images.images(
        "test",
        copies=sizes["test_copies"],
        size=sizes["size"],
        canvas=sizes["canvas"],
        scene=images.Scene(**sizes["scene"]),
    )
    correct, layers = [], []
    for start in range(0, len(x), EVAL_BATCH):
        out = model(x[start : start + EVAL_BATCH].to(default_device()))
        correct.append(out.logits.argmax(-1).cpu() == y[start : start + EVAL_BATCH])
        layers.append(out.steps.cpu())
    return torch.cat(correct), torch.cat(layers)


def layers_per_image(profile: str, seed: int = 0) -> pd.DataFrame:
    """hut-8's per-image halting: one row per model of :func:`models` and test image of run ``seed``: the layers
    it used and whether it was classified right."""
    parts = []
    for label, (kind, depth) in models(profile).items():
        run = vision_run(kind, profile, seed, depth)
        correct, layers = test_outputs(run()[0], run.config["sizes"])
        parts.append(pd.DataFrame({"model": label, "layers": layers.numpy(), "correct": correct.numpy()}))
    return pd.concat(parts, ignore_index=True)


def comparison(profile: str, seed: int = 0) -> pd.DataFrame:
    """One row per model of :func:`models` and seed (``seed`` plus the profile's ``seeds``): top-1, average layers,
    layer savings vs the profile's ``T`` layers, parameters."""
    sizes = by_profile(SIZES, profile)
    most = sizes["model"]["steps"]
    rows = []
    for label, (kind, depth) in models(profile).items():
        for offset in sizes["seeds"]:
            metrics = vision_run(kind, profile, seed + offset, depth).metrics()
            rows.append(
                {
                    "model": label,
                    "seed": seed + offset,
                    "top-1": metrics["top1"],
                    "average layers": metrics["layers"],
                    "layer savings": 1 - metrics["layers"] / most,
                    "parameters": metrics["params"],
                }
            )
    return pd.DataFrame(rows)
