"""Training runs of the HYLA notebooks (Schug et al., ICLR 2025): sraven, fuzzy logic, language modelling.

Every run is declared (:mod:`ponder.runner.specs`: :func:`tuned`, :func:`task_spec`, :func:`text_run`, its training
built from
its config by a recipe) and every ``train_*`` function returns ``(model, metrics)`` from the run cache, so the
notebooks and ``python -m ponder.repro.registry hyla`` share the runs. The run descriptions and
their sizes at each profile are in :mod:`ponder.studies.hyla.sizes`.

The official recipe: AdamW with linear warmup and cosine decay to 0.1·lr, no gradient clipping,
LeCun-normal weights and zero biases, weight decay on every parameter of two or more dimensions
(the official mask: per-head query/key/value biases and the relative position tables are decayed;
LayerNorms and the other biases are not), the T5 relative position bias and latent-code dropout
0.1 (the run descriptions' defaults). :data:`~ponder.studies.hyla.sizes.TUNING` is the per-kind
learning-rate × weight-decay grid: each kind is tried at every point on the profile's base run of its task and
seed :data:`TUNE_SEED`, and every run of that kind trains at the point with the best *in-distribution* score
(:func:`tuned`), as the C-PVR and ACM runs are tuned.

Held-out splits follow the run seed: seed ``s`` holds out the rule combinations (sraven) and term
combinations (fuzzy logic) that a permutation drawn with seed ``s`` puts first, as the official
code does, so runs with three seeds see three different splits.
"""

from dataclasses import asdict, replace
from functools import partial

import torch
import torch.nn.functional as F

from ...models.attention_transformer import CausalLM, InContextTransformer
from ...profiles import by_profile
from ...runner.gpu.compilation import compiled
from ...runner.specs import Chosen, Recipe, Spec
from ...runner.training import TrainConfig
from ...tasks import fuzzy, sraven, text
from .sizes import FUZZY, MAIN_KINDS, SRAVEN, SWEEPS, TEXT, TUNING, Fuzzy, Sraven, Text


def train_config(s, seed: int) -> TrainConfig:
    """AdamW with ``s.warmup_steps`` of warmup, cosine decay and ``s.grad_clip`` for a run
    description ``s`` (steps, batch, lr, weight decay)."""
    if not 0 <= s.warmup_steps < s.steps:
        raise ValueError(f"warmup_steps={s.warmup_steps} must lie in [0, steps={s.steps})")
    warmup = (
        (s.warmup_steps + 0.5) / s.steps if s.warmup_steps else 0.0
    )  # a fraction whose int(· steps) is warmup_steps
    return TrainConfig(
        steps=s.steps,
        batch_size=s.batch_size,
        lr=s.lr,
        weight_decay=s.weight_decay,
        warmup=warmup,
        grad_clip=s.grad_clip,
        seed=seed,
        log_every=max(1, s.steps // 50),
    )


def candidates(s, profile: str, task: str) -> list:
    """The run ``s`` at every learning rate × weight decay of the profile's :data:`TUNING` grid."""
    grid = by_profile(TUNING, profile)
    if grid is None:
        return [s]
    return [replace(s, lr=lr, weight_decay=wd) for lr in grid[task]["lr"] for wd in grid[task]["weight_decay"]]


TUNE_SEED = 0  # the seed every kind's rate is chosen on, fixed before any run is looked at


def tuned(task: str, s, profile: str, seed: int) -> Spec | Chosen:
    """The ``task``'s run ``s`` on ``seed`` at the learning rate and weight decay chosen for its kind: where the
    profile has a :data:`TUNING` grid, the point whose run of the profile's base run of ``s``'s kind on seed
    :data:`TUNE_SEED` has the highest in-distribution score (:data:`SCORES`, never the held-out one), chosen among
    those runs once they are finished (:class:`~ponder.runner.specs.Chosen`); else ``s`` at its own."""
    trainer = f"hyla.train_{task}"
    if by_profile(TUNING, profile) is None:
        return task_spec(task, s, profile, seed, trainer)
    base = replace(SETUPS[task](profile), kind=s.kind)
    grid = candidates(base, profile, task)
    among = tuple(task_spec(task, c, profile, TUNE_SEED) for c in grid)
    points = tuple((c.lr, c.weight_decay) for c in grid)
    at_best = partial(at_best_score, task, s, profile, seed, trainer, points)
    changed = "".join(
        f" {k}={v}" for k, v in asdict(s).items() if v != getattr(base, k) and k not in ("lr", "weight_decay")
    )
    return Chosen(among, at_best, f"hyla/{task}/{s.kind}{changed}, seed {seed}, at the rate chosen on seed {TUNE_SEED}")


def at_best_score(task: str, s, profile: str, seed: int, trainer: str, points, metrics: list[dict]) -> Spec:
    """The ``task``'s run ``s`` at the point of ``points`` (``(lr, weight decay)``) whose run's ``metrics`` (in the
    same order) have the highest in-distribution score (:data:`SCORES`); the first of equals."""
    scores = {point: m[SCORES[task]] for point, m in zip(points, metrics, strict=True)}
    lr, weight_decay = max(scores, key=scores.get)
    return task_spec(task, replace(s, lr=lr, weight_decay=weight_decay), profile, seed, trainer)


def task_spec(task: str, s, profile: str, seed: int = 0, trainer: str | None = None) -> Spec:
    """One sraven or fuzzy-logic model at the learning rate and weight decay of ``s``, declared (its training:
    :data:`RECIPES`); ``trainer`` names it in the time records (default: ``hyla.train_<task>_once``)."""
    config = {**asdict(s), "train": train_config(s, seed).as_dict()}
    trainer = trainer or f"hyla.train_{task}_once"
    return Spec(f"hyla/{task}/{s.kind}", config, profile, (__name__,), RECIPES[task], trainer, True, True)


# -- sraven ---------------------------------------------------------------------------------
def sraven_setup(profile: str, **changes) -> Sraven:
    """The profile's sraven run with ``changes`` (kind, k, depth, width, steps, ...)."""
    return replace(by_profile(SRAVEN, profile), **changes)


def training_loss(s, loss_fn):
    """The loss a run ``s`` trains with: ``loss_fn``, compiled where ``s.compiled``
    (:mod:`ponder.runner.gpu.compilation`)."""
    return compiled(loss_fn) if s.compiled else loss_fn


def in_context_model(s, in_dim: int, out_dim: int, length: int, width: int = 1) -> InContextTransformer:
    """The sraven / fuzzy-logic model of run ``s`` (``width`` multiplies dim and heads)."""
    return InContextTransformer(
        in_dim,
        out_dim,
        length,
        dim=s.dim * width,
        heads=s.heads * width,
        depth=s.depth,
        kind=s.kind,
        head_dim=s.head_dim,
        score_dropout=s.code_dropout,
        relative_position=s.relative_position,
        init=s.init,
        relative_buckets=s.relative_buckets,
    )


def sraven_model(s: Sraven) -> InContextTransformer:
    return in_context_model(s, s.f, s.f, 9 * s.k, s.width)


def sraven_loss(model, batch) -> torch.Tensor:
    """Cross-entropy of the ``K`` answer features, averaged."""
    x, target = batch
    logits = sraven.answer_logits(model(x), target.shape[1])
    return F.cross_entropy(logits.flatten(0, 1), target.flatten())


def sraven_sets(s: Sraven, seed: int) -> dict[str, tuple]:
    """Fixed evaluation sets: in-distribution (a seed unlike training's) and held-out combinations
    (the split of the run ``seed``)."""
    train, held = sraven.split(s.k, s.holdout, seed)
    return {
        name: sraven.dataset_tokens(sraven.dataset(s.eval_n, combos, s.f, seed=10_000 + 7 * seed + i), s.f)
        for i, (name, combos) in enumerate((("id", train), ("ood", held)))
    }


@torch.no_grad()
def predict(model, x: torch.Tensor, chunk: int = 512) -> torch.Tensor:
    """Model outputs for ``x`` in chunks, on the model's device, returned on the CPU."""
    device = next(model.parameters()).device
    return torch.cat([model(x[i : i + chunk].to(device)).cpu() for i in range(0, len(x), chunk)])


def sraven_scores(model, s: Sraven, seed: int) -> dict:
    """All-features-correct and per-feature accuracy and loss on each evaluation set."""
    out = {}
    for name, (x, target) in sraven_sets(s, seed).items():
        logits = predict(model, x)
        answer = sraven.answer_logits(logits, s.k)
        out[f"{name}_acc"] = sraven.all_correct(logits, target).float().mean().item()
        out[f"{name}_feature_acc"] = (answer.argmax(-1) == target).float().mean().item()
        out[f"{name}_loss"] = F.cross_entropy(answer.flatten(0, 1), target.flatten()).item()
    return out


def sraven_recipe(config: dict) -> Recipe:
    """How a sraven run of ``config`` (:func:`task_spec`) trains: fresh instances of the training combinations
    of its seed's split each step; scored on fixed in-distribution and held-out sets (:func:`sraven_scores`)."""
    s, cfg = setup_of(Sraven, config), TrainConfig(**config["train"])
    train_combos, _ = sraven.split(s.k, s.holdout, cfg.seed)

    def batches(step):
        return sraven.batch(s.batch_size, train_combos, s.f, seed=cfg.seed * 1_000_003 + step)

    def evaluate(model):
        return sraven_scores(model, s, cfg.seed)

    return Recipe(lambda: sraven_model(s), training_loss(s, sraven_loss), batches, cfg, evaluate)


def setup_of(cls, config: dict):
    """The run description (:class:`Sraven`, :class:`Fuzzy`, :class:`Text`) a run's ``config`` holds."""
    return cls(**{k: v for k, v in config.items() if k != "train"})


def train_sraven(s: Sraven, profile: str, seed: int = 0):
    """Train (or load) the sraven model of ``s`` at the rate chosen for its kind by in-distribution accuracy
    (:func:`tuned`); metrics hold ``id_acc``, ``ood_acc`` and the loss history."""
    return tuned("sraven", s, profile, seed)()


def train_sraven_once(s: Sraven, profile: str, seed: int = 0):
    """Train (or load) one sraven model at the learning rate and weight decay of ``s`` (:func:`task_spec`)."""
    return task_spec("sraven", s, profile, seed)()


# -- fuzzy logic ----------------------------------------------------------------------------
def fuzzy_setup(profile: str, **changes) -> Fuzzy:
    return replace(by_profile(FUZZY, profile), **changes)


def fuzzy_model(s: Fuzzy) -> InContextTransformer:
    return in_context_model(s, s.n_vars + 1, 1, s.length)


def fuzzy_loss(model, batch) -> torch.Tensor:
    """Mean-squared error of the query's prediction."""
    seq, target, _ = batch
    return F.mse_loss(model(seq)[:, -1, 0], target)


def fuzzy_sets(s: Fuzzy, seed: int) -> dict[str, tuple]:
    """Fixed evaluation sets: ``train`` tasks, ``test`` (held-out combinations), ``unknown`` terms
    (the split of the run ``seed``)."""
    split = fuzzy.split(s.n_vars, s.n_terms, s.frac_test, seed=seed)
    return {
        name: fuzzy.dataset_tokens(
            fuzzy.dataset(s.eval_n, split[name], s.n_vars, s.length, seed=20_000 + 7 * seed + i), s.n_vars
        )
        for i, name in enumerate(split)
    }


def fuzzy_scores(model, s: Fuzzy, seed: int) -> dict:
    """Mean per-sequence R² (and MSE) on each evaluation set, with the R² of two trivial
    predictions there: the context mean (``<set>_r2_context_mean``) and the training tasks'
    average function at the query (``<set>_r2_task_average``: no in-context learning)."""
    train_tasks = fuzzy.split(s.n_vars, s.n_terms, s.frac_test, seed=seed)["train"]
    out = {}
    for name, (seq, target, y) in fuzzy_sets(s, seed).items():
        prediction = predict(model, seq)[:, -1, 0]
        out[f"{name}_r2"] = fuzzy.r2(prediction, y).mean().item()
        out[f"{name}_r2_context_mean"] = fuzzy.r2(fuzzy.context_mean(y), y).mean().item()
        out[f"{name}_r2_task_average"] = (
            fuzzy.r2(fuzzy.task_average(seq[:, -1, : s.n_vars].numpy(), train_tasks, s.n_vars), y).mean().item()
        )
        out[f"{name}_mse"] = F.mse_loss(prediction, target).item()
    return out


def fuzzy_recipe(config: dict) -> Recipe:
    """How a fuzzy-logic run of ``config`` (:func:`task_spec`) trains: fresh sequences of the training term
    combinations of its seed's split each step; scored by R² on each evaluation set (:func:`fuzzy_scores`)."""
    s, cfg = setup_of(Fuzzy, config), TrainConfig(**config["train"])
    combos = fuzzy.split(s.n_vars, s.n_terms, s.frac_test, seed=cfg.seed)["train"]

    def batches(step):
        return fuzzy.batch(s.batch_size, combos, s.n_vars, s.length, seed=cfg.seed * 1_000_003 + step)

    def evaluate(model):
        return fuzzy_scores(model, s, cfg.seed)

    return Recipe(lambda: fuzzy_model(s), training_loss(s, fuzzy_loss), batches, cfg, evaluate)


def train_fuzzy(s: Fuzzy, profile: str, seed: int = 0):
    """Train (or load) the fuzzy-logic model of ``s`` at the rate chosen for its kind by R² on training tasks
    (:func:`tuned`); metrics hold ``test_r2`` (the paper's OOD R²)."""
    return tuned("fuzzy", s, profile, seed)()


def train_fuzzy_once(s: Fuzzy, profile: str, seed: int = 0):
    """Train (or load) one fuzzy-logic model at the learning rate and weight decay of ``s`` (:func:`task_spec`)."""
    return task_spec("fuzzy", s, profile, seed)()


RECIPES = {"sraven": sraven_recipe, "fuzzy": fuzzy_recipe}  # how each in-context task's runs train
SCORES = {"sraven": "id_acc", "fuzzy": "train_r2"}  # the in-distribution score a kind's rate is chosen by
SETUPS = {"sraven": sraven_setup, "fuzzy": fuzzy_setup}  # each task's profile row


# -- language modelling (stand-in for C4) ----------------------------------------------------
def text_setup(profile: str, **changes) -> Text:
    return replace(by_profile(TEXT, profile), **changes)


def lm_loss(model, tokens: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Next-byte cross-entropy (nats per byte)."""
    return F.cross_entropy(model(tokens).flatten(0, 1), target.flatten())


def text_run(s: Text, profile: str, seed: int = 0) -> Spec:
    """One language model, declared (its training: :func:`text_recipe`)."""
    config = {key: value for key, value in asdict(s).items() if key != "compiled" or value}
    config["train"] = train_config(s, seed).as_dict()
    return Spec(f"hyla/text/{s.kind}", config, profile, (__name__,), text_recipe, "hyla.train_text", True)


def text_recipe(config: dict) -> Recipe:
    """How a language model of ``config`` (:func:`text_run`) trains; its metrics hold ``valid`` =
    ``[{"step", "loss"}]`` every ``eval_every`` steps (the validation curve) besides the training-loss history.

    The step travels in the batch so that the loss function can evaluate on the fixed validation
    windows at the right steps (in Python, around the loss that ``s.compiled`` compiles); a run resumed
    from a checkpoint keeps only the later points.
    """
    s, cfg = setup_of(Text, config), TrainConfig(**config["train"])
    data = text.splits()
    valid = text.windows(data["valid"], s.eval_n, s.length, seed=30_000 + cfg.seed)
    curve: list[dict] = []
    train_loss = training_loss(s, lm_loss)

    @torch.no_grad()
    def validate(model) -> float:
        was_training = model.training
        model.eval()
        device = next(model.parameters()).device
        loss = lm_loss(model, valid[0].to(device), valid[1].to(device)).item()
        model.train(was_training)
        return loss

    def loss_fn(model, batch):
        tokens, target, step = batch
        if int(step[0]) % s.eval_every == 0:
            curve.append({"step": int(step[0]), "loss": validate(model)})
        return train_loss(model, tokens, target)

    def batches(step):
        tokens, target = text.windows(data["train"], s.batch_size, s.length, seed=cfg.seed * 1_000_003 + step)
        return tokens, target, torch.full((s.batch_size,), step)

    def make():
        return CausalLM(text.VOCAB, s.length, dim=s.dim, heads=s.heads, depth=s.depth, kind=s.kind)

    def evaluate(model):
        return {"valid": curve + [{"step": s.steps, "loss": validate(model)}]}

    return Recipe(make, loss_fn, batches, cfg, evaluate)


def train_text(s: Text, profile: str, seed: int = 0):
    """Train (or load) one language model (:func:`text_run`); ``(model, metrics)``."""
    return text_run(s, profile, seed)()


# -- which runs each target needs -------------------------------------------------------------
def sweeps(profile: str) -> dict:
    return by_profile(SWEEPS, profile)


def scaling_setups(profile: str) -> list[dict]:
    """hyla-4: ``{"panel", "kind", "width", "depth", "setup"}`` for OOD accuracy vs instances."""
    base, sw = sraven_setup(profile), sweeps(profile)
    rows = []
    for kind in MAIN_KINDS:
        for fraction in sw["fractions"]:
            steps = max(1, int(base.steps * fraction))
            rows += [
                {
                    "panel": "width",
                    "kind": kind,
                    "width": w,
                    "depth": base.depth,
                    "setup": sraven_setup(profile, kind=kind, width=w, steps=steps),
                }
                for w in sw["widths"]
            ]
            rows += [
                {
                    "panel": "depth",
                    "kind": kind,
                    "width": 1,
                    "depth": d,
                    "setup": sraven_setup(profile, kind=kind, depth=d, steps=steps),
                }
                for d in sw["depths"]
            ]
    return rows


def heads_setup(profile: str, kind: str, heads: int) -> Sraven:
    """The base sraven run with ``heads`` heads at the same total query/key/value width."""
    base = sraven_setup(profile, kind=kind)
    return replace(base, heads=heads, head_dim=base.heads * base.head_dim // heads)


def seeds_of(profile: str, seed: int = 0) -> tuple[int, ...]:
    """The seeds of the judged comparisons: ``seed`` plus the profile's ``seeds`` offsets."""
    return tuple(seed + offset for offset in sweeps(profile)["seeds"])


def fuzzy_drop_setups(profile: str) -> list[Fuzzy]:
    """hyla-2's drop: every kind at the largest ``N``, at the lowest and the highest held-out fraction."""
    sw = sweeps(profile)
    return [
        fuzzy_setup(profile, kind=kind, length=max(sw["lengths"]), frac_test=frac)
        for kind in MAIN_KINDS
        for frac in (min(sw["frac_tests"]), max(sw["frac_tests"]))
    ]


def fuzzy_grid(profile: str) -> list[Fuzzy]:
    """hyla-2 (C): every (kind, N, held-out fraction)."""
    sw = sweeps(profile)
    return [
        fuzzy_setup(profile, kind=kind, length=n, frac_test=frac)
        for kind in MAIN_KINDS
        for n in sw["lengths"]
        for frac in sw["frac_tests"]
    ]
