"""ACM on the digits and the speech stand-ins: the data, the base model, the three phases and their evaluation.

Each run is declared (:mod:`ponder.runner.specs`: :func:`base_run`, :func:`distilled_run`, :func:`gates_run`,
:func:`acm_spec` at a given learning rate; at the rate chosen on validation: :mod:`.tuning`), built on the trained
model of the one before (its ``needs``), whose run key its config names (:func:`phase1_key` for random learners);
the functions named after a phase return its trained model (from the run cache when it is there) and its
metrics.
"""

import copy
from collections.abc import Callable
from dataclasses import asdict
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from ...checks import check_choice
from ...models import acmize as acmize_lib
from ...models import flops
from ...models.acm_phases import PAPER_LOSS_WEIGHTS, distill_loss, finetune_loss, gate_loss
from ...models.audio import FrameTransformer
from ...models.vit import ViT
from ...profiles import by_profile
from ...runner.runs import config_key
from ...runner.specs import Recipe, Spec
from ...runner.training import TrainConfig, default_device
from ...tasks import images, speech
from .sizes import SIZES, SPEECH_SIZES

TASKS = ("digits", "speech")
TEST_COPIES = (
    16  # the digits stand-in's test set: 16 renderings of each test digit (5,744 images), in the profile's scene
)
GATE_HIDDEN = 4
PREFIX = {"digits": "acm", "speech": "acm/speech"}  # run names
AVIT_TARGETS = (4, 6, 8, 10)  # the official A-ViT target depths, in blocks of 12
# The grids a profile's row may thin: phase-III budgets β, A-ViT targets (of AVIT_TARGETS), acm-10's learner counts
# and the renderings of each test digit that acm-10's robustness evaluates (25 evaluations of the test set).
GRIDS = dict(
    budgets=(0.25, 0.4, 0.6, 0.75),
    avit_targets=AVIT_TARGETS,
    learner_counts=(2, 4, 8, 16),
    robustness_copies=TEST_COPIES,
)


def budgets(profile: str, task: str = "digits") -> tuple[float, ...]:
    """The phase-III budgets β trained for ``task``, lowest first."""
    return tuple(sizes(profile, task)["budgets"])


def loss_weights(profile: str) -> dict[str, float]:
    """Phase III's auxiliary weights: the paper's, times the profile's ``loss_scale``."""
    return {name: sizes(profile)["loss_scale"] * w for name, w in PAPER_LOSS_WEIGHTS.items()}


def seeds(profile: str, seed: int = 0) -> tuple[int, ...]:
    """The seeds of the judged comparisons: ``seed`` and the next ones, the profile's ``seeds`` in all (each its own
    base model). The describing rows (acm-6, acm-10) and the drawings of one model take the first."""
    return tuple(range(seed, seed + sizes(profile)["seeds"]))


def sizes(profile: str, task: str = "digits") -> dict:
    check_choice("task", task, TASKS)
    s = GRIDS | by_profile(SIZES, profile)
    return s | by_profile(SPEECH_SIZES, profile) if task == "speech" else s


def scene(profile: str) -> images.Scene:
    """The scene the profile's digits are drawn in (its row's ``scene``: a name of :data:`images.SCENES` or a
    :class:`images.Scene`); the base model's config holds its knobs, so every run downstream of it follows."""
    return images.scene_of(sizes(profile)["scene"])


def data(profile: str, task: str = "digits") -> dict:
    """What an ACM run trains and is evaluated on, for its config: the ``task``, the digits' scene (its knobs) and
    how many test and validation inputs it is scored on (``eval_images``)."""
    scene_knobs = {"scene": asdict(scene(profile))} if task == "digits" else {}
    return {"task": check_choice("task", task, TASKS), "eval_images": sizes(profile, task)["eval_images"]} | scene_knobs


def batches(on: dict, batch: int, seed: int) -> Callable[[int], tuple]:
    """Training batches of the data ``on`` (:func:`data`), a function of the step."""
    if on["task"] == "digits":
        sampler = partial(images.sample, scene=images.Scene(**on["scene"]))
    else:
        sampler = speech.sample
    return lambda step: sampler(batch, seed=seed * 1_000_003 + step)


VALIDATION_SEED = 950_000_000  # the renderings a learning rate is chosen on: apart from the test set and every batch


def validation_inputs(on: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """In-distribution validation inputs and labels of the data ``on`` (:func:`data`): every training digit (or
    training utterance) rendered once afresh, from :data:`VALIDATION_SEED`; what a method's learning rate is chosen
    on (:mod:`.tuning`), never the test set."""
    if on["task"] == "digits":
        x, y = images.images("train", scene=images.Scene(**on["scene"]), seed=VALIDATION_SEED)
    else:
        x, y = speech.fixed_features("train", seed=VALIDATION_SEED)
    return x[: on["eval_images"]], y[: on["eval_images"]]


def test_set(profile: str, task: str = "digits") -> tuple[torch.Tensor, torch.Tensor]:
    """Evaluation inputs (images, or log-mel frames) and labels of ``profile``'s ``task`` (:func:`test_inputs`)."""
    return test_inputs(data(profile, task))


def test_inputs(on: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """Evaluation inputs (images, or log-mel frames) and labels of the data ``on`` (:func:`data`)."""
    if on["task"] == "digits":
        x, y = images.images("test", scene=images.Scene(**on["scene"]), copies=TEST_COPIES)
    else:
        x, y = speech.fixed_features("test")
    return x[: on["eval_images"]], y[: on["eval_images"]]


def with_validation(evaluated: Callable[[nn.Module], dict], score: Callable[[dict], float], on: dict):
    """``evaluated`` (a model's metrics on the test set) plus ``validation``: ``score`` of the same metrics on the
    validation set (:func:`validation_inputs`), what the method's learning rate is chosen on. Both sets are made when
    a trained model is evaluated, never where a run is declared."""

    def evaluate_both(model: nn.Module) -> dict:
        return evaluated(model, *test_inputs(on)) | {"validation": score(evaluated(model, *validation_inputs(on)))}

    return evaluate_both


def accuracy(metrics: dict) -> float:
    """A point method's validation score: its accuracy."""
    return metrics["accuracy"]


@torch.no_grad()
def evaluate(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 128, macs: Callable | None = None
) -> dict:
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


def base_run(profile: str, seed: int = 0, task: str = "digits") -> Spec:
    """The base model's run, declared (see :func:`base_model`; its training: :func:`base_recipe`)."""
    s = sizes(profile, task)
    if task == "digits":
        arch = dict(image=32, patch=4, dim=s["dim"], depth=s["depth"], heads=s["heads"])
    else:
        arch = dict(
            frames=speech.frames(),
            features=speech.MELS,
            classes=len(speech.WORDS),
            dim=s["dim"],
            depth=s["depth"],
            heads=s["heads"],
        )
    cfg = TrainConfig(steps=s["base_steps"], batch_size=s["batch"], lr=s["base_lr"], weight_decay=0.05, seed=seed)
    config = {"arch": arch, "train": cfg.as_dict(), "data": data(profile, task)}
    return Spec(f"{PREFIX[task]}/base", config, profile, (__name__,), base_recipe, "acm.phases.base_model")


def base_recipe(config: dict) -> Recipe:
    """The base model of ``config`` (:func:`base_run`): a ViT or a frame transformer, cross-entropy."""
    on, cfg, arch = config["data"], TrainConfig(**config["train"]), config["arch"]

    def make():
        return ViT(**arch) if on["task"] == "digits" else FrameTransformer(**arch)

    def loss(model, batch):
        return F.cross_entropy(model(batch[0]), batch[1])

    return Recipe(make, loss, batches(on, cfg.batch_size, cfg.seed), cfg, lambda m: evaluate(m, *test_inputs(on)))


def base_model(profile: str, seed: int = 0, task: str = "digits") -> tuple[nn.Module, dict]:
    """The "pre-trained" model trained here: a small ViT on the digits (stand-in for ViT-B on ImageNet)
    or a frame transformer on the eSpeak words (stand-in for XLS-R on CommonVoice).

    Every run downstream of a base model trains with one thread (``one_thread``), in a worker of the planner or
    here: the thread count changes the last bits of a sum, and the ACM's hard gates amplify that into a different
    run (``import ponder`` pins one thread everywhere; unpinned, the base models train with every thread). A
    downstream run's config names the base model by its run's key (:func:`base_run`), which fixes its weights."""
    return base_run(profile, seed, task)()


def trainable(model: nn.Module, part: str) -> nn.Module:
    """Freeze ``model`` except the ACMs' ``learners``, their ``gate``, or ``all`` parameters."""
    for name, p in model.named_parameters():
        p.requires_grad = part == "all" or f".{part}." in name
    return model


def random_learners(base: nn.Module, n: int, seed: int) -> nn.Module:
    """The ACM-ized ``base`` with random learners (no phase I), only the learners trainable."""
    torch.manual_seed(seed)
    return trainable(acmize_lib.acmize(base, n, GATE_HIDDEN), "learners").to(default_device())


def distilled_run(
    profile: str, seed: int = 0, n: int = 4, steps: int | None = None, task: str = "digits", warm_start: bool = True
) -> Spec | None:
    """Phase I's run, declared (see :func:`distilled`); ``None`` for ``steps=0``, where no phase I trains."""
    s = sizes(profile, task)
    steps = s["distill_steps"] if steps is None else steps
    if steps == 0:
        return None
    base = base_run(profile, seed, task)
    cfg = TrainConfig(steps=steps, batch_size=s["batch"], lr=1e-3, weight_decay=0.0, seed=seed)
    config = {"base": base.run.key, "n": n, "gate_hidden": GATE_HIDDEN, "train": cfg.as_dict()}
    config |= ({} if warm_start else {"warm_start": False}) | {"data": data(profile, task)}
    name = f"{PREFIX[task]}/phase1-n{n}"
    return Spec(name, config, profile, (__name__,), distill_recipe, "acm.phases.distilled", True, needs=(base,))


def distill_recipe(config: dict, base: nn.Module) -> Recipe:
    """Phase I of ``config`` (:func:`distilled_run`): the ACM-ized ``base``'s learners distilled to the modules they
    replace, from those modules (``warm_start``) or at random."""
    cfg, warm_start = TrainConfig(**config["train"]), config.get("warm_start", True)

    def make():
        return trainable(acmize_lib.acmize(base, config["n"], GATE_HIDDEN, warm_start=warm_start), "learners")

    loss = lambda m, b: distill_loss(base, m, b[0])  # noqa: E731
    return Recipe(make, loss, batches(config["data"], cfg.batch_size, cfg.seed), cfg)


def phase1_key(
    profile: str, seed: int = 0, n: int = 4, steps: int | None = None, task: str = "digits", warm_start: bool = True
) -> str:
    """What fixes phase I's model: its run's key, or for ``steps=0`` (random learners) the base model's
    key with ``n`` and the seed that draws them."""
    run = distilled_run(profile, seed, n, steps, task, warm_start)
    if run is not None:
        return run.run.key
    base = base_run(profile, seed, task).run.key
    return config_key({"random learners": base, "n": n, "gate_hidden": GATE_HIDDEN, "seed": seed})


def distilled(
    profile: str, seed: int = 0, n: int = 4, steps: int | None = None, task: str = "digits", warm_start: bool = True
) -> tuple[nn.Module, dict]:
    """Phase I: the ACM-ized base model distilled to the replaced modules (lr 1e-3); ``steps=0``:
    random learners, no phase I.

    ``warm_start`` (our addition, default): the learners start from the replaced modules
    (:func:`~ponder.models.acmize.acmize`); ``False``: at random, as the paper (measured effect in docs/acm.md).
    """
    run = distilled_run(profile, seed, n, steps, task, warm_start)
    if run is None:  # "without phase I": random learners
        return random_learners(base_model(profile, seed, task)[0], n, seed), {}
    return run()


def gates_run(
    profile: str,
    seed: int = 0,
    n: int = 4,
    distill_steps: int | None = None,
    task: str = "digits",
    warm_start: bool = True,
) -> Spec:
    """Phase II's run, declared (see :func:`gates_pretrained`): built on the base model and phase I (or, without
    phase I, random learners drawn from the base model)."""
    s = sizes(profile, task)
    cfg = TrainConfig(steps=s["gate_steps"], batch_size=s["batch"], lr=1e-2, weight_decay=0.0, seed=seed)
    phase1 = distilled_run(profile, seed, n, distill_steps, task, warm_start)
    config = {"phase1": phase1_key(profile, seed, n, distill_steps, task, warm_start), "train": cfg.as_dict()}
    config |= {"n": n, "data": data(profile, task)}
    needs = (base_run(profile, seed, task),) + ((phase1,) if phase1 is not None else ())
    name = f"{PREFIX[task]}/phase2-n{n}"
    return Spec(name, config, profile, (__name__,), gates_recipe, "acm.phases.gates_pretrained", True, needs=needs)


def gates_recipe(config: dict, base: nn.Module, phase1: nn.Module | None = None) -> Recipe:
    """Phase II of ``config`` (:func:`gates_run`): the gates of ``phase1`` (or of random learners drawn from
    ``base``) trained on the labels of the distillation errors; learners fixed."""
    cfg = TrainConfig(**config["train"])
    start = phase1 if phase1 is not None else random_learners(base, config["n"], cfg.seed)

    def make():
        return trainable(copy.deepcopy(start), "gate")

    return Recipe(make, lambda m, b: gate_loss(base, m, b[0]), batches(config["data"], cfg.batch_size, cfg.seed), cfg)


def gates_pretrained(
    profile: str,
    seed: int = 0,
    n: int = 4,
    distill_steps: int | None = None,
    task: str = "digits",
    warm_start: bool = True,
) -> tuple[nn.Module, dict]:
    """Phase II: gates trained on the labels of the distillation errors (lr 1e-2); learners fixed."""
    return gates_run(profile, seed, n, distill_steps, task, warm_start)()


def acm_spec(
    profile: str,
    budget: float,
    seed: int,
    n: int,
    weights: dict,
    pretraining: str,
    steps: int | None,
    task: str,
    task_gradient: bool,
    warm_start: bool,
    argmax_budget: bool,
    lr: float,
) -> Spec:
    """Phase III's run at ``lr``, declared (see :func:`ponder.studies.acm.tuning.acm_model`; its training:
    :func:`acm_recipe`)."""
    s = sizes(profile, task)
    skipped = {"full": 0, "no_phase1": s["distill_steps"], "none": s["distill_steps"] + s["gate_steps"]}[pretraining]
    base = base_run(profile, seed, task)
    if pretraining == "none":
        start_key, start = phase1_key(profile, seed, n, steps=0, task=task), base
    else:
        start = gates_run(profile, seed, n, 0 if pretraining == "no_phase1" else None, task, warm_start)
        start_key = start.run.key
    steps = s["finetune_steps"] if steps is None else steps
    cfg = TrainConfig(steps=steps + skipped, batch_size=s["batch"], lr=lr, weight_decay=0.05, seed=seed)
    config = {
        "start": start_key,
        "budget": budget,
        "weights": weights,
        "pretraining": pretraining,
        "train": cfg.as_dict(),
        "eval_images": s["eval_images"],
    }
    config |= ({} if task_gradient else {"task_gradient": False}) | ({} if argmax_budget else {"argmax_budget": False})
    config |= {"n": n, "data": data(profile, task)}
    name = f"{PREFIX[task]}/phase3-n{n}"
    return Spec(name, config, profile, (__name__,), acm_recipe, "acm.tuning.acm_model", True, needs=(start,))


def acm_recipe(config: dict, start: nn.Module) -> Recipe:
    """Phase III of ``config`` (:func:`acm_spec`): every weight of ``start`` (phase II's model, or for the
    ``none`` pre-training random learners drawn from the base model ``start``) fine-tuned end to end."""
    cfg, budget, weights = TrainConfig(**config["train"]), config["budget"], config["weights"]
    task_gradient, argmax_budget = config.get("task_gradient", True), config.get("argmax_budget", True)
    if config["pretraining"] == "none":
        start = random_learners(start, config["n"], cfg.seed)

    def make():
        model = trainable(copy.deepcopy(start), "all")
        for m in acmize_lib.acms(model):
            m.task_gradient = task_gradient
        return model

    loss = partial(phase3_loss, budget=budget, weights=weights, argmax_budget=argmax_budget)
    on = config["data"]
    return Recipe(make, loss, batches(on, cfg.batch_size, cfg.seed), cfg, with_validation(evaluate_acm, accuracy, on))


def phase3_loss(
    model: nn.Module, batch: tuple, budget: float, weights: dict, argmax_budget: bool = True
) -> torch.Tensor:
    """Phase III's loss on a training batch ``(inputs, labels)`` (:func:`~ponder.models.acm_phases.finetune_loss`)."""
    return finetune_loss(model, batch[0], batch[1], budget, weights, argmax_budget)


def evaluate_acm(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Accuracy and MACs with grouped execution, plus the realised budget ``β``."""
    acmize_lib.set_execution(model, "grouped")
    metrics = evaluate(model, x, y)
    with torch.no_grad():
        model(x[:256].to(next(model.parameters()).device))
        metrics["beta"] = acmize_lib.cost_fraction(model).mean().item()
    return metrics


def settled_run(profile: str, seed: int = 0, warm_start: bool = False) -> Spec:
    """acm-5's phase I, declared (see :func:`settled_phase1`)."""
    return distilled_run(profile, seed, steps=sizes(profile)["phase1_plateau_steps"], warm_start=warm_start)


def settled_phase1(profile: str, seed: int = 0, warm_start: bool = False) -> tuple[nn.Module, dict]:
    """acm-5's phase I: :func:`distilled` for the profile's ``phase1_plateau_steps``, long enough for its loss to
    flatten (:func:`ponder.ledger.convergence.plateau` checks each run): the paper reads the learners a token
    needs off a phase I that has finished, not off the short one phase III starts from. ``warm_start=False``:
    random learners, as the paper; ``True``: ours (:func:`distilled`)."""
    return settled_run(profile, seed, warm_start)()
