"""Multi-head attention read as a hypernetwork, and HYLA (Schug et al., ICLR 2025, arXiv 2406.05816).

Scores. For head ``h`` with query/key/value/output slices ``W_h^q, W_h^k, W_h^v, W_h^out``::

    ã_{h,q,k} = <W_h^q x_q, W_h^k x_k> / sqrt(d_head)            (every kind, linear and HYLA too)
    a_{h,q,k} = σ(ã)_{h,q,k}

with σ one of

* ``softmax``  — softmax over the keys ``k`` for each ``(h, q)``;
* ``none``     — the identity (linear attention: no feature map, no denominator);
* ``rms_head`` — RMSHead: the H-vector of one query–key pair divided by its root mean square
  over the heads, ``a_{:,q,k} = ã_{:,q,k} / sqrt(mean_h ã_{h,q,k}² + ε)`` (no gain, ε = 1e-6).

The H-vector ``(a_{1,q,k}, …, a_{H,q,k})`` is the **latent code** of the pair ``(q, k)``.

Value networks. Standard multi-head attention is a *linear hypernetwork* (Eq. 2–5)::

    MHA_q(X) = Σ_k W_{q,k} x_k,      W_{q,k} = Σ_h a_{h,q,k} W_h^out W_h^v

HYLA (Eq. 6–7) makes the generated value network a two-layer MLP: the latent code weights
both the value *and* the output projection, with a ReLU between::

    HYLA_q(X) = Σ_k W'_{q,k} φ(W_{q,k} x_k),   W_{q,k} = Σ_h a_{h,q,k} W_h^v,   W'_{q,k} = Σ_h a_{h,q,k} W_h^out

``value_network="mlp_linear"`` is the same without φ ("HYLA − nonlinearity"). HYLA adds no
parameters: it uses exactly the four projections of softmax attention.

The Table A1 ablations the official code defines are the combinations in :data:`KINDS`.

Positions (optional, as in the official models): a T5-style relative position bias
``b_{h, bucket(q − k)}`` per layer and head is added to the raw scores before σ (so before
RMSHead), :class:`RelativePositionBias`. The per-head query/key/value biases are ``[H, d_head]``
matrices (:class:`HeadLinear`), so weight decay on every parameter of two or more dimensions
decays them, as the official code's mask does.

Causal masking (for language modelling) zeroes the scores of future keys after σ (softmax:
``-inf`` before it). RMSHead is local to one ``(q, k)`` pair, so masking commutes with it; the
official code, like this one, materialises the full ``[T, T]`` score matrix and never uses a
recurrent linear-time form.
"""

import math
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_choice, check_int

RMS_EPS = 1e-6

# kind -> (score normalisation σ, value network)
KINDS: dict[str, tuple[str, str]] = {
    "softmax": ("softmax", "linear"),
    "linear": ("none", "linear"),
    "hyla": ("rms_head", "mlp_relu"),
    "linear_rmshead": ("rms_head", "linear"),
    "hyla_no_rmshead": ("none", "mlp_relu"),
    "hyla_no_relu": ("rms_head", "mlp_linear"),
    "hyla_no_relu_no_rmshead": ("none", "mlp_linear"),
    "hyla_softmax": ("softmax", "mlp_relu"),
}

# kind -> its row name in Table A1 of the paper
PAPER_NAMES: dict[str, str] = {
    "softmax": "Softmax attention",
    "linear": "Linear attention",
    "hyla": "HYLA",
    "linear_rmshead": "Linear attention + RMSHead",
    "hyla_no_rmshead": "HYLA − RMSHead",
    "hyla_no_relu": "HYLA − nonlinearity",
    "hyla_no_relu_no_rmshead": "HYLA − nonlinearity − RMSHead",
    "hyla_softmax": "HYLA − RMSHead + softmax",
}


def rms_head(scores: torch.Tensor, eps: float = RMS_EPS) -> torch.Tensor:
    """RMSHead: ``[B, H, Tq, Tk]`` scores divided by their root mean square over the heads ``H``."""
    return scores * torch.rsqrt(scores.pow(2).mean(dim=1, keepdim=True) + eps)


def relative_bucket(distance: torch.Tensor, buckets: int, max_distance: int) -> torch.Tensor:
    """T5's unidirectional bucket of ``distance = q − k`` (``bidirectional=False``).

    Keys after the query (``distance < 0``) share bucket 0 with the query itself; distances below
    ``buckets // 2`` get one bucket each; longer ones share logarithmically wider buckets up to
    ``max_distance``, beyond which all fall in the last bucket::

        n = max(distance, 0);  bucket = n                                         if n < m = buckets // 2
                               bucket = min(m + ⌊log(n / m) / log(max_distance / m) · (buckets − m)⌋, buckets − 1)
    """
    n = distance.clamp(min=0)
    exact = buckets // 2
    large = (
        exact
        + (
            torch.log(n.float() / exact + torch.finfo(torch.float32).eps)
            / math.log(max_distance / exact)
            * (buckets - exact)
        ).long()
    )
    return torch.where(n < exact, n, large.clamp(max=buckets - 1))


class RelativePositionBias(nn.Module):
    """``[H, T, T]`` score bias ``b_{h, bucket(q − k)}`` from a learned ``[H, buckets]`` table.

    The official models use ``buckets = max_distance``: the sequence length for sraven (36 at
    K = 4), 128 at every length for fuzzy logic, and T5's unidirectional bucketing even without a
    causal mask (:func:`relative_bucket`). The table starts at ``N(0, 1/buckets)``: Flax's default
    embedding initialiser, variance scaling with fan-in over the ``[H, buckets]`` table's buckets.
    """

    def __init__(self, heads: int, buckets: int):
        super().__init__()
        self.buckets = check_int("buckets", buckets, minimum=2)
        self.table = nn.Parameter(torch.randn(heads, buckets) / math.sqrt(buckets))
        position = torch.arange(buckets)  # the [T, T] bucket indices, computed once (not saved)
        self.register_buffer(
            "index", relative_bucket(position[:, None] - position[None, :], buckets, buckets), persistent=False
        )

    def forward(self, length: int) -> torch.Tensor:
        """``[H, length, length]`` for any ``length`` up to ``buckets``."""
        return self.table[:, self.index[:length, :length]]


class HeadLinear(nn.Linear):
    """``nn.Linear(dim, heads * head_dim)`` whose bias is an ``[H, d_head]`` matrix (the official
    ``DenseGeneral`` to ``(heads, head_dim)``): same output, but a 2-d parameter for weight decay."""

    def __init__(self, dim: int, heads: int, head_dim: int):
        super().__init__(dim, heads * head_dim)
        self.bias = nn.Parameter(self.bias.detach().reshape(heads, head_dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias.flatten())


def normalise(scores: torch.Tensor, norm: str, causal: bool) -> torch.Tensor:
    """σ applied to raw scores ``[B, H, Tq, Tk]``; with ``causal`` future keys get weight 0."""
    future = torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device).triu(1) if causal else None
    if norm == "softmax":
        if future is not None:
            scores = scores.masked_fill(future, float("-inf"))
        return scores.softmax(dim=-1)
    if norm == "rms_head":
        scores = rms_head(scores)
    return scores if future is None else scores.masked_fill(future, 0.0)


class MultiHeadAttention(nn.Module):
    """Self-attention ``[B, T, dim] -> [B, T, dim]`` of one of the :data:`KINDS`.

    ``head_dim`` defaults to ``dim // heads``; the projections map ``dim`` to ``heads * head_dim``
    and back (the paper's sraven models use ``heads * head_dim = 64`` at ``dim = 128``).
    ``score_dropout`` drops whole latent codes in training: one mask over ``(q, k)`` shared by the
    batch and the heads (the official code's silent default is 0.1). ``relative_buckets`` adds a
    :class:`RelativePositionBias` with that many buckets (the sequence length) to the raw scores. Set
    ``record = True`` to keep the latent codes of the last forward pass in ``self.latent``
    (``[B, H, T, T]``).
    """

    def __init__(
        self,
        dim: int,
        heads: int,
        kind: str = "softmax",
        head_dim: int | None = None,
        score_dropout: float = 0.0,
        relative_buckets: int | None = None,
    ):
        super().__init__()
        check_int("heads", heads, minimum=1)
        self.kind = check_choice("kind", kind, KINDS)
        self.norm, self.value_network = KINDS[kind]
        if head_dim is None:
            if dim % heads:
                raise ValueError(f"dim={dim} must be divisible by heads={heads} (or pass head_dim)")
            head_dim = dim // heads
        self.heads, self.head_dim = heads, check_int("head_dim", head_dim, minimum=1)
        if not 0 <= score_dropout < 1:
            raise ValueError(f"score_dropout={score_dropout} must lie in [0, 1)")
        self.score_dropout = score_dropout
        inner = heads * head_dim
        self.q_proj, self.k_proj, self.v_proj = (HeadLinear(dim, heads, head_dim) for _ in range(3))
        self.o_proj = nn.Linear(inner, dim)
        self.relative = RelativePositionBias(heads, relative_buckets) if relative_buckets else None
        self.record, self.latent = False, None

    def split(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, T, H * d] -> [B, T, H, d]``."""
        return x.unflatten(-1, (self.heads, self.head_dim))

    def scores(self, x: torch.Tensor, causal: bool = False) -> torch.Tensor:
        """Latent codes ``a`` ``[B, H, Tq, Tk]``: σ(scaled dot products) as in the module docstring."""
        q, k = self.split(self.q_proj(x)), self.split(self.k_proj(x))  # [B, T, H, d]
        raw = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.head_dim)
        if self.relative is not None:
            raw = raw + self.relative(x.shape[1])
        return normalise(raw, self.norm, causal)

    def forward(self, x: torch.Tensor, causal: bool = False) -> torch.Tensor:
        a = self.scores(x, causal)  # [B, H, T, T]
        if self.training and self.score_dropout:
            keep = torch.rand(a.shape[-2:], device=a.device) >= self.score_dropout
            a = a * keep / (1 - self.score_dropout)
        if self.record:
            self.latent = a.detach()
        v = self.split(self.v_proj(x))  # [B, Tk, H, d]
        if self.value_network == "linear":
            out = torch.einsum("bhqk,bkhd->bqhd", a, v)  # Σ_k a_{h,q,k} W_h^v x_k
        else:
            hidden = torch.einsum("bhqk,bkhd->bqkd", a, v)  # W_{q,k} x_k = Σ_h a_{h,q,k} W_h^v x_k
            if self.value_network == "mlp_relu":
                hidden = F.relu(hidden)
            out = torch.einsum("bhqk,bqkd->bqhd", a, hidden)  # per head h: Σ_k a_{h,q,k} φ(·)
        return self.o_proj(out.flatten(-2))  # Σ_h W_h^out (·) + bias


@contextmanager
def recording(model: nn.Module):
    """Within the block, every :class:`MultiHeadAttention` of ``model`` keeps its latent codes.

    Yields the list of those modules in layer order; read ``module.latent`` after a forward pass.
    """
    layers = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    for m in layers:
        m.record = True
    try:
        yield layers
    finally:
        for m in layers:
            m.record, m.latent = False, None
