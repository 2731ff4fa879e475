"""ACM's methods compared: the trained runs of :mod:`ponder.studies.acm` read as the claims read them: acm-3/acm-4's
points per method and their leads over the baselines, the realised budgets, where the gates spend (acm-1, acm-6,
acm-7), how many learners a token needs after phase I (acm-5) and the learning-rate grids' evidence; and the ledger
rows the ACM notebooks record, stated from those (``*_claims``). acm-8 and acm-10: :mod:`.ablations`; acm-9:
:mod:`.latency`.

Nothing here trains a run it does not find in :mod:`ponder.studies.acm`, so nothing here is part of a run's cache
key (:func:`ponder.runner.runs.import_closure`): an edit retrains no run."""

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from .... import exact
from ....ledger.tuning import describe_choices
from ....ledger.verdicts import Claim, Estimate, Verdict, above, every, greater, unconverged
from ....models import acmize as acmize_lib
from ....models.acm_phases import GATING_ERROR_FACTOR, capture, distances, gate_labels
from ....tasks import images
from ..baselines import avit_depths
from ..phases import TEST_COPIES, base_model, budgets, scene, seeds, settled_phase1, sizes, test_set
from ..tuning import (
    METHODS,
    TUNE_SEED,
    TUNING_BUDGET,
    acm_model,
    chosen_lr,
    dense,
    early_exits,
    grid,
    halting,
    lr_scores,
    moefied,
)

# the score of an ACM learning-rate grid (:func:`lr_choices`) and the digits the ledger shows it to
# (:func:`ponder.ledger.tuning.describe_choices`)
LR_SCORES = {"validation": 2}


def learners_needed(d: torch.Tensor, factor: float = GATING_ERROR_FACTOR) -> torch.Tensor:
    """``d [..., N]`` distances of ``h(z, k)`` to the replaced module, ``k = 1..N`` (or any positive
    multiple of them: the test is a ratio) -> ``[...]`` learners a token needs, ``1..N``: those
    before the first ``n ≥ 2`` that no longer helps (``factor · d(n) ≥ d(n − 1)``), all ``N`` when
    each helps. Phase II's label (:func:`ponder.models.acm_phases.gate_labels`) names that first
    learner instead, one more than the token needs, which is not what the paper reads off its figure."""
    never_helps = torch.cat([d, d[..., -1:]], -1)  # a learner N + 1 that never helps: the label is then at most N + 1
    return gate_labels(never_helps, factor) - 1


def learner_shares(errors: list[torch.Tensor], learners: int = 4) -> torch.Tensor:
    """acm-5: per seed, the share of tokens that need ``0..learners`` learners (:func:`learners_needed`), from each
    seed's ``[tokens, learners]`` distillation MSEs (their root: distances up to a scale): ``[seeds, learners + 1]``."""
    return torch.stack(
        [
            torch.bincount(n, minlength=learners + 1)[: learners + 1].float() / len(n)
            for n in map(learners_needed, map(exact.sqrt, errors))
        ]
    )


def mean_points(per_seed: list[list[tuple[float, float]]]) -> list[tuple[float, float, float, float]]:
    """Point by point over seeds (the same setting at each index): ``(cost, quality, cost s.e., quality s.e.)``
    (s.e. 0 for one seed)."""
    out = []
    for same in zip(*per_seed):
        cost, quality = (Estimate.of(values) for values in zip(*same))
        out.append((cost.mean, quality.mean, 0.0 if cost.n < 2 else cost.se, 0.0 if quality.n < 2 else quality.se))
    return out


def best_at(cost: float, points: list[tuple[float, float]]) -> float:
    """The best quality among ``points (cost, quality)`` costing at most ``cost``; ``nan`` if none is that cheap."""
    return max([q for c, q in points if c <= cost], default=float("nan"))


def leads(ours: list[tuple[float, float]], others: list[tuple[float, float]]) -> list[float]:
    """For each of ``ours`` (sorted by cost): its quality minus the best of ``others`` at no more cost; ``nan``
    where no other point is that cheap (nothing to compare it with, not a lead over chance)."""
    return [q - best_at(c, others) for c, q in sorted(ours)]


def compared(lead: np.ndarray) -> list[int]:
    """The columns of ``lead [seed, point]`` (:func:`leads` per seed) that have a point to compare on every seed."""
    return [i for i in range(lead.shape[1]) if np.isfinite(lead[:, i]).all()]


def tradeoff(profile: str, seed: int = 0, task: str = "digits") -> dict[str, list[tuple[float, float]]]:
    """acm-3 (digits) or acm-4 (speech) for one seed: ``{method: [(MMACs, accuracy), ...]}``: ACM at each of
    :func:`budgets`, MoEfication at each top-k, on the digits A-ViT at each target depth and ZTW at each
    threshold, the ``base`` model and it fine-tuned densely for the same steps (``dense, fine-tuned``,
    :func:`~ponder.studies.acm.tuning.dense`)."""
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
    return methods | {
        "dense, fine-tuned": [point(dense(profile, seed, task)[1])],
        "base": [point(base_model(profile, seed, task)[1])],
    }


def realised_betas(profile: str, seed: int = 0, task: str = "digits"):
    """The realised compute fraction at evaluation (arg-max gates) of every phase-III model of ``task``: a DataFrame
    with a row per seed of :func:`seeds` and target of :func:`budgets` (columns ``seed``, ``target``, ``realised``)."""
    return pd.DataFrame(
        [
            {"seed": s, "target": b, "realised": acm_model(profile, b, s, task=task)[1]["beta"]}
            for s in seeds(profile, seed)
            for b in budgets(profile, task)
        ]
    )


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
    profile: str, seed: int = 0, module: str | None = None, images_: int = 64, warm_start: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """acm-5: per-token MSE of ``h(z, k)``, ``k = 1..N``, after :func:`settled_phase1` for one MLP (default: the
    second-to-last block's), on test images; also the phase-II labels (learners needed, ``2..N``)
    of those tokens."""
    base, _ = base_model(profile, seed)
    model, _ = settled_phase1(profile, seed, warm_start)
    module = module or f"blocks.{len(base.blocks) - 2}.mlp"
    x, _ = test_set(profile)
    z, target = capture(base, [module], x[:images_].to(next(base.parameters()).device))[module]
    d = distances(model.get_submodule(module), z, target).flatten(0, 1).cpu()  # [tokens, N]
    return d.pow(2) / target.shape[-1], gate_labels(d)


@torch.no_grad()
def lr_choices(profile: str, task: str = "digits") -> pd.DataFrame:
    """Per method of acm-3 or acm-4: the validation score at each rate of the grid (columns ``validation <lr>``) and the
    rate chosen (``chosen``), for :func:`ponder.ledger.tuning.describe_choices`."""
    rows = [
        {"method": method, **{f"validation {lr:g}": v for lr, v in lr_scores(method, profile, task).items()}}
        | {"chosen": chosen_lr(method, profile, task)}
        for method in METHODS[task]
    ]
    return pd.DataFrame(rows).set_index("method")


def describe_tuning(profile: str, task: str = "digits") -> str:
    """The learning rates of acm-3's (``digits``) or acm-4's (``speech``) methods in one line for the ledger: the grid
    and each choice with its validation scores (:func:`lr_choices`); with one rate, that every method trains at it;
    without a grid, each method's own rate."""
    rates = grid(profile, task)
    if len(rates) > 1:
        return describe_choices(lr_choices(profile, task), LR_SCORES)
    if rates:
        return f"every method at {rates[0]:g}, not tuned"
    return "not tuned, each method at its own rate: " + ", ".join(
        f"{method} {chosen_lr(method, profile, task):g}" for method in METHODS[task]
    )


def _tuning_claim(target: str, examples: str, described: str) -> Claim:
    """``target``'s row describing the learning rates (``described``: :func:`describe_tuning`), each chosen on a
    validation set of ``examples``."""
    return Claim(
        target,
        f"every method at the learning rate of the grid with the best score on a validation set of {examples} "
        f"(seed {TUNE_SEED}; ACM at beta={TUNING_BUDGET}; describes the tuning: rate chosen, validation accuracy per "
        "rate)",
        described,
        None,
    )


def _front(lead: np.ndarray, budgets: list[float]) -> tuple[list[int], str, list[Verdict]]:
    """The budgets of ``lead [seed, budget]`` (:func:`leads` per seed) compared on every seed (:func:`compared`), the
    smallest mean lead over them for the ledger, and per budget compared the verdict that ACM leads there."""
    judged = compared(lead)
    least = f"min mean lead {lead[:, judged].mean(0).min():+.3f} over beta={', '.join(str(budgets[i]) for i in judged)}"
    return judged, least, [above(lead[:, i], 0) for i in judged]


def pareto_claims(
    lead: np.ndarray, budgets: list[float], base: dict[str, str], tuning: str, realised: pd.Series
) -> list[Claim]:
    """acm-3's rows. ``lead [seed, budget]``: per seed, each ACM budget's accuracy minus the best other method's at no
    more MACs (:func:`leads`, cheapest budget first, ``budgets`` in that order); ``base``: the base models that did not
    finish learning (:func:`ponder.ledger.convergence.unfinished`), which make the judged rows inconclusive.
    ACM is on the front (it leads at every budget compared) and leads most at the lowest budget compared (its lead
    there above its lead at each other budget compared, per seed); then
    described: the learning rates (``tuning``, :func:`describe_tuning`) and the realised compute fraction per target
    (``realised``, a Series indexed by target)."""
    judged, least, front = _front(lead, budgets)
    low, high = judged[0], judged[-1]
    return [
        Claim(
            "acm-3",
            "ACM on the Pareto front of accuracy vs MACs (digits stand-in; the budgets some other point is as cheap "
            "as)",
            least,
            unconverged(every(front), base),
            paper="on the front",
        ),
        Claim(
            "acm-3",
            "ACM's lead over the baselines is largest at the lowest budget compared (digits stand-in)",
            f"lead {lead[:, low].mean():+.3f} at beta={budgets[low]} vs {lead[:, high].mean():+.3f} at {budgets[high]}",
            unconverged(every([greater(lead[:, low], lead[:, i]) for i in judged[1:]]), base),
            paper="largest below 12.5 GFLOPs",
        ),
        _tuning_claim("acm-3", "training digits", tuning),
        Claim(
            "acm-3",
            "realised compute fraction at evaluation (arg-max gates) per target, mean over seeds (describes)",
            ", ".join(f"{b}: {r:.2f}" for b, r in realised.items()),
            None,
        ),
    ]


def content_ratio(model: nn.Module, x: torch.Tensor, profile: str) -> float:
    """acm-1's and acm-6's measure: the mean per-patch compute (:func:`compute_maps`) of ``x``, the profile's test
    images, on digit patches (:func:`content_patches`) over that on background patches."""
    maps = compute_maps(model, x)
    content = content_patches(profile, maps.shape[-1])
    return (maps[content].mean() / maps[~content].mean().clamp_min(1e-9)).item()


def content_claims(ratios_low: list[float], ratio_mid: float) -> list[Claim]:
    """acm-1 and acm-6 from the mean per-patch compute on digit patches over that on background patches: per seed at
    beta=0.4 (``ratios_low``), judged above 1; the first seed's at beta=0.6 (``ratio_mid``), described."""
    return [
        Claim(
            "acm-1",
            "compute goes to the content, not the background (mean per-patch compute on digit patches / on background "
            "patches, beta=0.4, digits stand-in)",
            f"{np.mean(ratios_low):.2f}x",
            above(ratios_low, 1.0),
            paper="qualitative",
        ),
        Claim(
            "acm-6",
            "compute maps at beta=0.6: content / background compute (describes what is seen, digits stand-in)",
            f"{ratio_mid:.2f}x",
            None,
        ),
    ]


def _needing(shares: torch.Tensor) -> str:
    """The mean shares of tokens that need 2-3 and fewer than 4 learners, from ``shares [seed, 0..4 learners]``."""
    return f"{shares[:, 2:4].sum(1).mean().item():.0%} need 2-3; {shares.mean(0)[:4].sum().item():.0%} need <4"


def learners_needed_claims(
    random: torch.Tensor, warm: torch.Tensor | None, settled: dict[str, str], seed: int
) -> list[Claim]:
    """acm-5's rows from :func:`learner_shares`' ``[seed, 0..4 learners]`` after phase I from random learners
    (``random``, the paper's start) and from our warm start (``warm``, on the first seed ``seed``; ``None`` where the
    profile does not count it). Most tokens need 2-3 of the 4 learners from random learners (the per-seed share
    above one half; inconclusive where a phase I of ``settled``, :func:`ponder.ledger.convergence.unfinished`, did
    not finish learning); the same count from the warm start, described."""
    rows = [
        Claim(
            "acm-5",
            "most tokens need only 2-3 of 4 learners after phase I (random learners, phase I to its plateau; the "
            "learners before the first that no longer helps, digits stand-in)",
            _needing(random),
            unconverged(above(random[:, 2:4].sum(1).tolist(), 0.5), settled),
            paper="most tokens",
        )
    ]
    if warm is not None:
        rows.append(
            Claim(
                "acm-5",
                f"the same count after phase I from our warm start (the learners start from the replaced MLP; seed "
                f"{seed}, describes)",
                _needing(warm),
                None,
            )
        )
    return rows


def moefication_claims(lead: np.ndarray, budgets: list[float], base: dict[str, str], tuning: str) -> list[Claim]:
    """acm-4's rows. ``lead [seed, budget]``: per seed, each ACM budget's 1 - error minus the best MoEfication point's
    at no more MACs (:func:`leads`, cheapest budget first, ``budgets`` in that order); ``base``: the base models that
    did not finish learning (:func:`ponder.ledger.convergence.unfinished`), which make the judged row inconclusive.
    ACM leads at every budget compared; then the learning rates (``tuning``, :func:`describe_tuning`), described."""
    _, least, front = _front(lead, budgets)
    return [
        Claim(
            "acm-4",
            "ACM better than MoEfication at every budget a MoEfication point is as cheap as (1 - error at no more "
            "MACs, eSpeak NG stand-in for CommonVoice)",
            least,
            unconverged(every(front), base),
            paper="lower WER at every budget",
        ),
        _tuning_claim("acm-4", "training utterances", tuning),
    ]


def speech_frame_claims(on_speech: list[float], on_silence: list[float]) -> list[Claim]:
    """acm-7's row from the mean learners per frame, per seed, on speech (``on_speech``) and on silence
    (``on_silence``): more on speech."""
    return [
        Claim(
            "acm-7",
            "compute goes to the speech, not the silence (mean learners per frame, beta=0.25, eSpeak NG stand-in)",
            f"{np.mean(on_speech):.2f} vs {np.mean(on_silence):.2f}",
            greater(on_speech, on_silence),
            paper="qualitative",
        )
    ]
