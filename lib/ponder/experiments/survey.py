"""The survey's runs on C-PVR (targets survey-2 … survey-4): early exit, Mixture-of-Depths and PonderNet-UT,
the models of the table of every adaptive method against its dense twin (read in :mod:`ponder.analysis.survey`).

The task, sizes, test set and the Transformer / UT / UT+ACT / Hyper-UT models are those of the
Hyper-UT experiments (``ponder.experiments.hyper_ut``: same ``SIZES``, same runs in the cache);
this module adds the models of the survey, trained on the same data:

============  ===========================================================  ==================
name          model                                                         its dense twin
============  ===========================================================  ==================
early_exit    the Transformer + one shared head after every layer (CALM)    itself, no exit
mod_<c>       Transformer blocks behind top-k routers at capacity ``c``      the Transformer
pondernet     the UT's shared block with PonderNet halting                  UT (fixed steps)
============  ===========================================================  ==================
"""

import torch.nn.functional as F

from ..models.calm import CALMClassifier, early_exit_loss
from ..models.classifier import Classifier, FixedDepth, SequenceEmbedding
from ..models.kinds import build, parameter_count
from ..models.mod import MoDStack
from ..models.pondernet import PonderClassifier, kl_to_prior, reconstruction_loss
from ..profiles import by_profile
from ..runs import Run
from ..sizes.survey import SURVEY
from ..training import num_threads, train_run
from . import hyper_ut
from .hyper_ut import per_hop


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


def train_survey_model(
    name: str,
    profile: str,
    seed: int,
    make,
    loss,
    extra: dict | None = None,
    hold: dict | None = None,
    code: str = __name__,
):
    """Train (or load) one survey model on C-PVR with ``hyper_ut.SIZES[profile]``; ``(model, metrics)``.
    ``hold``: ``TrainConfig``'s ``hold`` and ``hold_for``, parameters that keep their initial values for
    a while. ``code``: the module that defines the model (its import closure is in the run's key): this one,
    or a method of one's own (:mod:`ponder.methods`)."""
    sizes = by_profile(hyper_ut.SIZES, profile)
    length, hops = sizes["length"], sizes["test_hops"]
    cfg = hyper_ut.train_config(sizes, seed, **(hold or {}))
    config = {
        "model": sizes["model"],
        "length": length,
        "train_hops": sizes["train_hops"],
        "test_hops": hops,
        "n_test": sizes["n_test"],
        "train": cfg.as_dict(),
        **(extra or {}),
    }
    run = Run(f"survey/cpvr/{name}", config, profile, code=code)

    batches = hyper_ut.training_batches(cfg, length, sizes["train_hops"])

    def evaluate(net):
        return {**per_hop(net, length, hops, sizes["n_test"]), "params": parameter_count(net)}

    with num_threads(1):
        return train_run(run, make, loss, batches, cfg, evaluate)


def train_early_exit(profile: str, seed: int = 0):
    sizes = by_profile(hyper_ut.SIZES, profile)
    return train_survey_model(
        "early_exit",
        profile,
        seed,
        lambda: CALMClassifier(build("transformer", sizes["length"], sizes["model"])),
        early_exit_train_loss,
    )


def train_mod(profile: str, capacity: float, seed: int = 0):
    sizes = by_profile(hyper_ut.SIZES, profile)
    return train_survey_model(
        f"mod_{capacity:g}",
        profile,
        seed,
        lambda: make_mod(sizes["length"], sizes["model"], capacity),
        mod_train_loss,
        {"capacity": capacity},
    )


def train_pondernet(profile: str, seed: int = 0):
    sizes, survey = by_profile(hyper_ut.SIZES, profile), by_profile(SURVEY, profile)
    m = sizes["model"]

    def make():
        return PonderClassifier(build("ut", sizes["length"], m), m["dim"], halting_bias=m["act_bias"], seed=seed)

    extra = {"lambda_p": survey["lambda_p"], "beta": survey["beta"]}
    hold = {"hold": "halting_unit", "hold_for": m["act_hold"]}
    return train_survey_model(
        "pondernet_ut", profile, seed, make, pondernet_train_loss(survey["lambda_p"], survey["beta"]), extra, hold
    )
