"""Survey-1: parity, ACT vs PonderNet (:class:`ponder.models.recurrent.RecurrentPonderer`).

Accuracy and steps per difficulty, trained on difficulties ``1..n``, tested on ``1..dim``.
"""
from collections.abc import Sequence

import pandas as pd
import torch
import torch.nn.functional as F

from ..checks import check_choice
from ..models.pondernet import kl_to_prior, reconstruction_loss
from ..models.recurrent import HALTING, RecurrentPonderer
from ..profiles import by_profile
from ..runs import Run
from ..tasks import parity
from ..training import TrainConfig, default_device, num_threads, train_run

PARITY_CODE = ("ponder.tasks.parity", "ponder.models.act", "ponder.models.exits", "ponder.models.pondernet", "ponder.models.recurrent", "ponder.experiments.survey_parity")

PARITY = {
    "smoke": dict(dim=6, train_max=3, hidden=16, max_steps=5, steps=40, batch_size=64, lr=3e-3, n_test=64, seeds=(0,),
                  tau=1e-3, halting_bias=-1.0, lambda_p=0.2, beta=0.01),
    "quick": dict(dim=10, train_max=5, hidden=64, max_steps=10, steps=4000, batch_size=128, lr=3e-3, n_test=500, seeds=(0, 1),
                  tau=1e-3, halting_bias=-1.0, lambda_p=0.2, beta=0.01),
    "gpu": dict(dim=32, train_max=16, hidden=128, max_steps=20, steps=20_000, batch_size=128, lr=1e-3, n_test=1_000, seeds=(0, 1, 2),
                tau=1e-3, halting_bias=-1.0, lambda_p=0.2, beta=0.01),
    "paper": dict(dim=96, train_max=48, hidden=128, max_steps=20, steps=100_000, batch_size=128, lr=3e-4, n_test=2_000, seeds=(0, 1, 2),
                  tau=1e-3, halting_bias=-1.0, lambda_p=0.2, beta=0.01),
}
LABELS = {"act": "ACT", "pondernet": "PonderNet"}




def parity_loss(halting: str, tau: float, lambda_p: float, beta: float):
    """ACT: ``BCE(y, y_mix) + tau * mean(N + R)``; PonderNet: ``sum_n p_n BCE(y, y_n) + beta KL(p || p_G)``."""
    check_choice("halting", halting, HALTING)

    def act_loss(model, batch):
        x, _, label = batch
        logits, out = model.act(x)
        return F.binary_cross_entropy_with_logits(logits, label.float()) + tau * out.ponder_cost.mean()

    def pondernet_loss(model, batch):
        x, _, label = batch
        logits, out = model.unroll(x)  # [B, N]
        step_losses = F.binary_cross_entropy_with_logits(logits, label[:, None].float().expand_as(logits), reduction="none")
        return reconstruction_loss(out.log_p, step_losses) + beta * kl_to_prior(out.log_p, lambda_p)

    return act_loss if halting == "act" else pondernet_loss


def parity_test_set(dim: int, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``n`` fixed examples of every difficulty ``1..dim`` (seeds far from the training steps')."""
    parts = [parity.sample(n, dim, k, seed=800_000_000 + 1000 * k) for k in range(1, dim + 1)]
    return tuple(torch.cat(p) for p in zip(*parts))


@torch.no_grad()
def parity_per_difficulty(model: RecurrentPonderer, dim: int, n: int, seed: int = 0) -> dict:
    """``{"accuracy": {k: acc}, "steps": {k: mean steps}}``; PonderNet's halting step is sampled."""
    model.eval()
    x, k, label = parity_test_set(dim, n)
    logits, steps = model.predict(x.to(default_device()), generator=torch.Generator().manual_seed(seed))
    correct = ((logits > 0).long().cpu() == label).float()
    steps = steps.float().cpu()
    return {"accuracy": {str(d): correct[k == d].mean().item() for d in range(1, dim + 1)}, "steps": {str(d): steps[k == d].mean().item() for d in range(1, dim + 1)}}


def train_parity(halting: str, profile: str, seed: int, **overrides):
    """Train (or load) one parity model; ``(model, metrics)``. ``overrides`` replace ``PARITY[profile]`` fields."""
    s = dict(by_profile(PARITY, profile), **overrides)
    cfg = TrainConfig(steps=s["steps"], batch_size=s["batch_size"], lr=s["lr"], seed=seed)
    config = {"halting": halting, **{k: v for k, v in s.items() if k != "seeds"}, "train": cfg.as_dict()}
    run = Run(f"survey/parity/{halting}", config, profile, code=PARITY_CODE)
    difficulties = list(range(1, s["train_max"] + 1))

    def batches(step):
        return parity.sample(cfg.batch_size, s["dim"], difficulties, seed=cfg.seed * 1_000_003 + step)

    def make():
        return RecurrentPonderer(s["dim"], s["hidden"], s["max_steps"], halting, s["halting_bias"])

    def evaluate(model):
        return parity_per_difficulty(model, s["dim"], s["n_test"], seed)

    with num_threads(1):
        return train_run(run, make, parity_loss(halting, s["tau"], s["lambda_p"], s["beta"]), batches, cfg, evaluate)


def parity_frame(profile: str, seed: int = 0, methods: Sequence[str] = HALTING) -> pd.DataFrame:
    """survey-1: one row per method, seed and test difficulty: ``accuracy``, ``steps``, ``in_training``."""
    s = by_profile(PARITY, profile)
    rows = []
    for halting in methods:
        for offset in s["seeds"]:
            _, metrics = train_parity(halting, profile, seed + offset)
            final_loss = metrics["history"][-1]["loss"]
            for d, acc in metrics["accuracy"].items():
                rows.append({"method": LABELS[halting], "seed": seed + offset, "difficulty": int(d), "accuracy": acc,
                             "steps": metrics["steps"][d], "in_training": int(d) <= s["train_max"], "final_loss": final_loss})
    return pd.DataFrame(rows)
