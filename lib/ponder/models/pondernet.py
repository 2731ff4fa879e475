"""PonderNet (Banino, Balaguer, Blundell 2021): halting as a probability distribution over steps.

A step function runs ``N`` (= ``max_steps``) times; after every step a halting unit gives the
probability ``lambda_n`` of halting *at* that step, given that the net has not halted before:

    h_n      = step(h_{n-1}),      y_n = readout(h_n)
    lambda_n = sigmoid(w . pool(h_n) + b)   for n < N,     lambda_N = 1    (forced halt)
    p_n      = lambda_n prod_{j<n} (1 - lambda_j)                          halting distribution

``p`` is a proper distribution over ``1..N`` (``lambda_N = 1`` makes it sum to one). Training
runs all ``N`` steps and minimises

    L     = L_rec + beta * L_reg
    L_rec = sum_n p_n  loss(y, y_n)                       each step's loss, weighted by p
    L_reg = KL(p || p_G) = sum_n p_n (log p_n - log p_G(n))

against a geometric prior with parameter ``lambda_p`` (expected ``1/lambda_p`` steps),
truncated at ``N`` and renormalised so that it sums to one:

    p_G(n) = lambda_p (1 - lambda_p)^(n-1) / (1 - (1 - lambda_p)^N)

Two slips common in public code are avoided (and tested): ``torch.nn.functional.kl_div(log q,
p)`` computes ``KL(p || q)``, so ``kl_div(p.log(), p_G)`` is the *reverse* ``KL(p_G || p)``;
and an un-renormalised truncated prior does not sum to one. Everything is computed in log space
(``log lambda = logsigmoid(z)``, ``log (1 - lambda) = logsigmoid(-z)``), so no ``log 0``.

At inference the halting step is *sampled*: at step ``n`` the net halts with probability
``lambda_n`` and answers ``y_n``. Halted examples leave the batch (``compact=True``), so the
work done follows the steps really used.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_int
from .act import HaltingUnit, Pondered, StepFn, pooled
from .stopping import run_until_stopped


def log_halting_distribution(logits: torch.Tensor) -> torch.Tensor:
    """``[B, N]`` halting logits ``z_n`` -> ``[B, N]`` ``log p_n``, with ``lambda_N`` forced to 1.

    ``log p_n = log lambda_n + sum_{j<n} log(1 - lambda_j)``.
    """
    log_halt = F.logsigmoid(logits)
    log_halt = torch.cat([log_halt[:, :-1], torch.zeros_like(log_halt[:, -1:])], dim=1)
    log_continue = F.logsigmoid(-logits)
    not_halted_before = torch.cumsum(log_continue, dim=1) - log_continue  # exclusive cumsum
    return log_halt + not_halted_before


def log_geometric_prior(lambda_p: float, max_steps: int) -> torch.Tensor:
    """``[max_steps]`` ``log p_G(n)``: the geometric prior truncated at ``max_steps``, renormalised."""
    if not 0 < lambda_p <= 1:
        raise ValueError(f"lambda_p={lambda_p} must lie in (0, 1]")
    check_int("max_steps", max_steps, minimum=1)
    n = torch.arange(max_steps, dtype=torch.float64)
    log_p = torch.log(torch.tensor(lambda_p, dtype=torch.float64)) + n * torch.log1p(
        torch.tensor(-lambda_p, dtype=torch.float64)
    )
    return (log_p - torch.logsumexp(log_p, dim=0)).float()


def reconstruction_loss(log_p: torch.Tensor, step_losses: torch.Tensor) -> torch.Tensor:
    """``L_rec = mean_batch sum_n p_n loss_n`` from ``[B, N]`` ``log p`` and per-step losses."""
    return (log_p.exp() * step_losses).sum(dim=1).mean()


def kl_to_prior(log_p: torch.Tensor, lambda_p: float) -> torch.Tensor:
    """``L_reg = mean_batch KL(p || p_G)`` (the paper's direction) from ``[B, N]`` ``log p``."""
    log_prior = log_geometric_prior(lambda_p, log_p.shape[1]).to(log_p)
    return (log_p.exp() * (log_p - log_prior)).sum(dim=1).mean()


def expected_steps(log_p: torch.Tensor) -> torch.Tensor:
    """``[B]`` ``E_p[n] = sum_n n p_n`` (steps counted from 1)."""
    n = torch.arange(1, log_p.shape[1] + 1, device=log_p.device, dtype=log_p.dtype)
    return (log_p.exp() * n).sum(dim=1)


@dataclass
class Unrolled:
    """Training-time PonderNet pass: ``states`` ``[B, N, ...]`` (``h_1..h_N``), ``log_p`` ``[B, N]``."""

    states: torch.Tensor
    log_p: torch.Tensor


def unroll(step_fn: StepFn, state: torch.Tensor, max_steps: int, halting_unit: HaltingUnit) -> Unrolled:
    """Run all ``max_steps`` steps on the whole batch; per-example halting on the pooled state."""
    check_int("max_steps", max_steps, minimum=1)
    index = torch.arange(state.shape[0], device=state.device)
    states, logits = [], []
    for n in range(max_steps):
        state = step_fn(state, n, index)
        states.append(state)
        logits.append(halting_unit.logit(pooled(state)))
    return Unrolled(torch.stack(states, dim=1), log_halting_distribution(torch.stack(logits, dim=1)))


def sample_halting(
    step_fn: StepFn,
    state: torch.Tensor,
    max_steps: int,
    halting_unit: HaltingUnit,
    generator: torch.Generator | None = None,
    compact: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Inference: halt at step ``n`` with probability ``lambda_n``; return ``(h_halt, steps)``.

    ``h_halt`` is the state at each example's halting step (same shape as ``state``), ``steps``
    ``[B]`` long. The uniforms are drawn for the whole batch and every step up front (on the CPU,
    from ``generator``), so ``compact=True`` and ``compact=False`` give identical results.
    """
    uniforms = torch.rand(state.shape[0], max_steps, generator=generator).to(state.device)  # [B, N]

    def stops(h: torch.Tensor, n: int, index: torch.Tensor) -> torch.Tensor:
        return uniforms[index, n] < halting_unit(pooled(h))

    return run_until_stopped(step_fn, state, max_steps, stops, compact)


class PonderClassifier(nn.Module):
    """PonderNet over the steps of a :class:`ponder.models.classifier.Classifier`'s core (PonderNet-UT).

    Every step answers through the classifier's readout of the CLS state; ``forward(x,
    all_steps=True)`` gives ``(logits [B, N, C], log_p [B, N])`` for training, ``forward(x)`` samples
    the halting step (halted examples leave the batch) and returns a :class:`~ponder.models.act.Pondered`
    whose ``steps`` are the sampled steps. Draws come from a generator seeded with ``seed`` at every call,
    so evaluation is deterministic.
    """

    def __init__(self, classifier: nn.Module, dim: int, halting_bias: float = -1.0, seed: int = 0):
        super().__init__()
        self.embedding, self.core = classifier.embedding, classifier.core
        self.norm, self.head = classifier.norm, classifier.head
        self.halting_unit = HaltingUnit(dim, bias=halting_bias)
        self.seed, self.compact = seed, True

    def step_fn(self, h: torch.Tensor, n: int, index: torch.Tensor) -> torch.Tensor:
        return self.core.step(h, n)

    def forward(self, x: torch.Tensor, all_steps: bool = False):
        h = self.embedding(x)
        if all_steps:
            out = unroll(self.step_fn, h, self.core.max_steps, self.halting_unit)
            return self.head(self.norm(out.states[:, :, 0])), out.log_p
        generator = torch.Generator().manual_seed(self.seed)
        state, steps = sample_halting(self.step_fn, h, self.core.max_steps, self.halting_unit, generator, self.compact)
        steps = steps.float()
        return Pondered(state, steps, torch.zeros_like(steps), logits=self.head(self.norm(state[:, 0])))
