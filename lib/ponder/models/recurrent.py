"""The parity model of ACT and PonderNet: a GRU cell that reads the same input at every step.

    h_0 = 0,    h_n = GRUCell(x, h_{n-1}),    logit = w_out . h + b_out

With ``halting="act"`` the answer is read from ACT's mix ``sum_n w^n h_n`` (:mod:`.act`); with
``halting="pondernet"`` every step answers and the halting distribution weighs the answers in
the loss, and at inference the halting step is sampled (:mod:`.pondernet`). The readout is
linear, so reading the mix of states equals mixing the per-step answers (Graves' output).
"""

import torch
from torch import nn

from ..checks import check_choice, check_int
from .act import HaltingUnit, Pondered, act
from .pondernet import Unrolled, sample_halting, unroll

HALTING = ("act", "pondernet")


class RecurrentPonderer(nn.Module):
    """``x`` ``[B, dim]`` -> one logit per example (binary task), halting by ACT or PonderNet."""

    def __init__(
        self, dim: int, hidden: int, max_steps: int, halting: str = "act", halting_bias: float = -1.0, eps: float = 0.01
    ):
        super().__init__()
        self.halting = check_choice("halting", halting, HALTING)
        self.max_steps, self.eps = check_int("max_steps", max_steps, minimum=1), eps
        self.hidden = check_int("hidden", hidden, minimum=1)
        self.cell = nn.GRUCell(check_int("dim", dim, minimum=1), hidden)
        self.halting_unit = HaltingUnit(hidden, bias=halting_bias)
        self.readout = nn.Linear(hidden, 1)

    def step_fn(self, x: torch.Tensor):
        """``step_fn(h, n, index)`` for :func:`act` / :func:`unroll`: the active rows read their input."""
        return lambda h, n, index: self.cell(x[index], h)

    def start(self, x: torch.Tensor) -> torch.Tensor:
        return x.new_zeros(x.shape[0], self.hidden)

    def act(self, x: torch.Tensor, compact: bool = False) -> tuple[torch.Tensor, Pondered]:
        """ACT pass: ``(logits [B], Pondered)``."""
        out = act(self.step_fn(x), self.start(x), self.max_steps, self.halting_unit, eps=self.eps, compact=compact)
        return self.readout(out.state).squeeze(-1), out

    def unroll(self, x: torch.Tensor) -> tuple[torch.Tensor, Unrolled]:
        """PonderNet training pass: ``(logits [B, N] of every step, Unrolled)``."""
        out = unroll(self.step_fn(x), self.start(x), self.max_steps, self.halting_unit)
        return self.readout(out.states).squeeze(-1), out

    @torch.no_grad()
    def predict(
        self, x: torch.Tensor, generator: torch.Generator | None = None, compact: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Inference: ``(logits [B], steps [B])``; PonderNet samples its halting step."""
        if self.halting == "act":
            logits, out = self.act(x, compact=compact)
            return logits, out.steps
        state, steps = sample_halting(
            self.step_fn(x), self.start(x), self.max_steps, self.halting_unit, generator, compact
        )
        return self.readout(state).squeeze(-1), steps
