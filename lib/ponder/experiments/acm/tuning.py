"""Every method of acm-3 and acm-4 tuned alike: a learning rate chosen per method on in-distribution validation.

Each method that trains from the base model (ACM's phase III, MoEfication's ReLU-fication, A-ViT, ZTW's exit
heads, the dense fine-tuning) tries every rate of the profile's ``lr_grid`` in one setting on :data:`TUNE_SEED`
and keeps the rate with the best validation score (:func:`~.phases.validation_inputs`: the training digits or
utterances rendered afresh; the test set never chooses). That rate then trains the method at every setting and
seed. A point method scores its accuracy, a curve method (MoEfication's top-k, ZTW's thresholds) its mean accuracy
over the curve. With one rate nothing is tuned and every method trains at it; with none each method keeps its own
rate (:func:`own_rate`).
"""

from collections.abc import Callable
from functools import partial

from ...specs import Chosen, Spec
from .baselines import avit_depths, dense_run, early_exits_run, halting_run, moefied_run
from .phases import acm_run, sizes

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
        "MoEfication": lambda: moefied_run(profile, TUNE_SEED, task, lr=lr),
        "A-ViT": lambda: halting_run(profile, avit_depths(profile)[len(avit_depths(profile)) // 2], TUNE_SEED, lr=lr),
        "ZTW": lambda: early_exits_run(profile, TUNE_SEED, lr=lr),
        "dense, fine-tuned": lambda: dense_run(profile, TUNE_SEED, task, lr=lr),
    }
    return runs[method]()


def grid(profile: str, task: str = "digits") -> tuple[float, ...]:
    """The rates each method tries: the profile's ``lr_grid`` (none tuned with fewer than two)."""
    return tuple(sizes(profile, task).get("lr_grid", ()))


def tuned(method: str, profile: str, task: str, declare: Callable[[float], Spec], label: str) -> Spec | Chosen:
    """``declare(lr)`` at the rate of :func:`grid` whose :func:`tuning_run` has the best validation score (ties: the
    first), chosen among those runs once they are finished (:class:`~ponder.specs.Chosen`); at the one rate of a
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
