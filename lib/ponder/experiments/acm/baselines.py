"""The baselines of acm-3/acm-4, each from the same base model with the ACM's total training steps:
MoEfication, A-ViT-style token halting, ZTW-style early exits and the base model itself fine-tuned densely.
"""

import copy
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ... import parallel
from ...models import flops
from ...models import moe as moe_lib
from ...models.avit import AViT, halting_loss
from ...models.ztw import ZTWViT, exit_at, exit_loss
from ...runs import Run
from ...training import TrainConfig
from .phases import PREFIX, accuracy, base_model, base_spec, batches, evaluate, learning_rate, sizes, with_validation

MOE_TOP_K_FRACTIONS = (1 / 8, 1 / 4, 3 / 8, 1 / 2, 3 / 4, 1)  # of the experts (official: 2..128 of 128)


def avit_depths(profile: str) -> tuple[float, ...]:
    """The A-ViT target depths for the profile's ViT: its ``avit_targets`` of the official {4, 6, 8, 10}
    of 12 blocks, scaled to its depth (4/3, 2, 8/3, 10/3 of 4 blocks at cpu)."""
    s = sizes(profile)
    return tuple(s["depth"] * t / 12 for t in s["avit_targets"])


def experts(profile: str) -> int:
    """MoEfication's experts per MLP: its hidden width (4 × dim) in experts of ``expert_units`` units."""
    s = sizes(profile)
    return 4 * s["dim"] // s["expert_units"]


def moe_top_k(profile: str) -> tuple[int, ...]:
    """The top-k values evaluated: :data:`MOE_TOP_K_FRACTIONS` of :func:`experts` (1, 2, 3, 4, 6, 8 of 8 at quick)."""
    count = experts(profile)
    return tuple(sorted({max(1, round(f * count)) for f in MOE_TOP_K_FRACTIONS}))


EXIT_THRESHOLDS = tuple(round(0.3 + 0.7 * i / 40, 4) for i in range(41))


def avit_loss(model: nn.Module, batch: tuple, target_depth: float) -> torch.Tensor:
    """A-ViT's loss on a training batch ``(images, labels)`` (:func:`~ponder.models.avit.halting_loss`)."""
    return halting_loss(model, batch[0], batch[1], target_depth)


def _acm_steps(s: dict) -> int:
    return s["distill_steps"] + s["gate_steps"] + s["finetune_steps"]


def curve_accuracy(metrics: dict) -> float:
    """A curve method's validation score: its mean accuracy over the curve's points (each top-k or threshold)."""
    return float(np.mean([point["accuracy"] for point in metrics["curve"]]))


def dense(profile: str, seed: int = 0, task: str = "digits", lr: float | None = None) -> tuple[nn.Module, dict]:
    """The base model fine-tuned as it is, every weight, for the ACM's total steps at phase III's weight decay:
    what the extra training alone gives. A method that fine-tunes the base model beats the base model by that
    much without adapting any compute; beside this point its gain is its own. ``lr``: as
    :func:`~.phases.learning_rate`."""
    s = sizes(profile, task)
    base, _ = base_model(profile, seed, task)
    lr = learning_rate("dense, fine-tuned", profile, task, lr)
    cfg = TrainConfig(steps=_acm_steps(s), batch_size=s["batch"], lr=lr, weight_decay=0.05, seed=seed)
    run = Run(
        f"{PREFIX[task]}/dense",
        {"base": base_spec(profile, seed, task)[0].key, "train": cfg.as_dict(), "eval_images": s["eval_images"]},
        profile,
        code=__name__,
    )
    return parallel.train_one_thread(
        run,
        lambda: copy.deepcopy(base),
        lambda m, b: F.cross_entropy(m(b[0]), b[1]),
        batches(profile, cfg.batch_size, seed, task),
        cfg,
        evaluate=with_validation(evaluate, accuracy, profile, task),
    )


def moefied(profile: str, seed: int = 0, task: str = "digits", lr: float | None = None) -> tuple[nn.Module, dict]:
    """MoEfication: ReLU-fication fine-tuning (phase-III steps, at ``lr`` as :func:`~.phases.learning_rate`), expert
    split, routers (phases I+II steps).

    Metrics hold ``curve``: accuracy and MACs for each top-k of :func:`moe_top_k`.
    """
    s = sizes(profile, task)
    base, _ = base_model(profile, seed, task)
    lr = learning_rate("MoEfication", profile, task, lr)
    cfg = TrainConfig(steps=s["finetune_steps"], batch_size=s["batch"], lr=lr, weight_decay=0.05, seed=seed)
    count = experts(profile)
    base_key = base_spec(profile, seed, task)[0].key
    run = Run(
        f"{PREFIX[task]}/moe-relu", {"base": base_key, "experts": count, "train": cfg.as_dict()}, profile, code=__name__
    )
    relu_key = run.key
    relu, _ = parallel.train_one_thread(
        run,
        lambda: moe_lib.moefy(copy.deepcopy(base), count),
        lambda m, b: F.cross_entropy(m(b[0]), b[1]),
        batches(profile, cfg.batch_size, seed, task),
        cfg,
    )

    def make():
        model = copy.deepcopy(relu)
        for layer in moe_lib.moe_layers(model):
            moe_lib.split_experts(layer, seed)
        for name, p in model.named_parameters():
            p.requires_grad = ".router." in name
        return model

    cfg = TrainConfig(
        steps=s["distill_steps"] + s["gate_steps"], batch_size=s["batch"], lr=1e-3, weight_decay=0.0, seed=seed
    )
    run = Run(
        f"{PREFIX[task]}/moe-router",
        {"relu": relu_key, "train": cfg.as_dict(), "eval_images": s["eval_images"]},
        profile,
        code=__name__,
    )
    return parallel.train_one_thread(
        run,
        make,
        lambda m, b: moe_lib.router_loss(m, _mlp_inputs(m, b[0])),
        batches(profile, cfg.batch_size, seed, task),
        cfg,
        evaluate=with_validation(
            lambda m, x, y: {"curve": moe_curve(m, x, y, moe_top_k(profile))}, curve_accuracy, profile, task
        ),
    )


def _mlp_inputs(model: nn.Module, x: torch.Tensor) -> dict:
    """``{MoE layer: its input}`` of a forward of ``model`` (no gradient)."""
    found, hooks = {}, []
    for layer in moe_lib.moe_layers(model):
        hooks.append(layer.register_forward_pre_hook(lambda m, args: found.__setitem__(m, args[0])))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
    return found


def moe_curve(model: nn.Module, x: torch.Tensor, y: torch.Tensor, top_k: tuple[int, ...]) -> list[dict]:
    """Accuracy and MACs of ``model`` with each top-``k`` experts."""
    curve = []
    for k in top_k:
        moe_lib.set_top_k(model, k)
        curve.append({"k": k, **evaluate(model, x, y)})
    moe_lib.set_top_k(model, None)
    return curve


def halting(profile: str, target_depth: float, seed: int = 0, lr: float | None = None) -> tuple[nn.Module, dict]:
    """A-ViT-style token halting fine-tuned from the base model towards ``target_depth`` blocks (at ``lr`` as
    :func:`~.phases.learning_rate`)."""
    s = sizes(profile)
    base, _ = base_model(profile, seed)
    lr = learning_rate("A-ViT", profile, "digits", lr)
    cfg = TrainConfig(steps=_acm_steps(s), batch_size=s["batch"], lr=lr, weight_decay=0.0, grad_clip=1.5, seed=seed)
    run = Run(
        "acm/avit",
        {
            "base": base_spec(profile, seed)[0].key,
            "target_depth": target_depth,
            "train": cfg.as_dict(),
            "eval_images": s["eval_images"],
        },
        profile,
        code=__name__,
    )
    return parallel.train_one_thread(
        run,
        lambda: AViT(copy.deepcopy(base)),
        partial(avit_loss, target_depth=target_depth),
        batches(profile, cfg.batch_size, seed),
        cfg,
        evaluate=with_validation(
            lambda m, x, y: evaluate(m, x, y, macs=lambda mm, n: flops.halting_vit(mm)), accuracy, profile, "digits"
        ),
    )


def early_exits(profile: str, seed: int = 0, lr: float | None = None) -> tuple[nn.Module, dict]:
    """ZTW-style cascaded exit heads on the frozen base model (at ``lr`` as :func:`~.phases.learning_rate`); metrics
    hold the threshold ``curve``."""
    s = sizes(profile)
    base, _ = base_model(profile, seed)
    lr = learning_rate("ZTW", profile, "digits", lr)
    cfg = TrainConfig(steps=_acm_steps(s), batch_size=s["batch"], lr=lr, weight_decay=0.0, seed=seed)
    run = Run(
        "acm/ztw",
        {"base": base_spec(profile, seed)[0].key, "train": cfg.as_dict(), "eval_images": s["eval_images"]},
        profile,
        code=__name__,
    )

    def make():
        model = ZTWViT(copy.deepcopy(base))
        model.vit.requires_grad_(False)
        return model

    return parallel.train_one_thread(
        run,
        make,
        lambda m, b: exit_loss(m, b[0], b[1]),
        batches(profile, cfg.batch_size, seed),
        cfg,
        evaluate=with_validation(lambda m, x, y: {"curve": exit_curve(m, x, y)}, curve_accuracy, profile, "digits"),
    )


@torch.no_grad()
def exit_curve(model: ZTWViT, x: torch.Tensor, y: torch.Tensor) -> list[dict]:
    model.eval()
    logits = model(x.to(next(model.parameters()).device)).cpu()
    curve = []
    for threshold in EXIT_THRESHOLDS:
        exits = exit_at(logits, threshold)
        predictions = logits[exits, torch.arange(len(x))].argmax(-1)
        curve.append(
            {
                "threshold": threshold,
                "accuracy": (predictions == y).float().mean().item(),
                "macs": flops.early_exit_vit(model, exits).mean().item(),
            }
        )
    return curve
