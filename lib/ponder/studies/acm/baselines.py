"""The baselines of acm-3/acm-4, each from the same base model with the ACM's total training steps:
MoEfication, A-ViT-style token halting, ZTW-style early exits and the base model itself fine-tuned densely.
"""

import copy
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...models import flops
from ...models import moe as moe_lib
from ...models.avit import AViT, halting_loss
from ...models.ztw import ZTWViT, exit_at, exit_loss
from ...runner.specs import Recipe, Spec
from ...runner.training import TrainConfig
from .phases import PREFIX, accuracy, base_run, batches, data, evaluate, sizes, with_validation

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


def dense_spec(profile: str, seed: int, task: str, lr: float) -> Spec:
    """:func:`dense`'s run at ``lr``, declared."""
    s, base = sizes(profile, task), base_run(profile, seed, task)
    cfg = TrainConfig(steps=_acm_steps(s), batch_size=s["batch"], lr=lr, weight_decay=0.05, seed=seed)
    config = {"base": base.run.key, "train": cfg.as_dict(), "eval_images": s["eval_images"]}
    config["data"], trainer = data(profile, task), "acm.tuning.dense"
    return Spec(f"{PREFIX[task]}/dense", config, profile, (__name__,), dense_recipe, trainer, True, needs=(base,))


def dense_recipe(config: dict, base: nn.Module) -> Recipe:
    """Every weight of ``base`` fine-tuned with cross-entropy (:func:`dense_spec`)."""
    cfg, on = TrainConfig(**config["train"]), config["data"]

    def loss(model, batch):
        return F.cross_entropy(model(batch[0]), batch[1])

    evaluated = with_validation(evaluate, accuracy, on)
    return Recipe(lambda: copy.deepcopy(base), loss, batches(on, cfg.batch_size, cfg.seed), cfg, evaluated)


def relu_spec(profile: str, seed: int, task: str, lr: float) -> Spec:
    """MoEfication's first stage at ``lr``, declared: the base model's MLPs ReLU-fied and fine-tuned for phase III's
    steps."""
    s, base = sizes(profile, task), base_run(profile, seed, task)
    cfg = TrainConfig(steps=s["finetune_steps"], batch_size=s["batch"], lr=lr, weight_decay=0.05, seed=seed)
    config = {"base": base.run.key, "experts": experts(profile), "train": cfg.as_dict(), "data": data(profile, task)}
    name = f"{PREFIX[task]}/moe-relu"
    return Spec(name, config, profile, (__name__,), relu_recipe, "acm.tuning.moefied", True, needs=(base,))


def relu_recipe(config: dict, base: nn.Module) -> Recipe:
    """ReLU-fication of ``base`` into ``experts`` per MLP, fine-tuned with cross-entropy (:func:`relu_spec`)."""
    cfg, on = TrainConfig(**config["train"]), config["data"]

    def loss(model, batch):
        return F.cross_entropy(model(batch[0]), batch[1])

    make = lambda: moe_lib.moefy(copy.deepcopy(base), config["experts"])  # noqa: E731
    return Recipe(make, loss, batches(on, cfg.batch_size, cfg.seed), cfg)


def router_spec(profile: str, seed: int, task: str, lr: float) -> Spec:
    """MoEfication's second stage, declared: the ReLU-fied model of :func:`relu_spec` at ``lr`` split into experts
    and its routers trained (phases I+II steps)."""
    s, relu = sizes(profile, task), relu_spec(profile, seed, task, lr)
    cfg = TrainConfig(
        steps=s["distill_steps"] + s["gate_steps"], batch_size=s["batch"], lr=1e-3, weight_decay=0.0, seed=seed
    )
    config = {"relu": relu.run.key, "train": cfg.as_dict(), "eval_images": s["eval_images"]}
    config |= {"top_k": moe_top_k(profile), "data": data(profile, task)}
    name = f"{PREFIX[task]}/moe-router"
    return Spec(name, config, profile, (__name__,), router_recipe, "acm.tuning.moefied", True, needs=(relu,))


def router_recipe(config: dict, relu: nn.Module) -> Recipe:
    """The experts of ``relu`` split (each MLP's hidden units clustered) and only the routers trained to predict
    each expert's activation (:func:`router_spec`); evaluated at every top-k of ``top_k``."""
    cfg, on = TrainConfig(**config["train"]), config["data"]

    def make():
        model = copy.deepcopy(relu)
        for layer in moe_lib.moe_layers(model):
            moe_lib.split_experts(layer, cfg.seed)
        for name, p in model.named_parameters():
            p.requires_grad = ".router." in name
        return model

    def loss(model, batch):
        return moe_lib.router_loss(model, _mlp_inputs(model, batch[0]))

    def curve(model, x, y):
        return {"curve": moe_curve(model, x, y, tuple(config["top_k"]))}

    return Recipe(make, loss, batches(on, cfg.batch_size, cfg.seed), cfg, with_validation(curve, curve_accuracy, on))


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


def halting_spec(profile: str, target_depth: float, seed: int, lr: float) -> Spec:
    """:func:`halting`'s run at ``lr``, declared."""
    s, base = sizes(profile), base_run(profile, seed)
    cfg = TrainConfig(steps=_acm_steps(s), batch_size=s["batch"], lr=lr, weight_decay=0.0, grad_clip=1.5, seed=seed)
    config = {"base": base.run.key, "target_depth": target_depth, "train": cfg.as_dict()}
    config |= {"eval_images": s["eval_images"], "data": data(profile)}
    return Spec("acm/avit", config, profile, (__name__,), halting_recipe, "acm.tuning.halting", True, needs=(base,))


def halting_recipe(config: dict, base: nn.Module) -> Recipe:
    """A-ViT on ``base``, its halting loss towards ``target_depth`` blocks (:func:`halting_spec`)."""
    cfg, on = TrainConfig(**config["train"]), config["data"]

    def evaluated(model, x, y):
        return evaluate(model, x, y, macs=lambda m, n: flops.halting_vit(m))

    loss = partial(avit_loss, target_depth=config["target_depth"])
    evaluate_both = with_validation(evaluated, accuracy, on)
    return Recipe(lambda: AViT(copy.deepcopy(base)), loss, batches(on, cfg.batch_size, cfg.seed), cfg, evaluate_both)


def ztw_spec(profile: str, seed: int, lr: float) -> Spec:
    """:func:`early_exits`'s run at ``lr``, declared."""
    s, base = sizes(profile), base_run(profile, seed)
    cfg = TrainConfig(steps=_acm_steps(s), batch_size=s["batch"], lr=lr, weight_decay=0.0, seed=seed)
    config = {"base": base.run.key, "train": cfg.as_dict(), "eval_images": s["eval_images"], "data": data(profile)}
    return Spec("acm/ztw", config, profile, (__name__,), ztw_recipe, "acm.tuning.early_exits", True, needs=(base,))


def ztw_recipe(config: dict, base: nn.Module) -> Recipe:
    """ZTW's cascaded exit heads on the frozen ``base`` (:func:`ztw_spec`); evaluated at every exit threshold."""
    cfg, on = TrainConfig(**config["train"]), config["data"]

    def make():
        model = ZTWViT(copy.deepcopy(base))
        model.vit.requires_grad_(False)
        return model

    def curve(model, x, y):
        return {"curve": exit_curve(model, x, y)}

    loss = lambda m, b: exit_loss(m, b[0], b[1])  # noqa: E731
    return Recipe(make, loss, batches(on, cfg.batch_size, cfg.seed), cfg, with_validation(curve, curve_accuracy, on))


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
