"""ACM experiments on the digits stand-in: the base ViT, the three phases, the baselines, evaluation.

Every function returns a trained model (from the run cache when it is there) and its metrics;
the notebooks call these, :func:`train_all` trains them all without plotting.
"""
import copy
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from ..models import acmize as acmize_lib
from ..models import flops
from ..models.acm_phases import LOSS_WEIGHTS, distill_loss, finetune_loss, gate_loss
from ..models.vit import ViT
from ..profiles import by_profile
from ..runs import Run
from ..tasks import images
from ..training import TrainConfig, default_device, train_run

BUDGETS = (0.25, 0.4, 0.6, 0.75)
SIZES = {
    "smoke": dict(dim=32, depth=2, heads=2, batch=32, base_steps=40, distill_steps=10, gate_steps=10, finetune_steps=20, eval_images=96),
    "quick": dict(dim=48, depth=4, heads=4, batch=48, base_steps=700, distill_steps=100, gate_steps=50, finetune_steps=250, eval_images=359),
    "paper": dict(dim=192, depth=12, heads=3, batch=256, base_steps=20_000, distill_steps=400, gate_steps=200, finetune_steps=19_400, eval_images=359),
}
GATE_HIDDEN = 4
CODE_BASE = ["ponder.tasks.images", "ponder.models.vit", "ponder.models.transformer"]
CODE_ACM = CODE_BASE + ["ponder.models.acm", "ponder.models.acmize", "ponder.models.acm_phases"]


def sizes(profile: str) -> dict:
    return by_profile(SIZES, profile)


def batches(batch: int, seed: int) -> Callable[[int], tuple]:
    """Training batches of the digits task, a function of the step."""
    return lambda step: images.sample(batch, seed=seed * 1_000_003 + step)


def test_set(profile: str) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = images.images("test")
    n = sizes(profile)["eval_images"]
    return x[:n], y[:n]


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 128, macs: Callable | None = None) -> dict:
    """Top-1 accuracy and mean MACs per sample (``macs(model, batch_size)`` after each forward)."""
    model.eval()
    device = next(model.parameters()).device
    macs = macs or flops.vit
    correct, cost = 0, 0.0
    for start in range(0, len(x), batch):
        xb, yb = x[start : start + batch].to(device), y[start : start + batch].to(device)
        correct += (model(xb).argmax(-1) == yb).sum().item()
        cost += macs(model, len(xb)).sum().item()
    return {"accuracy": correct / len(x), "macs": cost / len(x)}


def base_vit(profile: str, seed: int = 0) -> tuple[ViT, dict]:
    """The "pre-trained" model: a small ViT trained here on the digits (stand-in for ViT-B on ImageNet)."""
    s = sizes(profile)
    arch = dict(image=32, patch=4, dim=s["dim"], depth=s["depth"], heads=s["heads"])
    cfg = TrainConfig(steps=s["base_steps"], batch_size=s["batch"], lr=2e-3, weight_decay=0.05, seed=seed)
    run = Run("acm/base", {"arch": arch, "train": cfg.as_dict()}, profile, code=CODE_BASE)
    x, y = test_set(profile)
    return train_run(run, lambda: ViT(**arch), lambda m, b: F.cross_entropy(m(b[0]), b[1]), batches(cfg.batch_size, seed), cfg, evaluate=lambda m: evaluate(m, x, y))


def trainable(model: nn.Module, part: str) -> nn.Module:
    """Freeze ``model`` except the ACMs' ``learners``, their ``gate``, or ``all`` parameters."""
    for name, p in model.named_parameters():
        p.requires_grad = part == "all" or f".{part}." in name
    return model


def distilled(profile: str, seed: int = 0, n: int = 4, steps: int | None = None) -> tuple[nn.Module, dict]:
    """Phase I: the ACM-ized base model with learners fitted to the replaced modules (lr 1e-3)."""
    s = sizes(profile)
    base, base_metrics = base_vit(profile, seed)
    steps = s["distill_steps"] if steps is None else steps
    cfg = TrainConfig(steps=max(steps, 1), batch_size=s["batch"], lr=1e-3, weight_decay=0.0, seed=seed)
    run = Run(f"acm/phase1-n{n}", {"base": base_metrics["accuracy"], "n": n, "gate_hidden": GATE_HIDDEN, "train": cfg.as_dict(), "skip": steps == 0}, profile, code=CODE_ACM)
    make = lambda: trainable(acmize_lib.acmize(base, n, GATE_HIDDEN), "learners")  # noqa: E731
    if steps == 0:  # "without phase I": random learners
        return make().to(default_device()), {}
    return train_run(run, make, lambda m, b: distill_loss(base, m, b[0]), batches(cfg.batch_size, seed), cfg)


def gates_pretrained(profile: str, seed: int = 0, n: int = 4, distill_steps: int | None = None) -> tuple[nn.Module, dict]:
    """Phase II: gates trained on the labels of the distillation errors (lr 1e-2); learners fixed."""
    s = sizes(profile)
    base, _ = base_vit(profile, seed)
    phase1, _ = distilled(profile, seed, n, distill_steps)
    cfg = TrainConfig(steps=s["gate_steps"], batch_size=s["batch"], lr=1e-2, weight_decay=0.0, seed=seed)
    config = {"phase1": _state_key(phase1), "train": cfg.as_dict()}
    run = Run(f"acm/phase2-n{n}", config, profile, code=CODE_ACM)
    make = lambda: trainable(copy.deepcopy(phase1), "gate")  # noqa: E731
    return train_run(run, make, lambda m, b: gate_loss(base, m, b[0]), batches(cfg.batch_size, seed), cfg)


def acm_model(profile: str, budget: float, seed: int = 0, n: int = 4, weights: dict | None = None, pretraining: str = "full") -> tuple[nn.Module, dict]:
    """Phase III: end-to-end fine-tuning at ``budget`` with CE + budget + entropy + diversity losses.

    ``pretraining``: ``full`` (phases I, II, III), ``no_phase1`` (random learners, then II and III)
    or ``none`` (only phase III, from random learners and gates); the steps a variant skips go
    to phase III, so every variant has the same total (as the official ablation).
    """
    s = sizes(profile)
    weights = dict(LOSS_WEIGHTS if weights is None else weights)
    skipped = {"full": 0, "no_phase1": s["distill_steps"], "none": s["distill_steps"] + s["gate_steps"]}[pretraining]
    if pretraining == "none":
        start, _ = distilled(profile, seed, n, steps=0)
    else:
        start, _ = gates_pretrained(profile, seed, n, distill_steps=0 if pretraining == "no_phase1" else None)
    cfg = TrainConfig(steps=s["finetune_steps"] + skipped, batch_size=s["batch"], lr=5e-4, weight_decay=0.05, seed=seed)
    config = {"start": _state_key(start), "budget": budget, "weights": weights, "pretraining": pretraining, "train": cfg.as_dict()}
    run = Run(f"acm/phase3-n{n}", config, profile, code=CODE_ACM)
    make = lambda: trainable(copy.deepcopy(start), "all")  # noqa: E731
    x, y = test_set(profile)
    return train_run(run, make, lambda m, b: finetune_loss(m, b[0], b[1], budget, weights), batches(cfg.batch_size, seed), cfg,
                     evaluate=lambda m: evaluate_acm(m, x, y))


def evaluate_acm(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Accuracy and MACs with grouped execution, plus the realised budget ``β``."""
    acmize_lib.set_execution(model, "grouped")
    metrics = evaluate(model, x, y)
    with torch.no_grad():
        model(x[:256].to(next(model.parameters()).device))
        metrics["beta"] = acmize_lib.cost_fraction(model).mean().item()
    return metrics


@torch.no_grad()
def compute_maps(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``[B, grid, grid]`` per-patch learner MACs over every ACM, normalised by the most a token can cost."""
    model.eval()
    model(x.to(next(model.parameters()).device))
    per_token = acmize_lib.compute_map(model) / acmize_lib.max_token_cost(model)
    return per_token[:, 1:].unflatten(1, (model.grid, model.grid)).float().cpu()


def _state_key(model: nn.Module) -> str:
    """A short fingerprint of a model's weights (ties a downstream run to its exact start)."""
    import hashlib

    digest = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(t.detach().cpu().float().numpy().tobytes())
    return digest.hexdigest()[:16]


def train_all(profile: str, seed: int = 0) -> None:
    """Every run the ACM notebooks need."""
    for budget in BUDGETS:
        acm_model(profile, budget, seed)
