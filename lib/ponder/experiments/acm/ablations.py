"""acm-8 and acm-10: the auxiliary-loss ablation, the learner counts at equal cost, the pre-training
variants and robustness to corruptions.
"""

import torch
from torch import nn

from ...checks import check_choice
from ...tasks import images
from .phases import TEST_COPIES, acm_model, evaluate_acm, loss_weights, sizes, test_set

ABLATIONS = {  # acm-8: which auxiliary terms are off
    "all": (),
    "no entropy": ("entropy",),
    "no diversity": ("diversity",),
    "neither": ("entropy", "diversity"),
    "no budget": ("budget",),
}
PRETRAINING = ("full", "no_phase1", "none")
ABLATION_BUDGET = 0.6


def ablation(profile: str, name: str, seed: int = 0) -> tuple[nn.Module, dict]:
    """acm-8: a short phase III at β = 0.6 with some auxiliary losses switched off (the official 5-epoch ablation)."""
    check_choice("name", name, tuple(ABLATIONS))
    weights = loss_weights(profile) | {term: 0.0 for term in ABLATIONS[name]}
    return acm_model(profile, ABLATION_BUDGET, seed, weights=weights, steps=sizes(profile)["ablation_steps"])


def granularity(profile: str, n: int, seed: int = 0) -> tuple[nn.Module, dict]:
    """acm-10: ``n`` learners at the same total cost (phases I and II, a short phase III at β = 0.6)."""
    return acm_model(profile, ABLATION_BUDGET, seed, n=n, steps=sizes(profile)["ablation_steps"])


def pretraining_variant(profile: str, variant: str, seed: int = 0) -> tuple[nn.Module, dict]:
    """acm-10: with both pre-training phases, without phase I, without either (same total steps: a short
    phase III of ``ablation_steps`` plus the steps the variant skips), β = 0.6."""
    return acm_model(profile, ABLATION_BUDGET, seed, pretraining=variant, steps=sizes(profile)["ablation_steps"])


@torch.no_grad()
def robustness(model: nn.Module, profile: str, severities=range(6)) -> list[dict]:
    """acm-10: accuracy, MACs and realised β under each corruption of :data:`images.CORRUPTIONS` at each severity,
    on the first ``robustness_copies`` renderings of every test digit."""
    x, y = test_set(profile)
    count = (
        len(x) * sizes(profile)["robustness_copies"] // TEST_COPIES
    )  # the test set holds every digit once, then again, ...
    x, y = x[:count], y[:count]
    clean = evaluate_acm(model, x, y)  # severity 0 leaves the images as they are: evaluated once
    rows = []
    for kind in images.CORRUPTIONS:
        for severity in severities:
            metrics = (
                clean if severity == 0 else evaluate_acm(model, images.corrupt(x, kind, severity, seed=severity), y)
            )
            rows.append({"corruption": kind, "severity": severity, **metrics})
    return rows
