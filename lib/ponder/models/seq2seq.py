"""A small sequence-to-sequence model trained from scratch: the stand-in for the paper's pre-trained T5 (hut-7).

A decoder-only (prefix) language model: the source, a separator, then the target, read with
causal self-attention; the loss covers the target tokens only::

    s = [x_1 .. x_L, SEP, y_1 .. y_K, EOS]
    h = Blocks_causal(Emb(s) + P)          [B, S, D]
    p(s_{i+1} | s_{<=i}) = softmax(W LN(h_i))

Answers are decoded greedily after the separator until ``EOS`` (:func:`greedy_decode`).
"""
import torch
from torch import nn

from .transformer import Block


class CausalLM(nn.Module):
    """``[B, S]`` token ids -> ``[B, S, vocab]`` next-token logits, causal pre-LN blocks."""

    def __init__(self, vocab: int, max_len: int, dim: int, heads: int, depth: int, mlp_ratio: float = 4.0):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Parameter(torch.randn(max_len, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, heads, mlp_ratio) for _ in range(depth))
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)
        self.max_len = max_len

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        if s.shape[1] > self.max_len:
            raise ValueError(f"sequence of {s.shape[1]} tokens is longer than max_len={self.max_len}")
        h = self.tokens(s) + self.positions[: s.shape[1]]
        for block in self.blocks:
            h = block(h, causal=True)
        return self.head(self.norm(h))


@torch.no_grad()
def greedy_decode(model: CausalLM, prompt: torch.Tensor, max_new: int, eos: int) -> torch.Tensor:
    """Extend ``prompt`` ``[B, P]`` greedily by up to ``max_new`` tokens: ``[B, <= max_new]``.

    Rows that emitted ``eos`` keep emitting it, so the output is padded with ``eos``.
    """
    s = prompt
    done = torch.zeros(len(s), dtype=torch.bool, device=s.device)
    for _ in range(max_new):
        token = model(s)[:, -1].argmax(-1)
        token = torch.where(done, torch.full_like(token, eos), token)
        s = torch.cat([s, token[:, None]], dim=1)
        done |= token == eos
        if done.all():
            break
    return s[:, prompt.shape[1] :]
