"""How many learners a token needs after phase I (acm-5): the distillation errors of a settled phase I, the share of
tokens per number of learners, and acm-5's rows stated from them.

Nothing here trains a run it does not find in :mod:`ponder.studies.acm`, so nothing here is part of a run's cache
key: an edit retrains no run."""

import torch

from .... import exact
from ....ledger.verdicts import Claim, above, unconverged
from ....models.acm_phases import GATING_ERROR_FACTOR, capture, distances, gate_labels
from ..phases import base_model, settled_phase1, test_set


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
