"""Hyper-UT with the whole block generated: our reading of Abnar et al. 2023 (arXiv 2310.08866).

``ponder.models.hyper`` generates only a low-rank delta on the shared MLP. Here the routed pool
code generates **every weight and bias of the block's attention (q, k, v, o) and MLP (fc1,
fc2)**, per example and step; the two LayerNorms, the step embedding and the router stay shared.

**Routing** is the :class:`~ponder.models.hyper.Router` of ``hyper``: a pool of ``N`` learned
weight embeddings ``E in R^{N x d_e}`` and single-head attention from ``[summary(h_{t-1} + e_t); e_t]``
(or, with ``router_step=False``, from ``summary(h_{t-1})`` alone)::

    alpha_t = softmax(q_t (W_k E)^T / sqrt(d_k))      [B, N]      (routing weights)
    z_t     = alpha_t E / c                          [B, d_e]    (mixed code, normalised by c)

**Generation.** Every linear map ``f`` of the block (``W_f`` is ``[out, in]``, ``b_f`` is
``[out]``, as in ``nn.Linear``) has an affine generator, a shared base plus a linear map ``G_f``::

    W_f(z) = W_f^0 + G_f z,      b_f(z) = b_f^0 + g_f z

Because ``sum_i alpha_i = 1`` the generated weights are a convex mix of ``N`` weight sets, one per
pool entry, and the generated block is a per-example soft mixture of ``N`` blocks::

    W_f(alpha E) = sum_i alpha_i W_f^{(i)},      W_f^{(i)} = W_f^0 + G_f E_i

The step is the pre-LN block of ``ponder.models.transformer`` with those weights::

    h' = h + e_t,   h'' = h' + Attn_{z_t}(LN_1(h')),   h_t = h'' + MLP_{z_t}(LN_2(h''))

where ``Attn_z`` is ``SelfAttention`` (``softmax(Q K^T / sqrt(d_head)) V`` per head, then
``o_proj``) and ``MLP_z(u) = W_2(z) GELU(W_1(z) u + b_1(z)) + b_2(z)``.

**Parametrisation.** A block of width ``D`` and MLP width ``M`` has
``P = 4 (D^2 + D) + (D M + M) + (M D + D)`` weights and biases (``P = 12,576`` at ``D = 32``,
``M = 128``). Two ways to make ``N`` of them, counted at ``D = 32``, ``mlp_ratio = 4``,
``N = 16``, ``d_e = 16``:

* ``N`` full weight sets mixed by ``alpha`` (the generator folded into the pool):
  ``N P = 201,216`` parameters; they grow with ``N`` (``805k`` at ``N = 64``).
* embeddings of size ``d_e`` and an affine generator per weight matrix (this file):
  ``(d_e + 1) P + N d_e = 213,792 + 256 = 214,048`` parameters; they grow with ``N`` only by
  ``d_e`` a pool entry.

We use the generator: at ``d_e >= N`` it reaches any ``N`` weight sets, as the pool of full sets
does, for one more set (the base ``W^0``); it is the paper's form; and a pool-size sweep then
varies how many modules there are, not how many parameters (the full sets give the ``N = 64``
pool 4x the parameters of the ``N = 16`` one). The code ``z`` is also what the router mixes,
so one embedding per entry serves both as its key and as its weights' code.

**Compute.** The weights are formed per example in one matrix product with the base added in,
``W^0 + z G`` as ``addmm`` over the flattened ``G`` (``B d_e P`` multiply-adds, which equals
mixing the ``N`` entry weight sets by ``alpha`` at ``d_e / N`` of the cost), then applied with
batched matmuls, ``u W(z)^T + b(z)`` per example. ``G`` is stored transposed, ``[d_e, in, out]``,
so the product yields ``W(z)^T`` ``[B, in, out]`` contiguous and neither the forward nor the
backward pass copies a ``[B, out, in]`` tensor to transpose it: a generated linear map's forward
and backward take 0.8x the time of generating ``[B, out, in]`` and multiplying by its ``.mT``
(one thread, ``D = 32``, ``B = 128``, 13 tokens). An ``einsum`` and a separate ``+ W^0`` cost a
step 1.2x as much (a permuting copy and one more pass over the weights).

**Initialisation.** ``W^0, b^0`` are initialised as ``nn.Linear`` is, ``U(-1/sqrt(in),
1/sqrt(in))``, and ``G`` is normal with the std that makes each entry's delta ``G E_i / c`` (with
``E ~ N(0, 1)`` and the router's ``c``) ``spread`` times the std of that base init. With
``spread = 1`` the ``N`` entries would differ from one another as much as independent
``nn.Linear`` inits do. The default, ``spread = 0.1``, starts every entry within a tenth of that
scale of the shared ``W^0``: Hyper-UT starts as the UT with its block ``W^0`` (exactly at
``spread = 0``, tested), and the entries part as training finds a use for them. The code's
normalisation by ``c`` (see :mod:`ponder.models.hyper`) makes a step on ``G`` move the generated
weights about as far as a step on ``W^0`` moves them.

**Step size.** AdamW moves every parameter by about the learning rate per step, whatever the scale
of its gradient. A generated weight has two parameters behind it, ``W^0`` and ``G`` (through a code
whose L1 norm is about 1), so a step would move it about twice as far as a step moves a shared
weight of the UT: the pool of one, which is UT+ACT with its block reparametrised, would train as
UT+ACT at twice the learning rate, and every kind is compared at rates chosen on one grid. So the
base and the generator are stored at ``1 / STEP`` times their values and applied at ``STEP = 1/2``::

    W_f(z) = STEP (W_f' + G_f' z),     W_f' = W_f^0 / STEP,   G_f' = G_f / STEP

The function is the same (the factor 2 and its inverse are exact in floating point, so it is the
same to the bit at initialisation), and a step moves ``W_f(z)`` by about ``STEP (lr + lr)`` = ``lr``:
under AdamW, a multiplier on a parameter's use is a learning rate for that parameter. hut-10's pool
of one is the check that it trains like UT+ACT.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from .hyper import Router
from .transformer import attend

# The attention's generated linear maps, named as in ``ponder.models.transformer.SelfAttention``
# (the MLP's are ``fc1`` and ``fc2``, as in ``MLP``).
STEP = 0.5  # the generated weights' share of each AdamW step of their two parameters (see "Step size")
ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")

Weights = dict[str, tuple[torch.Tensor, torch.Tensor]]


def batched_linear(u: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``u W^T + b`` with a ``W^T`` ``[B, in, out]`` and ``b`` ``[B, out]`` per example:
    ``[B, T, in] -> [B, T, out]``."""
    return torch.baddbmm(bias[:, None], u, weight_t)


class GeneratedLinear(nn.Module):
    """The weights of an ``nn.Linear(fan_in, fan_out)`` as an affine map of a code ``z`` ``[B, d_e]``.

    ``W(z) = W^0 + G z`` and ``b(z) = b^0 + g z`` ``[B, fan_out]``, applied as ``STEP (W' + G' z)`` (see
    "Step size"): the ``nn.Linear`` ``base`` holds ``W' = W^0 / STEP`` and ``b^0 / STEP``; ``G'`` is kept
    transposed, ``[d_e, fan_in, fan_out]`` (see "Compute"); ``code_norm`` is the router's ``c`` (see
    "Initialisation").
    """

    def __init__(self, code_dim: int, fan_in: int, fan_out: int, spread: float, code_norm: float = 1.0):
        super().__init__()
        self.base = nn.Linear(fan_in, fan_out)
        with torch.no_grad():
            self.base.weight.div_(STEP)
            self.base.bias.div_(STEP)
        # std(G E_i / c) = spread * std(U(-1/sqrt(in), 1/sqrt(in))) for E_i ~ N(0, I), stored at 1 / STEP
        std = spread * code_norm / math.sqrt(3 * fan_in * code_dim) / STEP
        self.weight_generator = nn.Parameter((torch.randn(code_dim, fan_out, fan_in) * std).mT.contiguous())
        self.bias_generator = nn.Parameter(torch.randn(code_dim, fan_out) * std)

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(W(z)^T [B, fan_in, fan_out], b(z) [B, fan_out])`` for codes ``z`` ``[B, d_e]``."""
        flat = self.weight_generator.flatten(1)
        weight_t = torch.addmm(self.base.weight.T.flatten(), z, flat, beta=STEP, alpha=STEP)  # [B, in * out]
        bias = torch.addmm(self.base.bias, z, self.bias_generator, beta=STEP, alpha=STEP)
        return weight_t.view(-1, *self.weight_generator.shape[1:]), bias

    def shared(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The base ``(W^0 [fan_out, fan_in], b^0 [fan_out])``: the weights of the ``nn.Linear`` it starts from."""
        return STEP * self.base.weight, STEP * self.base.bias


class HyperBlockCore(nn.Module):
    """Hyper-UT's step with the whole block generated from the routed pool code (see the module docstring).

    ``step(h, t)`` maps ``[B, L+1, D]`` to ``[B, L+1, D]`` and keeps the routing weights of the
    last step in ``last_routing`` ``[B, N]``. The constructor is ``HyperCore``'s without ``rank``
    (nothing here is low-rank), plus the init's ``spread``.
    """

    def __init__(
        self,
        dim: int,
        heads: int,
        max_steps: int,
        pool_size: int = 16,
        code_dim: int = 32,
        mlp_ratio: float = 4.0,
        summary: str = "mean",
        spread: float = 0.1,
        router_step: bool = True,
    ):
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim={dim} must be divisible by heads={heads}")
        if spread < 0:
            raise ValueError(f"spread={spread} must be >= 0")
        self.router = Router(dim, pool_size, code_dim, summary=summary, reads_step=router_step)
        hidden = int(dim * mlp_ratio)
        shapes = {**dict.fromkeys(ATTENTION, (dim, dim)), "fc1": (dim, hidden), "fc2": (hidden, dim)}
        self.generators = nn.ModuleDict(
            {name: GeneratedLinear(code_dim, *shape, spread, self.router.code_norm) for name, shape in shapes.items()}
        )
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.step_embedding = nn.Embedding(max_steps, dim)
        nn.init.normal_(self.step_embedding.weight, std=0.02)
        self.heads, self.max_steps = heads, max_steps
        self.last_routing: torch.Tensor | None = None

    def weights(self, z: torch.Tensor) -> Weights:
        """The block's generated ``(W^T [B, in, out], b [B, out])`` by name, for codes ``z`` ``[B, d_e]``.

        ``weights(router.pool)`` gives the ``N`` entries' own weight sets ``W^{(i)}`` (transposed).
        """
        return {name: generator(z) for name, generator in self.generators.items()}

    def attention(self, u: torch.Tensor, weights: Weights) -> torch.Tensor:
        """``SelfAttention`` with per-example projections: ``[B, T, D] -> [B, T, D]``."""
        q, k, v = (
            batched_linear(u, *weights[name]).unflatten(-1, (self.heads, -1)).transpose(1, 2) for name in ATTENTION[:3]
        )
        out = attend(q, k, v)  # [B, heads, T, D/heads]
        return batched_linear(out.transpose(1, 2).flatten(2), *weights["o_proj"])

    def mlp(self, u: torch.Tensor, weights: Weights) -> torch.Tensor:
        """``W_2 GELU(W_1 u + b_1) + b_2`` with per-example weights: ``[B, T, D] -> [B, T, D]``."""
        return batched_linear(F.gelu(batched_linear(u, *weights["fc1"])), *weights["fc2"])

    def block(self, h: torch.Tensor, weights: Weights) -> torch.Tensor:
        """The pre-LN block with the given weights (shared norms): ``[B, T, D] -> [B, T, D]``."""
        h = h + self.attention(self.norm1(h), weights)
        return h + self.mlp(self.norm2(h), weights)

    def step(self, h: torch.Tensor, t: int) -> torch.Tensor:
        step_vector = self.step_embedding.weight[t]
        alpha, z = self.router(h, step_vector)
        self.last_routing = alpha.detach()
        return self.block(h + step_vector, self.weights(z))
