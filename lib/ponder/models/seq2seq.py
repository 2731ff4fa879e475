"""A small sequence-to-sequence model trained from scratch: the stand-in for the paper's pre-trained T5 (hut-7).

A decoder-only (prefix) language model: the source, a separator, then the target, read with
causal self-attention; the loss covers the target tokens only::

    s = [x_1 .. x_L, SEP, y_1 .. y_K, EOS]
    h = Blocks_causal(Emb(s) + P)          [B, S, D]
    p(s_{i+1} | s_{<=i}) = softmax(W LN(h_i))

Two kinds of positions (``positions=``):

* ``"absolute"``: a learned ``P[i]`` for every index ``i < length`` (the longest sequence).
  A target longer than any seen in training reads rows of ``P`` that were never trained.
* ``"relative"``: per-segment positions plus a relative bias. ``P[min(i, L)]``: the ``L = length``
  source positions keep their own vectors (the source always has the same length, and the
  model finds "position ``p``" by content, so it needs them), while the separator and every
  target token share one more vector: no index grows with the target. Order inside the target
  comes from :class:`RelativeBias` in every layer, a function of ``i - j`` alone, with every
  distance ``>= clip`` sharing one value, so a target of any length reads only trained entries.

Answers are decoded greedily after the separator until ``EOS``, or until a rule the caller
gives says a row is done (:func:`greedy_decode`).
"""

from collections.abc import Callable

import torch
from torch import nn

from ..checks import check_choice, check_int
from .transformer import Block, SelfAttention, attend

POSITIONS = ("absolute", "relative")


class RelativeBias(nn.Module):
    """A learned bias per head and clipped distance, added to the attention scores: ``[heads, T, T]``.

    T5's scalar bias per head (Raffel et al. 2020) on Shaw et al.'s (2018) clipped distances::

        s_h(i, j) = q_i . k_j / sqrt(d_head) + b_h[min(|i - j|, clip)]
        s_h(i, j) = -inf                          for j > i, when causal

    Why this one: ALiBi's penalty ``-m_h (i - j)`` grows with the distance, so a look-up into
    the source weakens as the target grows past its training lengths; rotary embeddings make
    ``q . k`` a function of the offset, so matching "value ``p``" to "source position ``p``"
    would change with the offset. A clipped bias is the same for every distance ``>= clip``
    at any length, and the nearest ``clip`` distances (the previous token: "was that value a
    forward pointer?") are learned exactly.
    """

    def __init__(self, heads: int, clip: int):
        super().__init__()
        self.clip = check_int("clip", clip, minimum=1)
        self.bias = nn.Parameter(torch.zeros(heads, clip + 1))  # b_h[0..clip], zero: no bias at the start

    def forward(self, t: int, causal: bool) -> torch.Tensor:
        i = torch.arange(t, device=self.bias.device)
        distance = i[:, None] - i[None, :]  # [T, T], i - j
        b = self.bias[:, distance.abs().clamp(max=self.clip)]  # [heads, T, T]
        return b.masked_fill(distance < 0, float("-inf")) if causal else b


class RelativeSelfAttention(SelfAttention):
    """:class:`SelfAttention` whose scores get a :class:`RelativeBias`, ``[B, T, dim] -> [B, T, dim]``.

    The bias (with the causal mask folded in as ``-inf``) is :func:`ponder.models.transformer.attend`'s float
    ``mask``.
    """

    def __init__(self, dim: int, heads: int, clip: int):
        super().__init__(dim, heads)
        self.relative = RelativeBias(heads, clip)

    def forward(self, x: torch.Tensor, causal: bool = False) -> torch.Tensor:
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(x)), self.split(self.v_proj(x))
        out = attend(q, k, v, mask=self.relative(x.shape[1], causal))
        return self.o_proj(out.transpose(1, 2).flatten(2))


class CausalLM(nn.Module):
    """``[B, S]`` token ids -> ``[B, S, vocab]`` next-token logits, causal pre-LN blocks.

    ``length``: with ``positions="absolute"`` the longest sequence; with ``"relative"`` the
    source length ``L`` (longer sequences are fine: index ``>= L`` shares one vector).
    """

    def __init__(
        self,
        vocab: int,
        length: int,
        dim: int,
        heads: int,
        depth: int,
        mlp_ratio: float = 4.0,
        positions: str = "absolute",
        clip: int = 2,
    ):
        super().__init__()
        self.relative = check_choice("positions", positions, POSITIONS) == "relative"
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Parameter(torch.randn(length + self.relative, dim) * 0.02)  # [length (+1), D]
        self.blocks = nn.ModuleList(
            Block(dim, heads, mlp_ratio, attention=RelativeSelfAttention(dim, heads, clip) if self.relative else None)
            for _ in range(depth)
        )
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)
        self.length = length

    def position_ids(self, s: int) -> torch.Tensor:
        """``[S]`` the row of ``P`` each index reads: ``i``, or ``min(i, L)`` with relative positions."""
        i = torch.arange(s, device=self.positions.device)
        if self.relative:
            return i.clamp(max=self.length)
        if s > self.length:
            raise ValueError(f"sequence of {s} tokens is longer than length={self.length} (absolute positions)")
        return i

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        h = self.tokens(s) + self.positions[self.position_ids(s.shape[1])]
        for block in self.blocks:
            h = block(h, causal=True)
        return self.head(self.norm(h))


@torch.no_grad()
def greedy_decode(
    model: CausalLM,
    prompt: torch.Tensor,
    max_new: int,
    eos: int,
    ends: Callable[[torch.Tensor], torch.Tensor] | None = None,
    choices: int | None = None,
) -> torch.Tensor:
    """Extend ``prompt`` ``[B, P]`` greedily by up to ``max_new`` tokens: ``[B, <= max_new]``.

    A row is done once it emits ``eos``, or once ``ends(out)`` (the tokens so far ``[B, k]`` ->
    ``[B]`` bool) says so; done rows keep emitting ``eos``, so the output is padded with it.
    ``choices`` restricts the argmax to the tokens ``< choices``.
    """
    s = prompt
    done = torch.zeros(len(s), dtype=torch.bool, device=s.device)
    for _ in range(max_new):
        token = model(s)[:, -1, :choices].argmax(-1)
        token = torch.where(done, torch.full_like(token, eos), token)
        s = torch.cat([s, token[:, None]], dim=1)
        done |= token == eos
        if ends is not None:
            done |= ends(s[:, prompt.shape[1] :])
        if done.all():
            break
    return s[:, prompt.shape[1] :]
