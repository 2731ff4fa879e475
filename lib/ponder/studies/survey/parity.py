"""Survey-1: parity, ACT vs PonderNet (:class:`ponder.models.recurrent.RecurrentPonderer`).

**The task.** Parity of ``dim`` entries (:mod:`ponder.tasks.parity`), trained on difficulties
``1..train_max`` with ``train_max = dim / 2`` (PonderNet's 96 entries trained up to 48) and
tested on ``1..dim``; ``max_steps`` leaves room to ponder. A control, the same GRU held to one
step (``max_steps=1``), trained alike, checks that one step does not solve the task.

**The claim** "PonderNet trains more stably and extrapolates better than ACT", measured as in
the PonderNet paper: over a grid of runs per method, every seed of the profile times every
value of the method's knob (:data:`KNOBS`: ACT's ponder cost ``tau``, PonderNet's prior
``lambda_p``; the first value of a grid is the default, the second asks for fewer steps, the
paper profile's third for more), read in :mod:`ponder.studies.survey.analysis.parity`. With ``acc_k`` a run's test
accuracy at difficulty ``k``:

    trained(run)   = mean_{k <= train_max} acc_k              interpolation: on the training difficulties
    success(run)   = 1[trained(run) >= SUCCESS]               did training succeed (SUCCESS = 0.95)
    stability      = mean_{runs of the method} success(run)   the share of runs that train
    beyond(run)    = mean_{k > train_max} acc_k               extrapolation, per run

Runs of the two methods with the same seed start from the same weights and see the same
batches (the model's parameters do not depend on the halting rule), so a *cell*
``(seed, index of the knob value)`` pairs an ACT run with a PonderNet run.
"""

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from ...checks import check_choice
from ...models.pondernet import kl_to_prior, reconstruction_loss
from ...models.recurrent import HALTING, RecurrentPonderer
from ...profiles import by_profile
from ...runner.specs import Recipe, Spec
from ...runner.training import TrainConfig, default_device
from ...tasks import parity
from .sizes.parity import PARITY

KNOBS = {"act": "tau", "pondernet": "lambda_p"}  # the hyper-parameter each method's grid varies
LABELS = {"act": "ACT", "pondernet": "PonderNet"}
TRAINER = "survey_parity.train_parity"  # what the runs' times are recorded under (figures/TIMES.json)


def parity_settings(profile: str, **overrides) -> dict:
    """One run's settings: ``PARITY[profile]`` with each knob at its default (its grid's first value),
    then ``overrides`` (only known fields)."""
    s = by_profile(PARITY, profile)
    knobs = {knob: values[0] for knob, values in s["grid"].items()}
    base = {**knobs, **{k: v for k, v in s.items() if k not in ("seeds", "grid")}}
    unknown = sorted(set(overrides) - set(base))
    if unknown:
        raise ValueError(f"unknown parity settings {unknown}; choose from {sorted(base)}")
    return {**base, **overrides}


def parity_loss(halting: str, tau: float, lambda_p: float, beta: float):
    """ACT: ``BCE(y, y_mix) + tau * mean(N + R)``; PonderNet: ``sum_n p_n BCE(y, y_n) + beta KL(p || p_G)``."""
    check_choice("halting", halting, HALTING)

    def act_loss(model, batch):
        x, _, label = batch
        logits, out = model.act(x)
        return F.binary_cross_entropy_with_logits(logits, label.float()) + tau * out.ponder.mean()

    def pondernet_loss(model, batch):
        x, _, label = batch
        logits, out = model.unroll(x)  # [B, N]
        step_losses = F.binary_cross_entropy_with_logits(
            logits, label[:, None].float().expand_as(logits), reduction="none"
        )
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
    return {
        "accuracy": {str(d): correct[k == d].mean().item() for d in range(1, dim + 1)},
        "steps": {str(d): steps[k == d].mean().item() for d in range(1, dim + 1)},
    }


def parity_run(halting: str, profile: str, seed: int, **overrides) -> Spec:
    """One parity run, declared (:mod:`ponder.runner.specs`). ``overrides`` replace fields of :func:`parity_settings`
    (a knob value of the grid, ``max_steps=1`` for the control)."""
    check_choice("halting", halting, HALTING)
    s = parity_settings(profile, **overrides)
    cfg = TrainConfig(steps=s["steps"], batch_size=s["batch_size"], lr=s["lr"], seed=seed)
    config = {"halting": halting, **s, "train": cfg.as_dict()}
    return Spec(f"survey/parity/{halting}", config, profile, (__name__,), parity_recipe, TRAINER, one_thread=True)


def parity_recipe(config: dict) -> Recipe:
    """How a parity run of ``config`` (:func:`parity_run`) trains: fresh batches of the training difficulties
    each step, evaluated per difficulty (:func:`parity_per_difficulty`)."""
    cfg = TrainConfig(**config["train"])
    dim, difficulties = config["dim"], list(range(1, config["train_max"] + 1))

    def batches(step):
        return parity.sample(cfg.batch_size, dim, difficulties, seed=cfg.seed * 1_000_003 + step)

    def make():
        return RecurrentPonderer(dim, config["hidden"], config["max_steps"], config["halting"], config["halting_bias"])

    def evaluate(model):
        return parity_per_difficulty(model, dim, config["n_test"], cfg.seed)

    loss = parity_loss(config["halting"], config["tau"], config["lambda_p"], config["beta"])
    return Recipe(make, loss, batches, cfg, evaluate)


def train_parity(halting: str, profile: str, seed: int, **overrides):
    """Train (or load) one parity model (:func:`parity_run`); ``(model, metrics)``."""
    return parity_run(halting, profile, seed, **overrides)()


# -- the runs: the grid of each method and the one-step control --------------------------------
def grid_runs(profile: str, seed: int = 0, methods: Sequence[str] = HALTING) -> dict[tuple[str, int, int], Spec]:
    """survey-1's grid: ``{(halting, seed, j): job}`` for every method, seed of the profile and
    index ``j`` of a value of the method's knob (``(seed, j)`` is the run's cell)."""
    s = by_profile(PARITY, profile)
    return {
        (h, seed + o, j): parity_run(h, profile, seed + o, **{KNOBS[h]: value})
        for h in methods
        for o in s["seeds"]
        for j, value in enumerate(s["grid"][KNOBS[h]])
    }


def control_runs(profile: str, seed: int = 0) -> dict[int, Spec]:
    """The control: ``{seed: job}``, the GRU held to one step (ACT at ``max_steps=1`` halts after step 1)."""
    return {seed + o: parity_run("act", profile, seed + o, max_steps=1) for o in by_profile(PARITY, profile)["seeds"]}
