"""The training steps the benchmarks time: one declared run of each model family (:mod:`ponder.runner.specs`), built
from its recipe on untrained models of the runs it needs, and the variants of :data:`VARIANTS` (bfloat16 autocast,
compiled) that decide how the gpu profile's runs should train."""

from collections.abc import Callable
from functools import partial

import torch

from ..runner.gpu.compilation import compiled
from ..runner.specs import Recipe, Spec
from ..studies.acm.baselines import avit_depths
from ..studies.acm.phases import base_run, budgets
from ..studies.acm.tuning import acm_run, halting_run
from ..studies.hyla.experiments import fuzzy_setup, sraven_setup, task_spec, text_run, text_setup
from ..studies.hyper_ut.cpvr import cpvr_spec
from ..studies.hyper_ut.vision import vision_run
from ..studies.survey.parity import parity_run


def in_bf16(loss_fn: Callable) -> Callable:
    """``loss_fn`` with the model's forward under bfloat16 autocast (on the batch's device); the
    backward pass follows the forward's precision, the weights and AdamW stay float32."""

    def loss(model, batch):
        with torch.autocast(batch[0].device.type, dtype=torch.bfloat16):
            return loss_fn(model, batch)

    return loss


# variant -> (the families timed that way, what it does to their loss): the largest blocks of the gpu plan
# that are not bound by launches alone (sraven and the ViT; ACM's phase III and the language model, whose
# eager steps of 6 processes side by side keep the device busy). bf16 and compiled-cublas are measurements
# for deciding, no run trains that way; compiled is what a sraven run or a language model with ``compiled=True``
# trains with (their run declared so), and what an ACM phase-III run would
VARIANTS: dict[str, tuple[tuple[str, ...], Callable]] = {
    "bf16": (("sraven", "ViT"), in_bf16),
    "compiled": (("sraven", "ACM phase III", "text"), compiled),
    "compiled-cublas": (("sraven",), partial(compiled, sum_small_products=False)),
}


def families(profile: str, variants: bool = True) -> dict[str, tuple[Callable, Callable, Callable]]:
    """``{name: (make_model, batches(step), loss_fn)}`` for one run of each family of ``profile``,
    with ``variants`` also those of :data:`VARIANTS` (named ``"bf16 ..."``, ``"compiled ..."``, ...), each
    right after its family: a bench cut off by its time limit has measured the variants of the families
    it reached (the compiled sraven row decides a rule of the gpu plan). A family whose run has a ``compiled``
    switch is compiled as the run declared with it compiles (the language model's validation stays eager)."""
    rows = {}
    switched = declared_runs(profile, compiled=True) if variants else {}
    for family, spec in declared_runs(profile).items():
        name, (make, batches, loss) = family_step(family, spec)
        rows[name] = (make, batches, loss)
        for variant, (prefixes, wrap) in VARIANTS.items() if variants else ():
            if family.startswith(prefixes):
                as_declared = variant == "compiled" and switched[family].run.key != spec.run.key
                variant_loss = untrained(switched[family]).loss if as_declared else wrap(loss)
                rows[f"{variant} {name}"] = (make, batches, variant_loss)
    return rows


# a learning rate for the runs declared without one (the ACM methods, chosen on a grid at cpu): a step costs the same
# at any rate
LR = 1e-3


def declared_runs(profile: str, compiled: bool = False) -> dict[str, Spec]:
    """``{family: spec}``: the run of each family of ``profile`` that the bench times (:mod:`ponder.runner.specs`),
    sraven and the language model eager unless ``compiled``, ACM's phase III at the lowest budget and A-ViT at the
    lowest target depth (their steps cost more than the plain ViT's)."""
    return {
        "sraven": task_spec("sraven", sraven_setup(profile, compiled=compiled), profile),
        "fuzzy": task_spec("fuzzy", fuzzy_setup(profile), profile),
        "text": text_run(text_setup(profile, compiled=compiled), profile),
        "C-PVR ut_act": cpvr_spec("ut_act", profile, 0),
        "C-PVR hyper_act": cpvr_spec("hyper_act", profile, 0),
        "ViT": base_run(profile),
        "ACM phase III": acm_run(profile, budgets(profile)[0], lr=LR),
        "A-ViT": halting_run(profile, avit_depths(profile)[0], lr=LR),
        "digits U-ViT hyper_act": vision_run("hyper_act", profile, 0),
        "parity ACT": parity_run("act", profile, 0),
    }


def untrained(spec: Spec) -> Recipe:
    """``spec``'s recipe built on untrained models of the runs it needs: a step costs the same on any weights."""
    return spec.recipe(spec.config, *(untrained(need).make() for need in spec.needs))


def family_step(family: str, spec: Spec) -> tuple[str, tuple[Callable, Callable, Callable]]:
    """``(name, (make_model, batches(step), loss_fn))`` of ``family``'s run ``spec``, from its recipe: named by the
    family, the run and its batch size, its batches repeated after its last step."""
    recipe = untrained(spec)
    steps, batch = recipe.cfg.steps, recipe.batches
    name = f"{family} ({spec.name}, batch {recipe.cfg.batch_size})"
    return name, (recipe.make, lambda step: batch(step % steps), recipe.loss)


def base_family(name: str) -> str:
    """The family that a variant's row times (``"bf16 sraven ..."`` -> ``"sraven ..."``)."""
    variant, _, rest = name.partition(" ")
    return rest if variant in VARIANTS else name
