"""ACM experiments on the digits stand-in: the base ViT, the three phases, the baselines, evaluation.

Every function returns a trained model (from the run cache when it is there) and its metrics;
the notebooks call these, and :func:`ponder.experiments.train_all` trains :func:`jobs` without plotting.
"""

import copy
from collections.abc import Callable
from dataclasses import asdict
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from .. import parallel
from ..checks import check_choice, check_fraction
from ..compilation import compiled
from ..models import acmize as acmize_lib
from ..models import flops
from ..models import moe as moe_lib
from ..models.acm_phases import PAPER_LOSS_WEIGHTS, distill_loss, finetune_loss, gate_loss
from ..models.audio import FrameTransformer
from ..models.avit import AViT, halting_loss
from ..models.vit import ViT
from ..models.ztw import ZTWViT, exit_at, exit_loss
from ..profiles import by_profile
from ..runs import Run, config_key
from ..sizes.acm import SIZES, SPEECH_SIZES
from ..tasks import images, speech
from ..training import TrainConfig, default_device, train_run

TASKS = ("digits", "speech")
TEST_COPIES = (
    16  # the digits stand-in's test set: 16 renderings of each test digit (5,744 images), in the profile's scene
)
GATE_HIDDEN = 4
PREFIX = {"digits": "acm", "speech": "acm/speech"}  # run names
# how a phase-III step executes (a profile row's ``finetune_step``): eagerly, captured as a CUDA graph (on a GPU),
# its loss compiled (ponder.compilation), or both. The CPU profiles stay eager (pinned bits); on a GPU the step is
# thousands of small kernels
FINETUNE_STEPS = ("eager", "captured", "compiled", "compiled and captured")
MOE_TOP_K_FRACTIONS = (1 / 8, 1 / 4, 3 / 8, 1 / 2, 3 / 4, 1)  # of the experts (official: 2..128 of 128)
AVIT_TARGETS = (4, 6, 8, 10)  # the official A-ViT target depths, in blocks of 12
# The grids a profile's row may thin: phase-III budgets β, A-ViT targets (of AVIT_TARGETS), acm-10's learner counts
# and the renderings of each test digit that acm-10's robustness evaluates (25 evaluations of the test set).
GRIDS = dict(
    budgets=(0.25, 0.4, 0.6, 0.75),
    avit_targets=AVIT_TARGETS,
    learner_counts=(2, 4, 8, 16),
    robustness_copies=TEST_COPIES,
)


def avit_depths(profile: str) -> tuple[float, ...]:
    """The A-ViT target depths for the profile's ViT: its ``avit_targets`` of the official {4, 6, 8, 10}
    of 12 blocks, scaled to its depth (4/3, 2, 8/3, 10/3 of 4 blocks at cpu)."""
    s = sizes(profile)
    return tuple(s["depth"] * t / 12 for t in s["avit_targets"])


def budgets(profile: str, task: str = "digits") -> tuple[float, ...]:
    """The phase-III budgets β trained for ``task``, lowest first."""
    return tuple(sizes(profile, task)["budgets"])


def experts(profile: str) -> int:
    """MoEfication's experts per MLP: its hidden width (4 × dim) in experts of ``expert_units`` units."""
    s = sizes(profile)
    return 4 * s["dim"] // s["expert_units"]


def moe_top_k(profile: str) -> tuple[int, ...]:
    """The top-k values evaluated: :data:`MOE_TOP_K_FRACTIONS` of :func:`experts` (1, 2, 3, 4, 6, 8 of 8 at quick)."""
    count = experts(profile)
    return tuple(sorted({max(1, round(f * count)) for f in MOE_TOP_K_FRACTIONS}))


def loss_weights(profile: str) -> dict[str, float]:
    """Phase III's auxiliary weights: the paper's, times the profile's ``loss_scale``."""
    return {name: sizes(profile)["loss_scale"] * w for name, w in PAPER_LOSS_WEIGHTS.items()}


EXIT_THRESHOLDS = tuple(round(0.3 + 0.7 * i / 40, 4) for i in range(41))


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


def batches(profile: str, batch: int, seed: int, task: str = "digits") -> Callable[[int], tuple]:
    """Training batches, a function of the step."""
    sampler = partial(images.sample, scene=scene(profile)) if task == "digits" else speech.sample
    return lambda step: sampler(batch, seed=seed * 1_000_003 + step)


def test_set(profile: str, task: str = "digits") -> tuple[torch.Tensor, torch.Tensor]:
    """Evaluation inputs (images, or log-mel frames) and labels."""
    if task == "digits":
        x, y = images.images("test", scene=scene(profile), copies=TEST_COPIES)
    else:
        x, y = speech.fixed_features("test")
    n = sizes(profile, task)["eval_images"]
    return x[:n], y[:n]


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


def base_spec(profile: str, seed: int = 0, task: str = "digits") -> tuple[Run, Callable[[], nn.Module], TrainConfig]:
    """The base model's run, its constructor and its optimisation (see :func:`base_model`)."""
    s = sizes(profile, task)
    if task == "digits":
        arch = dict(image=32, patch=4, dim=s["dim"], depth=s["depth"], heads=s["heads"])
        make = lambda: ViT(**arch)  # noqa: E731
    else:
        arch = dict(
            frames=speech.frames(),
            features=speech.MELS,
            classes=len(speech.WORDS),
            dim=s["dim"],
            depth=s["depth"],
            heads=s["heads"],
        )
        make = lambda: FrameTransformer(**arch)  # noqa: E731
    cfg = TrainConfig(steps=s["base_steps"], batch_size=s["batch"], lr=s["base_lr"], weight_decay=0.05, seed=seed)
    config = {"arch": arch, "train": cfg.as_dict(), "eval_images": s["eval_images"]} | (
        {"scene": asdict(scene(profile))} if task == "digits" else {}
    )
    return Run(f"{PREFIX[task]}/base", config, profile, code=__name__), make, cfg


def base_model(profile: str, seed: int = 0, task: str = "digits") -> tuple[nn.Module, dict]:
    """The "pre-trained" model trained here: a small ViT on the digits (stand-in for ViT-B on ImageNet)
    or a frame transformer on the eSpeak words (stand-in for XLS-R on CommonVoice).

    Every run downstream of a base model trains with one thread (``parallel.train_one_thread``),
    in a worker of :func:`prefetch` or here: the thread count changes the last bits of a sum, and
    the ACM's hard gates amplify that into a different run (``import ponder`` pins one thread everywhere;
    unpinned, the base models train with every thread). A downstream run's config names the base
    model by its run's key (:func:`base_spec`), which fixes its weights."""
    run, make, cfg = base_spec(profile, seed, task)
    x, y = test_set(profile, task)
    return train_run(
        run,
        make,
        lambda m, b: F.cross_entropy(m(b[0]), b[1]),
        batches(profile, cfg.batch_size, seed, task),
        cfg,
        evaluate=lambda m: evaluate(m, x, y),
    )


def trainable(model: nn.Module, part: str) -> nn.Module:
    """Freeze ``model`` except the ACMs' ``learners``, their ``gate``, or ``all`` parameters."""
    for name, p in model.named_parameters():
        p.requires_grad = part == "all" or f".{part}." in name
    return model


def random_learners(base: nn.Module | None, n: int, seed: int) -> tuple[nn.Module | None, dict]:
    """The ACM-ized ``base`` with random learners (no phase I), only the learners trainable; ``None``
    where ``base`` was looked up, not loaded (:func:`ponder.runs.only_cached`)."""
    if base is None:
        return None, {}
    torch.manual_seed(seed)
    return trainable(acmize_lib.acmize(base, n, GATE_HIDDEN), "learners").to(default_device()), {}


def phase1_key(
    profile: str, seed: int = 0, n: int = 4, steps: int | None = None, task: str = "digits", warm_start: bool = True
) -> str:
    """What fixes phase I's model: its run's key, or for ``steps=0`` (random learners) the base model's
    key with ``n`` and the seed that draws them."""
    s = sizes(profile, task)
    steps = s["distill_steps"] if steps is None else steps
    base = base_spec(profile, seed, task)[0].key
    if steps == 0:
        return config_key({"random learners": base, "n": n, "gate_hidden": GATE_HIDDEN, "seed": seed})
    cfg = TrainConfig(steps=steps, batch_size=s["batch"], lr=1e-3, weight_decay=0.0, seed=seed)
    config = {"base": base, "n": n, "gate_hidden": GATE_HIDDEN, "train": cfg.as_dict()} | (
        {} if warm_start else {"warm_start": False}
    )
    return Run(f"{PREFIX[task]}/phase1-n{n}", config, profile, code=__name__).key


def distilled(
    profile: str, seed: int = 0, n: int = 4, steps: int | None = None, task: str = "digits", warm_start: bool = True
) -> tuple[nn.Module, dict]:
    """Phase I: the ACM-ized base model distilled to the replaced modules (lr 1e-3); ``steps=0``:
    random learners, no phase I.

    ``warm_start`` (our addition, default): the learners start from the replaced modules
    (:func:`~ponder.models.acmize.acmize`); ``False``: at random, as the paper (measured effect in docs/acm.md).
    """
    s = sizes(profile, task)
    base, _ = base_model(profile, seed, task)
    steps = s["distill_steps"] if steps is None else steps
    if steps == 0:  # "without phase I": random learners
        return random_learners(base, n, seed)
    make = lambda: trainable(acmize_lib.acmize(base, n, GATE_HIDDEN, warm_start=warm_start), "learners")  # noqa: E731
    cfg = TrainConfig(steps=steps, batch_size=s["batch"], lr=1e-3, weight_decay=0.0, seed=seed)
    config = {"base": base_spec(profile, seed, task)[0].key, "n": n, "gate_hidden": GATE_HIDDEN, "train": cfg.as_dict()}
    config |= {} if warm_start else {"warm_start": False}
    run = Run(f"{PREFIX[task]}/phase1-n{n}", config, profile, code=__name__)
    return parallel.train_one_thread(
        run, make, lambda m, b: distill_loss(base, m, b[0]), batches(profile, cfg.batch_size, seed, task), cfg
    )


def gates_run(
    profile: str,
    seed: int = 0,
    n: int = 4,
    distill_steps: int | None = None,
    task: str = "digits",
    warm_start: bool = True,
) -> Run:
    """Phase II's run (see :func:`gates_pretrained`)."""
    s = sizes(profile, task)
    cfg = TrainConfig(steps=s["gate_steps"], batch_size=s["batch"], lr=1e-2, weight_decay=0.0, seed=seed)
    phase1 = phase1_key(profile, seed, n, distill_steps, task, warm_start)
    return Run(f"{PREFIX[task]}/phase2-n{n}", {"phase1": phase1, "train": cfg.as_dict()}, profile, code=__name__)


def gates_pretrained(
    profile: str,
    seed: int = 0,
    n: int = 4,
    distill_steps: int | None = None,
    task: str = "digits",
    warm_start: bool = True,
) -> tuple[nn.Module, dict]:
    """Phase II: gates trained on the labels of the distillation errors (lr 1e-2); learners fixed."""
    base, _ = base_model(profile, seed, task)
    phase1, _ = distilled(profile, seed, n, distill_steps, task, warm_start)
    run = gates_run(profile, seed, n, distill_steps, task, warm_start)
    cfg = TrainConfig(**run.config["train"])
    make = lambda: trainable(copy.deepcopy(phase1), "gate")  # noqa: E731
    return parallel.train_one_thread(
        run, make, lambda m, b: gate_loss(base, m, b[0]), batches(profile, cfg.batch_size, seed, task), cfg
    )


def acm_model(
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
) -> tuple[nn.Module, dict]:
    """Phase III: end-to-end fine-tuning at ``budget`` with CE + budget + entropy + diversity losses
    (weights: :func:`loss_weights` unless given).

    ``pretraining``: ``full`` (phases I, II, III), ``no_phase1`` (random learners, then II and III)
    or ``none`` (only phase III, from random learners and gates); the steps a variant skips go
    to phase III, so every variant has the same total (as the official ablation). ``steps``
    overrides the phase-III length (the short ablation runs). The project's deviations, each on
    by default: ``task_gradient`` (the task loss reaches the gates, :class:`~ponder.models.acm.ACM`),
    ``warm_start`` (phase I starts from the replaced modules, :func:`distilled`) and
    ``argmax_budget`` (the budget term also on evaluation's arg-max choices, :mod:`~ponder.models.acm_phases`).
    The profile's ``finetune_step`` says how the step executes (:data:`FINETUNE_STEPS`).
    """
    check_choice("pretraining", pretraining, ("full", "no_phase1", "none"))
    check_fraction("budget", budget)  # every budget (ablation, granularity, ...) comes in here
    s = sizes(profile, task)
    weights = dict(loss_weights(profile) if weights is None else weights)
    skipped = {"full": 0, "no_phase1": s["distill_steps"], "none": s["distill_steps"] + s["gate_steps"]}[pretraining]
    if pretraining == "none":
        start, _ = distilled(profile, seed, n, steps=0, task=task)
        start_key = phase1_key(profile, seed, n, steps=0, task=task)
    else:
        distill_steps = 0 if pretraining == "no_phase1" else None
        start, _ = gates_pretrained(profile, seed, n, distill_steps, task=task, warm_start=warm_start)
        start_key = gates_run(profile, seed, n, distill_steps, task, warm_start).key
    steps = s["finetune_steps"] if steps is None else steps
    cfg = TrainConfig(steps=steps + skipped, batch_size=s["batch"], lr=s["finetune_lr"], weight_decay=0.05, seed=seed)
    config = {
        "start": start_key,
        "budget": budget,
        "weights": weights,
        "pretraining": pretraining,
        "train": cfg.as_dict(),
        "eval_images": s["eval_images"],
    }
    config |= ({} if task_gradient else {"task_gradient": False}) | ({} if argmax_budget else {"argmax_budget": False})
    step = check_choice("finetune_step", s["finetune_step"], FINETUNE_STEPS)
    config |= {} if step == "eager" else {"step": step}
    run = Run(f"{PREFIX[task]}/phase3-n{n}", config, profile, code=__name__)

    def make():
        model = trainable(copy.deepcopy(start), "all")
        for m in acmize_lib.acms(model):
            m.task_gradient = task_gradient
        return model

    loss, capture = finetune_execution(
        partial(phase3_loss, budget=budget, weights=weights, argmax_budget=argmax_budget), step
    )
    x, y = test_set(profile, task)
    return parallel.train_one_thread(
        run,
        make,
        loss,
        batches(profile, cfg.batch_size, seed, task),
        cfg,
        evaluate=lambda m: evaluate_acm(m, x, y),
        capture=capture,
    )


def finetune_execution(loss: Callable, step: str) -> tuple[Callable, bool]:
    """How a phase-III step taken the way ``step`` says (:data:`FINETUNE_STEPS`) executes: the loss it
    calls (``loss`` compiled by :func:`~ponder.compilation.compiled`, or as given) and whether the
    training step is captured as a CUDA graph."""
    return (compiled(loss) if "compiled" in step else loss), "captured" in step


def phase3_loss(
    model: nn.Module, batch: tuple, budget: float, weights: dict, argmax_budget: bool = True
) -> torch.Tensor:
    """Phase III's loss on a training batch ``(inputs, labels)`` (:func:`~ponder.models.acm_phases.finetune_loss`)."""
    return finetune_loss(model, batch[0], batch[1], budget, weights, argmax_budget)


def avit_loss(model: nn.Module, batch: tuple, target_depth: float) -> torch.Tensor:
    """A-ViT's loss on a training batch ``(images, labels)`` (:func:`~ponder.models.avit.halting_loss`)."""
    return halting_loss(model, batch[0], batch[1], target_depth)


def evaluate_acm(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Accuracy and MACs with grouped execution, plus the realised budget ``β``."""
    acmize_lib.set_execution(model, "grouped")
    metrics = evaluate(model, x, y)
    with torch.no_grad():
        model(x[:256].to(next(model.parameters()).device))
        metrics["beta"] = acmize_lib.cost_fraction(model).mean().item()
    return metrics


@torch.no_grad()
def spending(model: nn.Module, x: torch.Tensor, batch: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """Where and how much the gates spend on images ``x`` (one pass, ``batch`` images at a time):
    ``[B, grid, grid]`` per-patch learner MACs over every ACM, normalised by the most a token can
    cost, and ``[B]`` the realised compute fraction ``β_i`` of each image."""
    model.eval()
    device = next(model.parameters()).device
    maps, costs = [], []
    for start in range(0, len(x), batch):
        model(x[start : start + batch].to(device))
        per_token = acmize_lib.compute_map(model) / acmize_lib.max_token_cost(model)
        maps.append(per_token[:, 1:].unflatten(1, (model.grid, model.grid)).float().cpu())
        costs.append(acmize_lib.cost_fraction(model).cpu())
    return torch.cat(maps), torch.cat(costs)


def compute_maps(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``[B, grid, grid]`` per-patch learner MACs over every ACM, normalised by the most a token can cost."""
    return spending(model, x)[0]


@torch.no_grad()
def mean_learners(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``[B, T]`` learners run per token, averaged over every ACM (acm-7's bars)."""
    model.eval()
    model(x.to(next(model.parameters()).device))
    ks = [m.k.float() for m in acmize_lib.acms(model)]
    return (sum(ks) / len(ks)).cpu()


def content_patches(profile: str, grid: int, threshold: float = 0.05) -> torch.Tensor:
    """``[B, grid, grid]`` bool: the patches of :func:`test_set`'s images whose mean ink (the digit layer,
    not the textured background) exceeds ``threshold``."""
    ink = images.content("test", scene=scene(profile), copies=TEST_COPIES)[: sizes(profile)["eval_images"]]
    return F.adaptive_avg_pool2d(ink, grid)[:, 0] > threshold


@torch.no_grad()
def distillation_errors(
    profile: str, seed: int = 0, module: str | None = None, images_: int = 64
) -> tuple[torch.Tensor, torch.Tensor]:
    """acm-5: per-token MSE of ``h(z, k)``, ``k = 1..N``, after phase I for one MLP (default: the
    second-to-last block's), on test images; also the phase-II labels (learners needed, ``2..N``)
    of those tokens."""
    from ..models.acm_phases import capture, distances, gate_labels

    base, _ = base_model(profile, seed)
    model, _ = distilled(profile, seed)
    module = module or f"blocks.{len(base.blocks) - 2}.mlp"
    x, _ = test_set(profile)
    z, target = capture(base, [module], x[:images_].to(next(base.parameters()).device))[module]
    d = distances(model.get_submodule(module), z, target).flatten(0, 1).cpu()  # [tokens, N]
    return d.pow(2) / target.shape[-1], gate_labels(d)


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


# -- baselines, each from the same base model with the ACM's total training steps --------------
def _acm_steps(s: dict) -> int:
    return s["distill_steps"] + s["gate_steps"] + s["finetune_steps"]


def moefied(profile: str, seed: int = 0, task: str = "digits") -> tuple[nn.Module, dict]:
    """MoEfication: ReLU-fication fine-tuning (phase-III steps), expert split, routers (phases I+II steps).

    Metrics hold ``curve``: accuracy and MACs for each top-k of :func:`moe_top_k`.
    """
    s = sizes(profile, task)
    base, _ = base_model(profile, seed, task)
    cfg = TrainConfig(steps=s["finetune_steps"], batch_size=s["batch"], lr=5e-4, weight_decay=0.05, seed=seed)
    count = experts(profile)
    base_key = base_spec(profile, seed, task)[0].key
    run = Run(
        f"{PREFIX[task]}/moe-relu", {"base": base_key, "experts": count, "train": cfg.as_dict()}, profile, code=__name__
    )
    relu_key = run.key
    relu, _ = parallel.train_one_thread(
        run,
        lambda: moe_lib.moefy(copy.deepcopy(base), count),
        lambda m, b: F.cross_entropy(m(b[0]), b[1]),
        batches(profile, cfg.batch_size, seed, task),
        cfg,
    )

    def make():
        model = copy.deepcopy(relu)
        for layer in moe_lib.moe_layers(model):
            moe_lib.split_experts(layer, seed)
        for name, p in model.named_parameters():
            p.requires_grad = ".router." in name
        return model

    cfg = TrainConfig(
        steps=s["distill_steps"] + s["gate_steps"], batch_size=s["batch"], lr=1e-3, weight_decay=0.0, seed=seed
    )
    run = Run(
        f"{PREFIX[task]}/moe-router",
        {"relu": relu_key, "train": cfg.as_dict(), "eval_images": s["eval_images"]},
        profile,
        code=__name__,
    )
    x, y = test_set(profile, task)
    return parallel.train_one_thread(
        run,
        make,
        lambda m, b: moe_lib.router_loss(m, _mlp_inputs(m, b[0])),
        batches(profile, cfg.batch_size, seed, task),
        cfg,
        evaluate=lambda m: {"curve": moe_curve(m, x, y, moe_top_k(profile))},
    )


def _mlp_inputs(model: nn.Module, x: torch.Tensor) -> dict:
    """``{MoE layer: its input}`` of a forward of ``model`` (no gradient)."""
    found, hooks = {}, []
    for layer in moe_lib.moe_layers(model):
        hooks.append(layer.register_forward_pre_hook(lambda m, args: found.__setitem__(m, args[0])))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
    return found


def moe_curve(model: nn.Module, x: torch.Tensor, y: torch.Tensor, top_k: tuple[int, ...]) -> list[dict]:
    """Accuracy and MACs of ``model`` with each top-``k`` experts."""
    curve = []
    for k in top_k:
        moe_lib.set_top_k(model, k)
        curve.append({"k": k, **evaluate(model, x, y)})
    moe_lib.set_top_k(model, None)
    return curve


def halting(profile: str, target_depth: float, seed: int = 0) -> tuple[nn.Module, dict]:
    """A-ViT-style token halting fine-tuned from the base model towards ``target_depth`` blocks."""
    s = sizes(profile)
    base, _ = base_model(profile, seed)
    cfg = TrainConfig(steps=_acm_steps(s), batch_size=s["batch"], lr=5e-4, weight_decay=0.0, grad_clip=1.5, seed=seed)
    run = Run(
        "acm/avit",
        {
            "base": base_spec(profile, seed)[0].key,
            "target_depth": target_depth,
            "train": cfg.as_dict(),
            "eval_images": s["eval_images"],
        },
        profile,
        code=__name__,
    )
    x, y = test_set(profile)
    return parallel.train_one_thread(
        run,
        lambda: AViT(copy.deepcopy(base)),
        partial(avit_loss, target_depth=target_depth),
        batches(profile, cfg.batch_size, seed),
        cfg,
        evaluate=lambda m: evaluate(m, x, y, macs=lambda mm, n: flops.halting_vit(mm)),
    )


def early_exits(profile: str, seed: int = 0) -> tuple[nn.Module, dict]:
    """ZTW-style cascaded exit heads on the frozen base model; metrics hold the threshold ``curve``."""
    s = sizes(profile)
    base, _ = base_model(profile, seed)
    cfg = TrainConfig(steps=_acm_steps(s), batch_size=s["batch"], lr=1e-3, weight_decay=0.0, seed=seed)
    run = Run(
        "acm/ztw",
        {"base": base_spec(profile, seed)[0].key, "train": cfg.as_dict(), "eval_images": s["eval_images"]},
        profile,
        code=__name__,
    )

    def make():
        model = ZTWViT(copy.deepcopy(base))
        model.vit.requires_grad_(False)
        return model

    x, y = test_set(profile)
    return parallel.train_one_thread(
        run,
        make,
        lambda m, b: exit_loss(m, b[0], b[1]),
        batches(profile, cfg.batch_size, seed),
        cfg,
        evaluate=lambda m: {"curve": exit_curve(m, x, y)},
    )


@torch.no_grad()
def exit_curve(model: ZTWViT, x: torch.Tensor, y: torch.Tensor) -> list[dict]:
    model.eval()
    logits = model(x.to(next(model.parameters()).device)).cpu()
    curve = []
    for threshold in EXIT_THRESHOLDS:
        exits = exit_at(logits, threshold)
        predictions = logits[exits, torch.arange(len(x))].argmax(-1)
        curve.append(
            {
                "threshold": threshold,
                "accuracy": (predictions == y).float().mean().item(),
                "macs": flops.early_exit_vit(model, exits).mean().item(),
            }
        )
    return curve


def jobs(profile: str, seed: int = 0) -> dict[str, list[parallel.Job]]:
    """The runs each ACM notebook trains, as jobs for :func:`ponder.parallel.prefetch`.

    No two jobs of a notebook share a run (N = 4 at equal cost and the "full" pre-training variant
    are the "all" ablation, so they are left out here) and each job's unshared upstream runs are its own.
    The judged comparisons train every seed of :func:`seeds`; acm-10's describing runs the first.
    """
    every = seeds(profile, seed)
    return {
        "acm_vit": [
            job
            for s in every
            for job in [partial(acm_model, profile, b, s) for b in budgets(profile)]
            + [partial(moefied, profile, s), partial(early_exits, profile, s)]
            + [partial(halting, profile, d, s) for d in avit_depths(profile)]
        ],
        "acm_ablations": [partial(ablation, profile, name, s) for s in every for name in ABLATIONS]
        + [partial(granularity, profile, n, seed) for n in sizes(profile)["learner_counts"] if n != 4]
        + [partial(pretraining_variant, profile, v, seed) for v in PRETRAINING if v != "full"]
        + [partial(acm_model, profile, budgets(profile)[-1], seed)],
        "acm_speech": [
            job
            for s in every
            for job in [partial(acm_model, profile, b, s, task="speech") for b in budgets(profile, "speech")]
            + [partial(moefied, profile, s, task="speech")]
        ],
    }


def upstream(profile: str, seed: int = 0) -> dict[str, list[parallel.Job]]:
    """The runs the jobs of each ACM notebook share: its task's base model and phases I-II, per seed."""
    return {
        notebook: [
            partial(gates_pretrained, profile, s, task="speech" if notebook == "acm_speech" else "digits")
            for s in seeds(profile, seed)
        ]
        for notebook in jobs(profile, seed)
    }


# -- acm-3: accuracy vs MACs over seeds ---------------------------------------------------------
def tradeoff(profile: str, seed: int = 0, task: str = "digits") -> dict[str, list[tuple[float, float]]]:
    """acm-3 (digits) or acm-4 (speech) for one seed: ``{method: [(MMACs, accuracy), ...]}``: ACM at each of
    :func:`budgets`, MoEfication at each top-k, on the digits A-ViT at each target depth and ZTW at each
    threshold, and the ``base`` model."""
    point = lambda m: (m["macs"] / 1e6, m["accuracy"])  # noqa: E731
    methods = {
        "ACM": [point(acm_model(profile, b, seed, task=task)[1]) for b in budgets(profile, task)],
        "MoEfication": [point(p) for p in moefied(profile, seed, task)[1]["curve"]],
    }
    if task == "digits":
        methods |= {
            "A-ViT": [point(halting(profile, d, seed)[1]) for d in avit_depths(profile)],
            "ZTW": [point(p) for p in early_exits(profile, seed)[1]["curve"]],
        }
    return methods | {"base": [point(base_model(profile, seed, task)[1])]}


def realised_betas(profile: str, seed: int = 0, task: str = "digits"):
    """The realised compute fraction at evaluation (arg-max gates) of every phase-III model of ``task``: a DataFrame
    with a row per seed of :func:`seeds` and target of :func:`budgets` (columns ``seed``, ``target``, ``realised``)."""
    import pandas as pd

    return pd.DataFrame(
        [
            {"seed": s, "target": b, "realised": acm_model(profile, b, s, task=task)[1]["beta"]}
            for s in seeds(profile, seed)
            for b in budgets(profile, task)
        ]
    )


# -- checks of the claims ------------------------------------------------------------------------
def best_at(cost: float, points: list[tuple[float, float]], floor: float) -> float:
    """The best quality among ``points (cost, quality)`` costing at most ``cost`` (``floor`` if none is that cheap)."""
    return max([q for c, q in points if c <= cost], default=floor)


def leads(ours: list[tuple[float, float]], others: list[tuple[float, float]], floor: float) -> list[float]:
    """For each of ``ours`` (sorted by cost): its quality minus the best of ``others`` at no more cost."""
    return [q - best_at(c, others, floor) for c, q in sorted(ours)]


def diversity(maps: torch.Tensor, per_sample: torch.Tensor) -> dict:
    """acm-8: spatial diversity (mean over samples of the spread of compute over patches) and
    per-sample diversity (spread of the per-sample compute), both as standard deviations."""
    return {"spatial": maps.flatten(1).std(1).mean().item(), "per_sample": per_sample.std().item()}


def diversity_margins(stats):
    """acm-8: per setting (a row of ``stats``, a DataFrame with :func:`diversity`'s columns), the
    smaller of its two diversities relative to their median over the settings, minus 1: at least 0
    when both diversities are at or above the median."""
    both = stats[["spatial", "per_sample"]]
    return (both / both.median()).min(axis=1) - 1
