"""The survey's runs on C-PVR (targets survey-2 … survey-4): early exit, Mixture-of-Depths and PonderNet-UT,
the models of the table of every adaptive method against its dense twin (read in
:mod:`ponder.studies.survey.analysis.cpvr`).

The task, sizes, test set and the Transformer / UT / UT+ACT / Hyper-UT models are those of the
Hyper-UT experiments (``ponder.studies.hyper_ut.cpvr``: same ``SIZES``, same runs in the cache);
this module adds the models of the survey, trained on the same data:

============  ===========================================================  ==================
name          model                                                         its dense twin
============  ===========================================================  ==================
early_exit    the Transformer + one shared head after every layer (CALM)    itself, no exit
mod_<c>       Transformer blocks behind top-k routers at capacity ``c``      the Transformer
pondernet     the UT's shared block with PonderNet halting                  UT (fixed steps)
============  ===========================================================  ==================
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F

from ...models.calm import CALMClassifier, early_exit_loss
from ...models.classifier import Classifier, FixedDepth, SequenceEmbedding
from ...models.kinds import build, parameter_count
from ...models.mod import MoDStack
from ...models.pondernet import PonderClassifier, kl_to_prior, reconstruction_loss
from ...profiles import by_profile
from ...runner.specs import Recipe, Spec
from ...runner.training import TrainConfig
from ..hyper_ut import cpvr as hyper_ut
from ..hyper_ut.cpvr import per_hop
from .sizes.cpvr import SURVEY


def sizes(profile: str) -> dict:
    """What the survey's C-PVR notebooks read: ``task``, the C-PVR sizes shared with the Hyper-UT notebooks
    (``hyper_ut.SIZES``), and ``survey``, the profile's row of :data:`SURVEY`."""
    return dict(task=by_profile(hyper_ut.SIZES, profile), survey=by_profile(SURVEY, profile))


def make_mod(length: int, model: dict, capacity: float) -> Classifier:
    """The Transformer of ``hyper_ut`` with every block behind a top-k router (CLS always routed)."""
    m = model
    core = MoDStack(m["dim"], m["heads"], m["steps"], capacity, m["mlp_ratio"])
    return Classifier(
        SequenceEmbedding(length, length, m["dim"], m["values"]), core, FixedDepth(), m["dim"], classes=length
    )


def early_exit_train_loss(model, batch):
    x, _, label = batch
    return early_exit_loss(model(x, all_layers=True), label)


def pondernet_train_loss(lambda_p: float, beta: float):
    """``sum_n p_n CE(y, y_n) + beta KL(p || p_G)``."""

    def loss(model, batch):
        x, _, label = batch
        logits, log_p = model(x, all_steps=True)  # [B, N, C], [B, N]
        step_losses = F.cross_entropy(
            logits.transpose(1, 2), label[:, None].expand(-1, logits.shape[1]), reduction="none"
        )
        return reconstruction_loss(log_p, step_losses) + beta * kl_to_prior(log_p, lambda_p)

    return loss


def mod_train_loss(model, batch):
    x, _, label = batch
    return F.cross_entropy(model(x).logits, label)


def survey_spec(
    name: str,
    profile: str,
    seed: int,
    recipe: Callable[[dict], Recipe],
    trainer: str,
    extra: dict | None = None,
    hold: dict | None = None,
    code: str = __name__,
) -> Spec:
    """One survey model on C-PVR with ``hyper_ut.SIZES[profile]``, declared (:mod:`ponder.runner.specs`): ``recipe``
    builds
    its training from the config (:func:`cpvr_recipe` with the model and loss), ``trainer`` names it in the time
    records. ``extra``: what the model adds to the config; ``hold``: ``TrainConfig``'s ``hold`` and ``hold_for``,
    parameters that keep their initial values for a while. ``code``: the module that defines the model (its import
    closure is in the run's key): this one, or a method of one's own (:mod:`ponder.studies.survey.methods`)."""
    sizes = by_profile(hyper_ut.SIZES, profile)
    cfg = hyper_ut.train_config(sizes, seed, **(hold or {}))
    config = {
        "model": sizes["model"],
        "length": sizes["length"],
        "train_hops": sizes["train_hops"],
        "test_hops": sizes["test_hops"],
        "n_test": sizes["n_test"],
        "train": cfg.as_dict(),
        **(extra or {}),
    }
    return Spec(f"survey/cpvr/{name}", config, profile, (code,), recipe, trainer, one_thread=True)


def cpvr_recipe(config: dict, make: Callable[[], torch.nn.Module], loss) -> Recipe:
    """How a survey model of ``config`` (:func:`survey_spec`) trains on C-PVR: ``make`` and ``loss`` on the C-PVR
    training stream of its seed, evaluated per test hop count (``per_hop``) with its parameter count."""
    cfg, length, n = TrainConfig(**config["train"]), config["length"], config["n_test"]

    def evaluate(net):
        return {**per_hop(net, length, config["test_hops"], n), "params": parameter_count(net)}

    return Recipe(make, loss, hyper_ut.training_batches(cfg, length, config["train_hops"]), cfg, evaluate)


def early_exit_recipe(config: dict) -> Recipe:
    """The Transformer with a shared head after every layer (CALM), trained on every layer's exit."""
    return cpvr_recipe(
        config, lambda: CALMClassifier(build("transformer", config["length"], config["model"])), early_exit_train_loss
    )


def mod_recipe(config: dict) -> Recipe:
    """The Transformer's blocks behind top-k routers at ``config["capacity"]``."""
    return cpvr_recipe(config, lambda: make_mod(config["length"], config["model"], config["capacity"]), mod_train_loss)


def pondernet_recipe(config: dict) -> Recipe:
    """The UT's shared block with PonderNet halting, its prior ``lambda_p`` and KL weight ``beta``."""
    m, seed = config["model"], config["train"]["seed"]

    def make():
        return PonderClassifier(build("ut", config["length"], m), m["dim"], halting_bias=m["act_bias"], seed=seed)

    return cpvr_recipe(config, make, pondernet_train_loss(config["lambda_p"], config["beta"]))


def early_exit_run(profile: str, seed: int = 0) -> Spec:
    return survey_spec("early_exit", profile, seed, early_exit_recipe, "survey.train_early_exit")


def mod_run(profile: str, capacity: float, seed: int = 0) -> Spec:
    return survey_spec(f"mod_{capacity:g}", profile, seed, mod_recipe, "survey.train_mod", {"capacity": capacity})


def pondernet_run(profile: str, seed: int = 0) -> Spec:
    sizes, survey = by_profile(hyper_ut.SIZES, profile), by_profile(SURVEY, profile)
    extra = {"lambda_p": survey["lambda_p"], "beta": survey["beta"]}
    hold = {"hold": "halting_unit", "hold_for": sizes["model"]["act_hold"]}
    return survey_spec("pondernet_ut", profile, seed, pondernet_recipe, "survey.train_pondernet", extra, hold)


def train_early_exit(profile: str, seed: int = 0):
    """Train (or load) the early-exit Transformer (:func:`early_exit_run`); ``(model, metrics)``."""
    return early_exit_run(profile, seed)()


def train_mod(profile: str, capacity: float, seed: int = 0):
    """Train (or load) Mixture-of-Depths at ``capacity`` (:func:`mod_run`); ``(model, metrics)``."""
    return mod_run(profile, capacity, seed)()


def train_pondernet(profile: str, seed: int = 0):
    """Train (or load) PonderNet-UT (:func:`pondernet_run`); ``(model, metrics)``."""
    return pondernet_run(profile, seed)()
