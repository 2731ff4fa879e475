"""acm-8 and acm-10: the auxiliary-loss ablation, the learner counts at equal cost, the pre-training
variants and robustness to corruptions.
"""

from torch import nn

from ...checks import check_choice
from ...runner.specs import Chosen, Spec
from .phases import loss_weights, sizes
from .tuning import acm_run

ABLATIONS = {  # acm-8: which auxiliary terms are off
    "all": (),
    "no entropy": ("entropy",),
    "no diversity": ("diversity",),
    "neither": ("entropy", "diversity"),
    "no budget": ("budget",),
}
PRETRAINING = ("full", "no_phase1", "none")
ABLATION_BUDGET = 0.6


def ablation_run(profile: str, name: str, seed: int = 0) -> Spec | Chosen:
    """acm-8: a short phase III at β = 0.6 with some auxiliary losses switched off (the official 5-epoch ablation),
    declared."""
    check_choice("name", name, tuple(ABLATIONS))
    weights = loss_weights(profile) | {term: 0.0 for term in ABLATIONS[name]}
    return acm_run(profile, ABLATION_BUDGET, seed, weights=weights, steps=sizes(profile)["ablation_steps"])


def granularity_run(profile: str, n: int, seed: int = 0) -> Spec | Chosen:
    """acm-10: ``n`` learners at the same total cost (phases I and II, a short phase III at β = 0.6), declared."""
    return acm_run(profile, ABLATION_BUDGET, seed, n=n, steps=sizes(profile)["ablation_steps"])


def variant_run(profile: str, variant: str, seed: int = 0) -> Spec | Chosen:
    """acm-10: with both pre-training phases, without phase I, without either (same total steps: a short
    phase III of ``ablation_steps`` plus the steps the variant skips), β = 0.6, declared."""
    return acm_run(profile, ABLATION_BUDGET, seed, pretraining=variant, steps=sizes(profile)["ablation_steps"])


def ablation(profile: str, name: str, seed: int = 0) -> tuple[nn.Module, dict]:
    """Train (or load) :func:`ablation_run`."""
    return ablation_run(profile, name, seed)()


def granularity(profile: str, n: int, seed: int = 0) -> tuple[nn.Module, dict]:
    """Train (or load) :func:`granularity_run`."""
    return granularity_run(profile, n, seed)()


def pretraining_variant(profile: str, variant: str, seed: int = 0) -> tuple[nn.Module, dict]:
    """Train (or load) :func:`variant_run`."""
    return variant_run(profile, variant, seed)()


def variants(profile: str) -> tuple[str, ...]:
    """acm-10's pre-training variants that ``profile`` trains: every one of :data:`PRETRAINING`, or only ``full``
    where its row's ``pretraining_variants`` is off."""
    return PRETRAINING if sizes(profile)["pretraining_variants"] else PRETRAINING[:1]
