"""ACT as Graves' equations read, one example at a time: the loop :func:`ponder.models.act.act` is held to.

For one example, with ``s^0`` its input and ``f`` the step function::

    for n = 1, 2, ..., N_max:
        s^n = f(s^{n-1})
        p^n = sigmoid(w . pool(s^n) + b)
        if n == N_max or p^1 + ... + p^n >= 1 - eps:      halt at N = n
            R   = 1 - (p^1 + ... + p^{n-1})               the remainder
            y  += R s^n                                   w^N = R
            stop
        y += p^n s^n                                      w^n = p^n

and the ponder cost is ``rho = N + R``. :func:`ponder.models.act.act` computes the same over a batch at once:
every example's decision as a mask, halted examples weighted zero (or gathered out of the batch, ``compact``),
the loop ending when the last one halts. This file spells the loop out plainly, scalar by scalar, so that the
batched version can be read against it; ``tests/test_act.py`` checks that both give the same states, steps,
costs and halting weights. It is for reading and testing only: no model calls it.
"""

import torch

from .act import Pondered, StepFn, pooled


def act_one_by_one(
    step_fn: StepFn, state: torch.Tensor, max_steps: int, halting_unit: torch.nn.Module, eps: float = 0.01
) -> Pondered:
    """ACT at ``level="example"`` on ``state`` (``[B, ..., D]``), example after example, as the module docstring
    writes it: returns the output ``y`` (``[B, ..., D]``), ``N`` (``[B]``), ``rho = N + R`` (``[B]``) and the
    halting weights ``w^n`` (``[B, max_steps]``, zero after ``N``)."""
    outputs, steps, costs, weights = [], [], [], []
    for b in range(state.shape[0]):
        s = state[b : b + 1]  # [1, ..., D]: this example alone
        y, total, w = torch.zeros_like(s), s.new_zeros(()), []
        for n in range(max_steps):
            s = step_fn(s, n, torch.tensor([b]))
            p = halting_unit(pooled(s))[0]
            if n == max_steps - 1 or total + p >= 1 - eps:
                remainder = 1 - total
                y = y + remainder * s
                w.append(remainder)
                break
            y = y + p * s
            total = total + p
            w.append(p)
        outputs.append(y)
        steps.append(len(w))
        costs.append(len(w) + w[-1])
        weights.append(torch.stack(w + [s.new_zeros(())] * (max_steps - len(w))))
    return Pondered(torch.cat(outputs), torch.tensor(steps), torch.stack(costs), torch.stack(weights))
