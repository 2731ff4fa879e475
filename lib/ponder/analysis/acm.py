"""ACM analysis: how many learners a token needs after phase I (acm-5), acm-3/acm-4's points over seeds and
leads over the baselines, acm-8's diversities."""

import numpy as np
import torch

from ..models.acm_phases import GATING_ERROR_FACTOR, gate_labels
from .verdicts import Estimate


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
            for n in map(learners_needed, (e.sqrt() for e in errors))
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
