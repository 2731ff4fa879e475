"""Adaptive Computation Modules (Wójcik et al., AAAI 2025, arXiv 2312.10193).

An ACM replaces one module ``f`` of a trained network (an MLP, or a q/k/v/o projection) with
``N`` small *learners* ``s_1..s_N`` and a *gate* ``g`` that picks, per token, how many run:

    h(z, k) = Σ_{n=1..k} s_n(z),          s_n(z) = W2_n act(W1_n z + b1_n)   (no output bias)

Each ``k`` in ``k_min..N`` is a valid output; more learners refine the sum. ``k_min = 0`` under a
residual connection (the MLP: zero output costs nothing), ``1`` for attention projections.

**Gate.** Two linear layers with a GELU; its scores are discretised with the hard Gumbel-softmax
(Jang et al. 2017), straight-through: forward uses the one-hot ``ν̂``, backward the soft ``ν``:

    ν = softmax((log g(z) + γ) / T),   γ ~ Gumbel(0, 1),   T = 0.8
    y = Σ_k ν̂_k h(z, k) = Σ_n m_n s_n(z),   m_n = Σ_{k ≥ n} ν̂_k   (m_n = 1 iff learner n runs)

Writing the output through ``ν̂`` lets the task loss reach the gate (``task_gradient=True``, the
default). *A deviation from the official code*, kept as a named option: there the one-hot is not
multiplied into the output, so the gate learns only from the auxiliary losses
(``task_gradient=False``; measured effect in docs/acm.md). At inference the gate takes
the arg-max (no noise).

**Execution.** The learners are packed: ``w1 [N·h, d_in]``, ``b1 [N·h]``, ``w2 [d_out, N·h]``;
learner ``n`` owns hidden units ``n·h .. (n+1)·h``. The first-``k`` sum is therefore *one* pair of
matrix products over the first ``k·h`` hidden units (:meth:`Learners.prefix`).

* ``masked`` (naive, and always in training): every learner runs, the hidden units of unused
  learners are multiplied by zero. Costs as much as the dense module.
* ``grouped`` (inference): tokens are sorted by their ``k`` and each group runs
  :meth:`Learners.prefix` once — ``N`` matrix-product pairs, no per-token loop. Costs in
  proportion to the learners executed. *Fix of the official code*: its loop
  ``for i in range(1, highest_choice)`` runs one learner fewer than chosen for the tokens with
  the largest ``k``; here every token runs exactly ``k`` learners (tested).
"""

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_choice, check_int, check_positive

ACTIVATIONS = ("gelu", "relu", "identity")
EXECUTIONS = ("masked", "grouped")


def _activate(x: torch.Tensor, activation: str) -> torch.Tensor:
    return F.gelu(x) if activation == "gelu" else F.relu(x) if activation == "relu" else x


class Learners(nn.Module):
    """``N`` two-layer learners ``d_in -> hidden -> d_out`` packed into two matrices."""

    def __init__(self, d_in: int, d_out: int, n: int, hidden: int, activation: str = "gelu"):
        super().__init__()
        check_int("n", n, minimum=1)
        check_int("hidden", hidden, minimum=1)
        check_choice("activation", activation, ACTIVATIONS)
        self.n, self.hidden, self.activation = n, hidden, activation
        self.d_in, self.d_out = d_in, d_out
        self.w1 = nn.Parameter(torch.randn(n * hidden, d_in) / d_in**0.5)
        self.b1 = nn.Parameter(torch.zeros(n * hidden))
        self.w2 = nn.Parameter(torch.randn(d_out, n * hidden) / (n * hidden) ** 0.5)

    @property
    def macs(self) -> int:
        """Multiply-adds of one learner on one token."""
        return self.hidden * (self.d_in + self.d_out)

    def prefix(self, z: torch.Tensor, k: int) -> torch.Tensor:
        """``h(z, k)``: ``[..., d_in] -> [..., d_out]``, the sum of the first ``k`` learners."""
        if k == 0:
            return z.new_zeros(*z.shape[:-1], self.d_out)
        units = k * self.hidden
        return F.linear(_activate(F.linear(z, self.w1[:units], self.b1[:units]), self.activation), self.w2[:, :units])

    def hidden_units(self, z: torch.Tensor) -> torch.Tensor:
        """``[..., d_in] -> [..., N, hidden]``, every learner's activations."""
        return _activate(F.linear(z, self.w1, self.b1), self.activation).unflatten(-1, (self.n, self.hidden))

    def each(self, z: torch.Tensor) -> torch.Tensor:
        """``[..., d_in] -> [..., N, d_out]``: ``s_n(z)`` for every learner."""
        return torch.einsum("...nh,dnh->...nd", self.hidden_units(z), self.w2.unflatten(1, (self.n, self.hidden)))

    def cumulative(self, z: torch.Tensor) -> torch.Tensor:
        """``[..., d_in] -> [..., N, d_out]``: ``h(z, k)`` for ``k = 1..N``."""
        return self.each(z).cumsum(dim=-2)

    def masked(self, z: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``Σ_n mask_n s_n(z)``; ``mask [..., N]`` (0/1, may carry straight-through gradients)."""
        units = self.hidden_units(z) * mask.unsqueeze(-1)
        return F.linear(units.flatten(-2), self.w2)

    def grouped(self, z: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """``h(z_t, k_t)`` per token: ``z [..., d_in]``, ``k [...]`` (long) -> ``[..., d_out]``.

        One :meth:`prefix` per group of tokens with the same ``k`` (``N`` products, not one per
        token). The group sizes are counted first (one wait for the device); where every token
        runs the same ``k`` (the paper's Fig. 9) that is one :meth:`prefix` of ``z`` as it is.
        Otherwise the tokens are sorted by ``k`` (stably, on 8-bit keys: a radix sort of one byte
        on a GPU), gathered once, and each group's output is scattered back to its rows.
        """
        flat, ks = z.reshape(-1, self.d_in), k.reshape(-1)
        counts = torch.bincount(ks, minlength=self.n + 1).tolist()
        if max(counts) == len(ks):
            return self.prefix(z, counts.index(len(ks)))
        order = torch.sort(ks.to(torch.uint8) if self.n < 256 else ks, stable=True).indices
        ordered = flat.index_select(0, order)
        out = flat.new_zeros(len(flat), self.d_out)
        start = counts[0]  # k = 0: no learner, the zeros stay
        for group, count in enumerate(counts[1:], start=1):
            if count:
                out.index_copy_(0, order[start : start + count], self.prefix(ordered[start : start + count], group))
            start += count
        return out.view(*z.shape[:-1], self.d_out)


class Gate(nn.Module):
    """``[..., dim] -> [..., choices]`` scores: ``Linear -> GELU -> Linear``."""

    def __init__(self, dim: int, choices: int, hidden: int):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, choices)

    @property
    def macs(self) -> int:
        """Multiply-adds per token."""
        return self.fc1.in_features * self.fc1.out_features + self.fc2.in_features * self.fc2.out_features

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(z)))


def hard_gumbel(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """One-hot ``ν̂ = onehot(argmax ν)`` whose gradient is that of ``ν = softmax(logits / T)`` (straight-through).
    Given ``logits + γ`` (Gumbel noise, :func:`_gumbel_noise`) it is the Gumbel-softmax sample of training;
    given the logits alone, the arg-max that evaluation takes."""
    scores = logits / temperature
    soft = softmax_choices(scores)
    hard = F.one_hot(scores.argmax(dim=-1), logits.shape[-1]).to(
        soft.dtype
    )  # the arg-max of ν, read where it is contiguous
    return hard - soft.detach() + soft


def softmax_choices(scores: torch.Tensor) -> torch.Tensor:
    """``softmax`` over the last dimension, the gate's few choices, computed along a leading one: ATen's CPU
    kernel runs a short last dimension row by row and a leading one vectorised over the rows. A phase-III step
    calls it 40 times, and its backward as often; ``python -m ponder.bench gate`` times forward and backward
    against ``softmax(-1)`` (0.24x on one core of an AVX2 CPU)."""
    return scores.movedim(-1, 0).softmax(dim=0).movedim(0, -1)


def _gumbel_noise(like: torch.Tensor) -> torch.Tensor:
    uniform = torch.rand_like(like).clamp_(1e-9, 1 - 1e-9)
    return -torch.log(-torch.log(uniform))


class ACM(nn.Module):
    """An Adaptive Computation Module ``[..., d_in] -> [..., d_out]``.

    After each forward, ``self.k`` holds the learners run per token ``[...]`` (long) and
    ``self.used`` the same as floats carrying the gate's straight-through gradient (for the
    budget loss); ``self.onehot`` the gate's straight-through one-hot ``ν̂ [..., choices]`` (for
    the entropy loss); in training, ``self.argmax_used`` the learners the arg-max would run, with
    the straight-through gradient of the noiseless softmax (for the budget at evaluation). Set
    ``force_k`` to run a fixed number of learners (distillation, evaluation).
    ``task_gradient=False`` keeps the task loss from the gate (the official code).
    """

    def __init__(
        self,
        d_in: int,
        d_out: int,
        n: int = 4,
        hidden: int = 64,
        activation: str = "gelu",
        k_min: int = 0,
        gate_hidden: int = 4,
        temperature: float = 0.8,
        task_gradient: bool = True,
    ):
        super().__init__()
        check_int("k_min", k_min, minimum=0, maximum=1)
        check_positive("temperature", temperature)
        self.learners = Learners(d_in, d_out, n, hidden, activation)
        self.gate = Gate(d_in, n + 1 - k_min, gate_hidden)
        self.n, self.k_min, self.temperature, self.task_gradient = n, k_min, temperature, task_gradient
        self.register_buffer("choices", torch.arange(k_min, n + 1, dtype=torch.float), persistent=False)
        # runs[c, n-1] = 1 iff choice c runs learner n (k ≥ n): the mask m = ν̂ @ runs, m_n = Σ_{k ≥ n} ν̂_k
        self.register_buffer("runs", (self.choices[:, None] >= torch.arange(1, n + 1)).float(), persistent=False)
        self.execution = "masked"
        self.force_k: int | None = None
        self.k = self.used = self.onehot = self.argmax_used = None

    def set_execution(self, execution: str) -> None:
        """``masked`` (every learner runs, unused ones zeroed) or ``grouped`` (sorted by k); inference only."""
        self.execution = check_choice("execution", execution, EXECUTIONS)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        if self.force_k is not None:
            self.k = torch.full(z.shape[:-1], self.force_k, dtype=torch.long, device=z.device)
            self.used, self.onehot = self.k.float(), None
            return self.learners.prefix(z, self.force_k)
        logits = self.gate(z)
        if self.training:  # the Gumbel sample and the arg-max in one pass: ν̂ and the noiseless one-hot
            onehot, argmax_onehot = hard_gumbel(torch.stack((logits + _gumbel_noise(logits), logits)), self.temperature)
            self.used, self.argmax_used = torch.stack((onehot, argmax_onehot)) @ self.choices.to(z.dtype)
        else:
            onehot = F.one_hot(logits.argmax(dim=-1), len(self.choices)).to(z.dtype)
            self.used, self.argmax_used = onehot @ self.choices.to(z.dtype), None
        self.onehot = onehot
        self.k = self.used.detach().round().long()
        if self.training or self.execution == "masked":
            return self.learners.masked(z, self.learner_mask(onehot if self.task_gradient else onehot.detach()))
        return self.learners.grouped(z, self.k)

    def learner_mask(self, onehot: torch.Tensor) -> torch.Tensor:
        """``[..., choices] -> [..., N]``: ``m_n = Σ_{k ≥ n} ν̂_k``, 1 where learner ``n`` runs."""
        return onehot @ self.runs.to(onehot.dtype)

    def macs(self) -> torch.Tensor:
        """Multiply-adds of the last forward per token ``[...]``: the gate plus ``k`` learners."""
        gate = 0 if self.force_k is not None else self.gate.macs
        return gate + self.k * self.learners.macs
