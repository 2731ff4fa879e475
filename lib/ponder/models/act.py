"""Adaptive Computation Time (Graves 2016), as used by Universal Transformers (Dehghani et al. 2018).

A step function is applied again and again to a state; after every step a *halting unit* says
how likely it is that the computation is done, and the computation stops once those
probabilities add up to almost one. With ``s^n`` the state after step ``n`` (``s^0`` the input),

    p^n  = sigmoid(w . pool(s^n) + b)                            halting probability of step n
    N    = min{ n' : sum_{n=1}^{n'} p^n >= 1 - eps }              number of steps (capped at N_max)
    R    = 1 - sum_{n=1}^{N-1} p^n                                the remainder
    w^n  = p^n for n < N,    w^N = R,    w^n = 0 for n > N        halting weights, sum_n w^n = 1
    y    = sum_n w^n s^n                                          the output: a mix of the states
    rho  = N + R                                                  the ponder cost

``N`` is a constant for the gradient, so only ``R`` carries gradient: minimising ``tau * rho``
(the caller adds it to the task loss) pushes the probabilities of the steps before the last up,
that is towards halting earlier. ``R > eps > 0`` always: before the halting step the sum is
below ``1 - eps``. At ``n = N_max`` every example halts whatever its sum (Graves' eq. 6; the UT
paper's reference code does not force it, RobertCsordas/ndr notes this).

Two details where public implementations differ, and what this file does:

* The output is the *accumulated* mix ``y = sum_n w^n s^n`` of Graves, not UT's reference
  "basic" update ``y <- w s^n + (1 - w) y`` (which reweights earlier states at every step).
  The next step always reads the raw state ``s^n``, as in UT.
* ``p^n`` is read from the state ``s^n`` that step ``n`` produced (Graves), so a state that
  decides to halt is the state that is weighted.

**Levels.** ``level="example"``: the halting unit reads the state mean-pooled over tokens and
one decision covers the whole example (Hyper-UT generates weights per example, so its halting
must be per example too). ``level="token"``: every token of ``[B, T, D]`` halts on its own; the
ponder cost of an example is the mean of its tokens' ``N + R``. An example keeps stepping while
any of its tokens runs (its halted tokens keep being attended to, as in UT).

**Compaction.** ``compact=False`` runs every step on the whole batch and masks the halted
examples' weights to zero (what most code does). ``compact=True`` gathers the examples that
still run before each step and scatters their results back, so later steps cost only what the
active examples need: the same outputs, less time when examples halt at different steps.
``step_fn(state, n, index)`` gets the state ``[b, ...]`` of the active examples, the step
number ``n`` (0-based) and their batch indices ``index`` ``[b]`` (to gather per-example
parameters such as hypernetwork codes), and returns their next state.

**No reads from the host.** Ending the loop once every example has halted, and compaction, both
read a count back from the device. A CUDA graph records no such read and ``vmap`` allows none, so
while one is being captured, inside a :mod:`torch.func` transform, or with ``host_sync=False``, the
loop runs all ``max_steps`` steps on the whole batch:
an example that has halted gets ``w^n = 0`` at every later step, so the output, ``N``, ``R`` and
every gradient are those of the loop that stops, at the cost of the steps nobody needed.
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from ..checks import check_choice, check_int, check_positive

StepFn = Callable[[torch.Tensor, int, torch.Tensor], torch.Tensor]
LEVELS = ("example", "token")


class HaltingUnit(nn.Module):
    """``p = sigmoid(w . s + b)``: ``[..., dim] -> [...]`` halting probabilities.

    ``w`` starts at zero (as in Scenic's UT), so at initialisation every example halts with
    ``p = sigmoid(bias)`` per step, i.e. after about ``1 / sigmoid(bias)`` steps: a negative
    bias ("deep start", e.g. -3) starts deep; zero or Graves' positive bias starts shallow and
    is known to get stuck halting after one or two steps.
    """

    def __init__(self, dim: int, bias: float = -1.0):
        super().__init__()
        self.linear = nn.Linear(check_int("dim", dim, minimum=1), 1)
        nn.init.zeros_(self.linear.weight)
        nn.init.constant_(self.linear.bias, float(bias))

    def logit(self, state: torch.Tensor) -> torch.Tensor:
        """``w . s + b``, ``[..., dim] -> [...]`` (PonderNet works with these, in log space)."""
        return self.linear(state).squeeze(-1)

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.logit(state))


@dataclass
class Pondered:
    """What a depth loop returns (ACT here, a fixed depth, PonderNet's sampled halting, an early
    exit), and a classifier built on one (with its ``logits``); ``B`` examples, ``T`` tokens:

    * ``state``   — the output state, same shape as the input state (ACT: ``y = sum_n w^n s^n``);
    * ``steps``   — ``[B]`` the number of steps ``N`` each example used (ACT at ``level="token"``:
      ``[B, T]``); long from a depth loop, float in a classifier's output;
    * ``ponder``  — ``[B]`` the ponder cost ``N + R`` with gradient (mean over tokens for
      ``level="token"``); zero where nothing is pondered;
    * ``halting`` — ``[B, max_steps]`` halting weights ``w^n`` (or ``[B, T, max_steps]``); None
      without ACT;
    * ``logits``  — ``[B, C]`` a classifier's answer read off the state; None for a depth loop.
    """

    state: torch.Tensor
    steps: torch.Tensor
    ponder: torch.Tensor
    halting: torch.Tensor | None = None
    logits: torch.Tensor | None = None

    @property
    def example_steps(self) -> torch.Tensor:
        """``[B]`` steps each example ran (the most over its tokens for ``level="token"``)."""
        return self.steps if self.steps.dim() == 1 else self.steps.flatten(1).amax(dim=1)


def pooled(state: torch.Tensor) -> torch.Tensor:
    """``[B, ..., D] -> [B, D]``: the mean over every axis between batch and features."""
    return state.flatten(1, -2).mean(dim=1) if state.dim() > 2 else state


def capturing(state: torch.Tensor) -> bool:
    """Whether ``state`` is on a CUDA stream that is recording a graph (which allows no reads back)."""
    return state.is_cuda and torch.cuda.is_current_stream_capturing()


def transformed(state: torch.Tensor) -> bool:
    """Whether ``state`` is inside a :mod:`torch.func` transform (``vmap``, ``grad``): ``vmap``
    allows no reads back either (:mod:`ponder.runner.gpu.ensemble` trains seeds in one ``vmap``-ed step)."""
    return torch._C._functorch.is_functorch_wrapped_tensor(state)


def act(
    step_fn: StepFn,
    state: torch.Tensor,
    max_steps: int,
    halting_unit: nn.Module,
    eps: float = 0.01,
    level: str = "example",
    compact: bool = False,
    host_sync: bool = True,
) -> Pondered:
    """Run ``step_fn`` on ``state`` (``[B, ..., D]``) for up to ``max_steps`` steps with ACT halting.

    See the module docstring for the equations, the levels and what ``compact`` does; the loop
    ends early once every example has halted, in both modes, unless ``host_sync`` is off, a CUDA
    graph is being captured (:func:`capturing`) or ``state`` is inside a ``torch.func`` transform
    (:func:`transformed`): then it runs every step, masked, without compaction. The loop's own bookkeeping (the sum
    of ``p^n``, which decisions still run) covers the examples the state holds; what it returns
    covers the batch, and ``R`` is read off the halting weights at the end (``R = w^N``).
    """
    check_int("max_steps", max_steps, minimum=1)
    check_positive("eps", eps)
    if eps >= 1:
        raise ValueError(f"eps={eps} must be < 1")
    check_choice("level", level, LEVELS)
    if level == "token" and state.dim() != 3:
        raise ValueError(f"level='token' needs a [B, T, D] state, got shape {tuple(state.shape)}")
    batch, device = state.shape[0], state.device
    host_sync = host_sync and not capturing(state) and not transformed(state)
    decision_shape = (batch,) if level == "example" else tuple(state.shape[:2])

    def halting(s: torch.Tensor) -> torch.Tensor:
        return halting_unit(pooled(s) if level == "example" else s)

    index = torch.arange(batch, device=device)  # the batch indices of the examples ``state`` holds
    cumulative = state.new_zeros(decision_shape)  # theirs: sum of p^n so far
    running = torch.ones(decision_shape, dtype=torch.bool, device=device)  # theirs: not halted yet
    steps = torch.zeros(decision_shape, dtype=torch.long, device=device)  # the batch's: steps taken
    output = torch.zeros_like(state)
    weights = []
    for n in range(max_steps):
        state = step_fn(state, n, index)
        p = halting(state)  # [b] or [b, T]
        halts = running if n == max_steps - 1 else running & (cumulative + p >= 1 - eps)
        w = torch.where(halts, 1 - cumulative, torch.where(running, p, 0.0))
        output = output.index_add(0, index, state * w.reshape(w.shape + (1,) * (state.dim() - w.dim())))
        weights.append(state.new_zeros(decision_shape).index_copy(0, index, w))
        steps = steps.index_add(0, index, running.long())
        cumulative, running = cumulative + w, running & ~halts
        if not host_sync:
            continue
        active = running if level == "example" else running.any(dim=1)
        left = int(active.sum())
        if left == 0:
            break
        if compact and left < len(active):
            keep = active.nonzero().squeeze(1)
            index, state, cumulative, running = (t.index_select(0, keep) for t in (index, state, cumulative, running))
    weights += [state.new_zeros(decision_shape)] * (max_steps - len(weights))
    weights = torch.stack(weights, dim=-1)
    remainder = weights.gather(-1, (steps - 1).unsqueeze(-1)).squeeze(-1)  # R = w^N
    cost = steps + remainder
    return Pondered(output, steps, cost if level == "example" else cost.mean(dim=1), weights)
