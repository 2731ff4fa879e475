"""Hard exits with real savings: run steps until each example decides to stop, then it leaves.

PonderNet's sampled halting and confidence-based early exit share one loop: after step ``n``
(0-based) a rule ``stops(state, n, index) -> [b] bool`` says which of the active examples stop
there (the last step stops everyone); each example keeps the state it stopped with. With
``compact=True`` the examples that stopped leave the batch, so later steps run on the active
examples only (gathered by ``index``, their batch indices); with ``compact=False`` every step
runs on the whole batch and the stopped examples' states are ignored. Both give the same result
whenever the step and the rule treat examples independently (tested in both users' tests).
"""

from collections.abc import Callable

import torch

from ..checks import check_int
from .act import StepFn

StopRule = Callable[[torch.Tensor, int, torch.Tensor], torch.Tensor]


def run_until_stopped(
    step_fn: StepFn, state: torch.Tensor, max_steps: int, stops: StopRule, compact: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(stopped_state, steps)``: each example's state at its stop (shape of ``state``), ``steps``
    ``[B]`` long (1-based)."""
    check_int("max_steps", max_steps, minimum=1)
    batch, device = state.shape[0], state.device
    index = torch.arange(batch, device=device)
    output = torch.zeros_like(state)
    steps = torch.full((batch,), max_steps, dtype=torch.long, device=device)
    running = torch.ones(batch, dtype=torch.bool, device=device)
    for n in range(max_steps):
        state = step_fn(state, n, index)
        stop = running[index] & (stops(state, n, index) | (n == max_steps - 1))
        output[index[stop]] = state[stop]
        steps[index[stop]] = n + 1
        running[index[stop]] = False
        if not running.any():
            break
        if compact:
            keep = running[index]
            index, state = index[keep], state[keep]
    return output, steps
