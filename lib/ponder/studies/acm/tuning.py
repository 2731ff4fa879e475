"""Every method of acm-3 and acm-4 tuned alike: a learning rate chosen per method on in-distribution validation.

Each method that trains from the base model (ACM's phase III, MoEfication's ReLU-fication, A-ViT, ZTW's exit
heads, the dense fine-tuning) tries every rate of the profile's ``lr_grid`` in one setting on :data:`TUNE_SEED`
and keeps the rate with the best validation score (:func:`~.phases.validation_inputs`: the training digits or
utterances rendered afresh; the test set never chooses). That rate then trains the method at every setting and
seed. A point method scores its accuracy, a curve method (MoEfication's top-k, ZTW's thresholds) its mean accuracy
over the curve. With one rate nothing is tuned and every method trains at it; with none each method keeps its own
rate (:func:`own_rate`). Every method's runs are declared here at the rate chosen for it (``acm_run``,
``dense_run``, ``moefied_run``, ``halting_run``, ``early_exits_run``) and trained or loaded by the function of the
method's name; :mod:`.phases` and :mod:`.baselines` declare them at a given rate.
"""

from collections.abc import Callable
from functools import partial

from torch import nn

from ...checks import check_choice, check_fraction
from ...runner.specs import Chosen, Spec
from .baselines import avit_depths, dense_spec, halting_spec, router_spec, ztw_spec
from .phases import PREFIX, acm_spec, loss_weights, sizes

TUNE_SEED = 0  # the seed whose runs choose each method's rate
TUNING_BUDGET = 0.4  # the ACM budget whose runs choose ACM's rate (in every profile's digits and speech grids at cpu)
METHODS = {
    "digits": ("ACM", "MoEfication", "A-ViT", "ZTW", "dense, fine-tuned"),
    "speech": ("ACM", "MoEfication", "dense, fine-tuned"),
}


def own_rate(method: str, profile: str, task: str) -> float:
    """The rate a method trains at where nothing is tuned: phase III's ``finetune_lr`` for ACM and the dense
    fine-tuning, the official fine-tuning rate 5e-4 for MoEfication and A-ViT, 1e-3 for ZTW's heads alone."""
    return {"MoEfication": 5e-4, "A-ViT": 5e-4, "ZTW": 1e-3}.get(method, sizes(profile, task)["finetune_lr"])


def tuning_run(method: str, profile: str, task: str, lr: float) -> Spec:
    """The run that scores ``lr`` for ``method``: ACM at :data:`TUNING_BUDGET`, A-ViT at its middle target depth,
    the others as they are, on :data:`TUNE_SEED`."""
    runs: dict[str, Callable[[], Spec]] = {
        "ACM": lambda: acm_run(profile, TUNING_BUDGET, TUNE_SEED, task=task, lr=lr),
        "MoEfication": lambda: router_spec(profile, TUNE_SEED, task, lr),
        "A-ViT": lambda: halting_spec(profile, avit_depths(profile)[len(avit_depths(profile)) // 2], TUNE_SEED, lr),
        "ZTW": lambda: ztw_spec(profile, TUNE_SEED, lr),
        "dense, fine-tuned": lambda: dense_spec(profile, TUNE_SEED, task, lr),
    }
    return runs[method]()


def grid(profile: str, task: str = "digits") -> tuple[float, ...]:
    """The rates each method tries: the profile's ``lr_grid`` (none tuned with fewer than two)."""
    return tuple(sizes(profile, task).get("lr_grid", ()))


def tuned(method: str, profile: str, task: str, declare: Callable[[float], Spec], label: str) -> Spec | Chosen:
    """``declare(lr)`` at the rate of :func:`grid` whose :func:`tuning_run` has the best validation score (ties: the
    first), chosen among those runs once they are finished (:class:`~ponder.runner.specs.Chosen`); at the one rate of a
    grid of one; at :func:`own_rate` without a grid. ``label`` names the run in one line."""
    rates = grid(profile, task)
    if len(rates) < 2:
        return declare(rates[0] if rates else own_rate(method, profile, task))
    among = tuple(tuning_run(method, profile, task, lr) for lr in rates)
    return Chosen(among, partial(at_best_rate, rates, declare), f"{label}, at the rate chosen for {method}")


def at_best_rate(rates: tuple[float, ...], declare: Callable[[float], Spec], metrics: list[dict]) -> Spec:
    """``declare`` at the rate whose run's ``metrics`` (in ``rates``' order) have the best validation score."""
    return declare(best_rate(dict(zip(rates, (m["validation"] for m in metrics), strict=True))))


def best_rate(scores: dict[float, float]) -> float:
    """The rate of ``scores`` (``{lr: validation score}``) with the best score; ties: the first."""
    return max(scores, key=lambda lr: (scores[lr], -list(scores).index(lr)))


def lr_scores(method: str, profile: str, task: str) -> dict[float, float]:
    """``{lr: validation score}`` of ``method`` at each rate of :func:`grid`."""
    return {lr: tuning_run(method, profile, task, lr).metrics()["validation"] for lr in grid(profile, task)}


def chosen_lr(method: str, profile: str, task: str) -> float:
    """The rate of :func:`grid` with the best validation score (ties: the first); the one rate of a grid of one;
    :func:`own_rate` without a grid."""
    rates = grid(profile, task)
    if len(rates) < 2:
        return rates[0] if rates else own_rate(method, profile, task)
    return best_rate(lr_scores(method, profile, task))


def tuning_jobs(profile: str, task: str = "digits") -> list[Spec]:
    """Every run the rates of ``task``'s methods are chosen on (none with fewer than two rates): upstream of the
    runs at the chosen rates."""
    if len(grid(profile, task)) < 2:
        return []
    return [tuning_run(method, profile, task, lr) for method in METHODS[task] for lr in grid(profile, task)]


# -- every method at its rate: declared, and trained (or loaded) ------------------------------------------------
def acm_run(
    profile: str,
    budget: float,
    seed: int = 0,
    n: int = 4,
    weights: dict | None = None,
    pretraining: str = "full",
    steps: int | None = None,
    task: str = "digits",
    task_gradient: bool = True,
    warm_start: bool = True,
    argmax_budget: bool = True,
    lr: float | None = None,
) -> Spec | Chosen:
    """ACM's phase III (:func:`~.phases.acm_spec`), declared: at ``lr``, or at the rate chosen for ACM (:func:`tuned`);
    see :func:`acm_model`."""
    check_choice("pretraining", pretraining, ("full", "no_phase1", "none"))
    check_fraction("budget", budget)  # every budget (ablation, granularity, ...) comes in here
    weights = dict(loss_weights(profile) if weights is None else weights)
    declare = partial(
        acm_spec, profile, budget, seed, n, weights, pretraining, steps, task, task_gradient, warm_start, argmax_budget
    )
    if lr is not None:
        return declare(lr)
    flags = dict(task_gradient=task_gradient, warm_start=warm_start, argmax_budget=argmax_budget)
    off = "".join(f" no {flag}" for flag, on in flags.items() if not on)
    label = f"{PREFIX[task]}/phase3-n{n} budget {budget} {pretraining}{off}, seed {seed}, steps {steps}, {weights}"
    return tuned("ACM", profile, task, declare, label)


def acm_model(profile: str, budget: float, seed: int = 0, **options) -> tuple[nn.Module, dict]:
    """Phase III: end-to-end fine-tuning at ``budget`` with CE + budget + entropy + diversity losses
    (weights: :func:`~.phases.loss_weights` unless given), at ``lr`` or the rate chosen on validation (:func:`tuned`).

    ``pretraining``: ``full`` (phases I, II, III), ``no_phase1`` (random learners, then II and III)
    or ``none`` (only phase III, from random learners and gates); the steps a variant skips go
    to phase III, so every variant has the same total (as the official ablation). ``steps``
    overrides the phase-III length (the short ablation runs). The project's deviations, each on
    by default: ``task_gradient`` (the task loss reaches the gates, :class:`~ponder.models.acm.ACM`),
    ``warm_start`` (phase I starts from the replaced modules, :func:`~.phases.distilled`) and
    ``argmax_budget`` (the budget term also on evaluation's arg-max choices, :mod:`~ponder.models.acm_phases`).
    ``options``: :func:`acm_run`'s (``n``, ``weights``, ``pretraining``, ``steps``, ``task``, the three deviations,
    ``lr``).
    """
    return acm_run(profile, budget, seed, **options)()


def dense_run(profile: str, seed: int = 0, task: str = "digits", lr: float | None = None) -> Spec | Chosen:
    """:func:`dense`, declared: at ``lr`` or the rate chosen on validation (:func:`tuned`)."""
    declare = partial(dense_spec, profile, seed, task)
    label = f"{PREFIX[task]}/dense, seed {seed}"
    return declare(lr) if lr is not None else tuned("dense, fine-tuned", profile, task, declare, label)


def dense(profile: str, seed: int = 0, task: str = "digits", lr: float | None = None) -> tuple[nn.Module, dict]:
    """The base model fine-tuned as it is, every weight, for the ACM's total steps at phase III's weight decay
    (:func:`~.baselines.dense_spec`): what the extra training alone gives. A method that fine-tunes the base model
    beats the base model by that much without adapting any compute; beside this point its gain is its own."""
    return dense_run(profile, seed, task, lr)()


def moefied_run(profile: str, seed: int = 0, task: str = "digits", lr: float | None = None) -> Spec | Chosen:
    """:func:`moefied`, declared: at ``lr`` or the rate chosen on validation (:func:`tuned`)."""
    declare = partial(router_spec, profile, seed, task)
    label = f"{PREFIX[task]}/moe-router, seed {seed}"
    return declare(lr) if lr is not None else tuned("MoEfication", profile, task, declare, label)


def moefied(profile: str, seed: int = 0, task: str = "digits", lr: float | None = None) -> tuple[nn.Module, dict]:
    """MoEfication: ReLU-fication fine-tuning (phase-III steps, at ``lr`` as :func:`moefied_run`), expert
    split, routers (phases I+II steps: :func:`~.baselines.router_spec`).

    Metrics hold ``curve``: accuracy and MACs for each top-k of :func:`~.baselines.moe_top_k`.
    """
    return moefied_run(profile, seed, task, lr)()


def halting_run(profile: str, target_depth: float, seed: int = 0, lr: float | None = None) -> Spec | Chosen:
    """:func:`halting`, declared: at ``lr`` or the rate chosen on validation (:func:`tuned`)."""
    declare = partial(halting_spec, profile, target_depth, seed)
    label = f"acm/avit {target_depth}, seed {seed}"
    return declare(lr) if lr is not None else tuned("A-ViT", profile, "digits", declare, label)


def halting(profile: str, target_depth: float, seed: int = 0, lr: float | None = None) -> tuple[nn.Module, dict]:
    """A-ViT-style token halting fine-tuned from the base model towards ``target_depth`` blocks (at ``lr`` as
    :func:`halting_run`; :func:`~.baselines.halting_spec`)."""
    return halting_run(profile, target_depth, seed, lr)()


def early_exits_run(profile: str, seed: int = 0, lr: float | None = None) -> Spec | Chosen:
    """:func:`early_exits`, declared: at ``lr`` or the rate chosen on validation (:func:`tuned`)."""
    declare = partial(ztw_spec, profile, seed)
    return declare(lr) if lr is not None else tuned("ZTW", profile, "digits", declare, f"acm/ztw, seed {seed}")


def early_exits(profile: str, seed: int = 0, lr: float | None = None) -> tuple[nn.Module, dict]:
    """ZTW-style cascaded exit heads on the frozen base model (at ``lr`` as :func:`early_exits_run`;
    :func:`~.baselines.ztw_spec`); metrics hold the threshold ``curve``."""
    return early_exits_run(profile, seed, lr)()
