"""Halting at convergence: a Universal Transformer that stops an example once its state stops moving.

A worked example of a method of one's own (:mod:`ponder.studies.survey.methods`). The UT applies one shared block
``T`` times; ACT learns when to stop. Here nothing is learned about stopping: an example halts at the
first step whose CLS state moved by less than ``tolerance`` relative to its size, the fixed-point
reading of a recurrent block (if the state no longer changes, more steps add nothing)::

    moved_t = ||h_t[CLS] - h_{t-1}[CLS]|| / ||h_{t-1}[CLS]||,    halt at the first t with moved_t < tolerance

Training runs the rule too, so the block learns with the depth it will be used at. The claims set it
beside UT+ACT on C-PVR: fewer steps on the training hops, and accuracy beyond them.
"""

import torch
from torch import nn

from ....ledger import verdicts
from ....ledger.verdicts import Claim
from ....models.act import Pondered
from ....models.kinds import build
from ....profiles import by_profile
from ....runner.specs import Recipe, Spec
from ...hyper_ut import cpvr as hyper_ut
from .. import cpvr as survey

TOLERANCE = 0.05
TARGET = "mine-1"  # a target id of one's own: its rows sort apart from the papers' in the ledger
TRAINER = "methods.converged.train"  # what its runs' times are recorded under (figures/TIMES.json)


class ConvergedDepth(nn.Module):
    """Run ``core``'s steps until each example's CLS state moves by less than ``tolerance`` (relative), at most
    ``core.max_steps``: ``h`` ``[B, L+1, D]`` -> :class:`Pondered` with ``steps`` ``[B]`` and no ponder cost."""

    def __init__(self, tolerance: float = TOLERANCE):
        super().__init__()
        if tolerance <= 0:
            raise ValueError(f"tolerance={tolerance} must be > 0")
        self.tolerance = tolerance

    def forward(self, core: nn.Module, h: torch.Tensor) -> Pondered:
        running = torch.ones(h.shape[0], dtype=torch.bool, device=h.device)
        steps = torch.zeros(h.shape[0], device=h.device)
        for t in range(core.max_steps):
            new = core.step(h, t)
            moved = (new[:, 0] - h[:, 0]).norm(dim=-1) / h[:, 0].norm(dim=-1).clamp_min(1e-6)
            steps = steps + running.float()
            h = torch.where(running[:, None, None], new, h)  # a halted example keeps its state
            running = running & (moved >= self.tolerance)
        return Pondered(h, steps, torch.zeros_like(steps))


def recipe(config: dict) -> Recipe:
    """How a run of :func:`run` trains: the UT of ``config`` with :class:`ConvergedDepth` at ``config["tolerance"]``,
    on C-PVR as every survey model (:func:`ponder.studies.survey.cpvr.cpvr_recipe`), without a ponder cost."""

    def make() -> nn.Module:
        model = build("ut", config["length"], config["model"])
        model.depth = ConvergedDepth(config["tolerance"])
        return model

    return survey.cpvr_recipe(config, make, hyper_ut.loss_fn(0.0))


def run(profile: str, seed: int = 0) -> Spec:
    """The UT with :class:`ConvergedDepth` on C-PVR at the Hyper-UT notebooks' sizes, declared."""
    return survey.survey_spec("converged", profile, seed, recipe, TRAINER, {"tolerance": TOLERANCE}, code=__name__)


def train(profile: str, seed: int = 0):
    """Train (or load) :func:`run`; ``(model, metrics)``."""
    return run(profile, seed)()


def claims(profile: str, seed: int = 0, seeds: tuple[int, ...] | None = None) -> list[Claim]:
    """Its rows beside UT+ACT, paired by seed (the profile's C-PVR seeds, or ``seeds``): fewer mean steps on the
    training hops, and a higher mean accuracy beyond them."""
    sizes = by_profile(hyper_ut.SIZES, profile)
    train_max = max(sizes["train_hops"])
    mine, act = {}, {}
    for s in seeds if seeds is not None else sizes["seeds"]:
        mine[s] = train(profile, seed + s)[1]
        act[s] = hyper_ut.train_cpvr("ut_act", profile, seed + s, tune_seed=seed)[1]  # hut-3's runs

    def mean(metrics: dict, what: str, inside: bool) -> float:
        values = [v for h, v in metrics[what].items() if (int(h) <= train_max) == inside]
        return sum(values) / len(values)

    steps = {name: [mean(m, "steps", True) for m in runs.values()] for name, runs in (("mine", mine), ("act", act))}
    ood = {name: [mean(m, "accuracy", False) for m in runs.values()] for name, runs in (("mine", mine), ("act", act))}

    def claim(text: str, what: dict[str, list[float]], mine_larger: bool) -> Claim:
        """``text`` on the per-seed values ``what`` (``mine``, ``act``): this method's above UT+ACT's, or below."""
        larger, smaller = (what["mine"], what["act"]) if mine_larger else (what["act"], what["mine"])
        ours = f"{sum(what['mine']) / len(mine):.2f} vs {sum(what['act']) / len(act):.2f}"
        return Claim(TARGET, text, ours=ours, verdict=verdicts.greater(larger, smaller), kind="method claim")

    return [
        claim("halting at convergence uses fewer steps on the training hops than UT+ACT", steps, mine_larger=False),
        claim("halting at convergence is more accurate beyond the training hops than UT+ACT", ood, mine_larger=True),
    ]
