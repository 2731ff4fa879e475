"""hut-7: answer-only vs scratch-pad for a small seq2seq model trained from scratch on C-PVR.

The paper fine-tunes a pre-trained T5 with and without a scratch-pad; no pre-trained weights
can be had offline, so this is a stand-in: a decoder-only prefix model
(``ponder.models.seq2seq``) trained from scratch. Targets, for an example with chain
``0 -> p_1 -> ... -> p_M`` and label ``y = x[p_M]``:

* ``answer``:     ``SEP y EOS``
* ``scratchpad``: ``SEP p_1 p_2 .. p_M y EOS``  (every value read along the walk, then the label)

The answer is the last token before ``EOS``. Train on hops ``1..K``, test on ``1..H``.
"""
from collections.abc import Sequence

import pandas as pd
import torch
import torch.nn.functional as F

from ..checks import check_choice
from ..models.seq2seq import CausalLM, greedy_decode
from ..profiles import by_profile
from ..runs import Run
from ..tasks import cpvr
from ..training import TrainConfig, default_device, train_run
from .hyper_ut import test_set

TARGETS = ("answer", "scratchpad")
LABELS = {"answer": "answer only", "scratchpad": "scratch-pad"}
CODE = ("ponder.tasks.cpvr", "ponder.models.transformer", "ponder.models.seq2seq", "ponder.experiments.hyper_ut", "ponder.experiments.hyper_ut_scratchpad")

SIZES = {
    "smoke": dict(length=8, train_hops=(1, 2), test_hops=(1, 2, 3), dim=16, heads=2, depth=2, steps=30, batch_size=32, lr=3e-3, n_test=32),
    "quick": dict(length=8, train_hops=(1, 2), test_hops=(1, 2, 3, 4, 5), dim=48, heads=4, depth=3, steps=800, batch_size=128, lr=3e-3, n_test=300),
    "gpu": dict(length=16, train_hops=(1, 2, 3, 4), test_hops=(1, 2, 3, 4, 5, 6, 7, 8), dim=128, heads=4, depth=6, steps=6_000, batch_size=128, lr=1e-3, n_test=1_000),
    "paper": dict(length=16, train_hops=(1, 2, 3, 4), test_hops=(1, 2, 3, 4, 5, 6, 7, 8), dim=128, heads=4, depth=6, steps=30_000, batch_size=128, lr=1e-3, n_test=2_000),
}


def walk(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The values read along each walk: ``[x_0, x_{p_1}, .., x_{p_M}]`` ``[B, L]`` and its length ``M+1`` ``[B]``.

    Entries past the length are padding (zero).
    """
    batch, length = x.shape
    rows = torch.arange(batch)
    position = torch.zeros(batch, dtype=torch.long)
    running = torch.ones(batch, dtype=torch.bool)
    values = torch.zeros(batch, length, dtype=torch.long)
    size = torch.zeros(batch, dtype=torch.long)
    for i in range(length):
        v = x[rows, position]
        values[:, i] = torch.where(running, v, 0)
        size += running.long()
        running &= v > position
        position = torch.where(running, v, position)
    return values, size


def encode(x: torch.Tensor, target: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(tokens [B, 2L+2], loss mask [B, 2L+1])``: source, ``SEP``, the target, ``EOS``, ``EOS`` padding.

    The mask marks the positions whose *next* token is a target token or the first ``EOS``.
    """
    check_choice("target", target, TARGETS)
    batch, length = x.shape
    sep, eos = length, length + 1
    values, size = walk(x)
    if target == "answer":
        values, size = values.gather(1, (size - 1)[:, None]), torch.ones_like(size)
    width = values.shape[1]
    inside = torch.arange(width)[None, :] < size[:, None]
    answer = torch.where(inside, values, eos)
    pad = torch.full((batch, length + 1 - width), eos)
    tokens = torch.cat([x, torch.full((batch, 1), sep), answer, pad], dim=1)  # [B, 2L+2]
    predicted = torch.arange(1, tokens.shape[1])[None, :]  # index of each next token
    mask = (predicted > length) & (predicted <= length + 1 + size[:, None])
    return tokens, mask


def build(sizes: dict) -> CausalLM:
    length = sizes["length"]
    return CausalLM(vocab=length + 2, max_len=2 * length + 2, dim=sizes["dim"], heads=sizes["heads"], depth=sizes["depth"])


def loss(model, batch):
    """Next-token cross-entropy on the target tokens only."""
    tokens, mask = batch
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits[mask], tokens[:, 1:][mask])


@torch.no_grad()
def answers(model: CausalLM, x: torch.Tensor) -> torch.Tensor:
    """``[B]`` the last token before ``EOS`` of the greedy continuation of ``x SEP`` (-1 if none)."""
    length = x.shape[1]
    out = greedy_decode(model, torch.cat([x, torch.full((len(x), 1), length, device=x.device)], dim=1), length + 1, eos=length + 1)
    tokens = (out != length + 1).long().sum(1)  # tokens before the first EOS (rows are padded with EOS)
    last = out.gather(1, (tokens - 1).clamp(min=0)[:, None])[:, 0]
    return torch.where(tokens > 0, last, -1)


def train_seq2seq(target: str, profile: str, seed: int):
    """Train (or load) the answer-only or scratch-pad model; ``(model, metrics)`` with accuracy per test hop count."""
    sizes = by_profile(SIZES, profile)
    cfg = TrainConfig(steps=sizes["steps"], batch_size=sizes["batch_size"], lr=sizes["lr"], seed=seed)
    run = Run(f"hut/scratchpad/{target}", {"target": target, "sizes": sizes, "train": cfg.as_dict()}, profile, code=CODE)

    def batches(step):
        x, _, _ = cpvr.sample(cfg.batch_size, sizes["length"], list(sizes["train_hops"]), seed=cfg.seed * 1_000_003 + step)
        return encode(x, target)

    def evaluate(model):
        model.eval()
        x, m, label = test_set(sizes["length"], sizes["test_hops"], sizes["n_test"])
        correct = (answers(model, x.to(default_device())).cpu() == label).float()
        return {"accuracy": {str(h): correct[m == h].mean().item() for h in sizes["test_hops"]}}

    return train_run(run, lambda: build(sizes), loss, batches, cfg, evaluate)


def scratchpad(profile: str, seed: int = 0, targets: Sequence[str] = TARGETS) -> pd.DataFrame:
    """One row per (target, test hop count): accuracy, and whether the hop count was trained on."""
    sizes = by_profile(SIZES, profile)
    rows = []
    for target in targets:
        _, metrics = train_seq2seq(target, profile, seed)
        for h, a in metrics["accuracy"].items():
            split = "in distribution" if int(h) <= max(sizes["train_hops"]) else "out of distribution"
            rows.append({"target": LABELS[target], "hops": int(h), "accuracy": a, "split": split})
    return pd.DataFrame(rows)


def train_all(profile: str, seed: int = 0) -> None:
    scratchpad(profile, seed)
