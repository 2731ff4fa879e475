"""hut-7: answer-only vs scratch-pad for a small seq2seq model trained from scratch on C-PVR with a decoy chain.

The paper fine-tunes a pre-trained T5 with and without a scratch-pad; no pre-trained weights
can be had offline, so this is a stand-in: a decoder-only prefix model
(``ponder.models.seq2seq``) trained from scratch. Targets, for an example with chain
``0 -> p_1 -> ... -> p_M`` and label ``y = x[p_M]``:

* ``answer``:     ``SEP y EOS``
* ``scratchpad``: ``SEP p_1 p_2 .. p_M y EOS``  (every value read along the walk, then the label)

The task is the Hyper-UT runs' (:mod:`ponder.tasks.cpvr_decoys`): beside the real chain a decoy chain
that pruning dead ends cannot remove in fewer rounds than hops, so an answer-only model cannot score
beyond its training hops without following the chain. Train on hops ``1..K``, test on ``1..H``. Two ways
to decode (``DECODINGS``), both greedy:

* ``eos``:  stop at ``EOS``; the answer is the last token before it.
* ``task``: stop by the task's own rule: the walk ends at the first value ``v_k`` that is not
  a forward pointer, ``v_k <= v_{k-1}`` (``v_0 = 0``, the position the walk starts at).
  The answer-only target writes no walk, so ``EOS`` is its only stop: there both rules are one.

The model's positions extrapolate (``positions="relative"``, ``ponder.models.seq2seq``): a
longer target reads no position it was not trained on.
"""

from collections.abc import Sequence

import pandas as pd
import torch
import torch.nn.functional as F

from ...checks import check_choice, check_int
from ...models.seq2seq import CausalLM, greedy_decode
from ...profiles import by_profile, run_sizes
from ...runner.specs import Recipe, Spec
from ...runner.training import TrainConfig, default_device
from ...tasks import cpvr, cpvr_decoys
from .sizes.scratchpad import SIZES

TARGETS = ("answer", "scratchpad")
LABELS = {"answer": "answer only", "scratchpad": "scratch-pad"}
TRAINER = "hyper_ut_scratchpad.train_seq2seq"  # what the runs' times are recorded under (figures/TIMES.json)
DECODINGS = ("eos", "task")
DECODING_LABELS = {"eos": "stop at EOS", "task": "stop by the task's rule"}


def test_set(length: int, hops: Sequence[int], n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``x, hops, label``: ``n`` examples with a decoy chain per hop count, fixed
    (:func:`ponder.tasks.cpvr.fixed_test_set` of :func:`ponder.tasks.cpvr_decoys.sample`)."""
    return cpvr.fixed_test_set(cpvr_decoys.sample, length, hops, n)[:3]


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
    """``(tokens [B, L+2+K], loss mask [B, L+1+K])``: source, ``SEP``, the target, ``EOS``, ``EOS`` padding.

    ``K`` is the longest target in the batch (in values); the mask marks the positions whose
    *next* token is a target token or the first ``EOS``. Causal attention makes the padding
    after a row's ``EOS`` invisible to every position the loss reads.
    """
    check_choice("target", target, TARGETS)
    batch, length = x.shape
    sep, eos = length, length + 1
    values, size = walk(x)
    if target == "answer":
        values, size = values.gather(1, (size - 1)[:, None]), torch.ones_like(size)
    width = int(size.max())
    inside = torch.arange(width)[None, :] < size[:, None]  # [B, K]
    answer = torch.where(inside, values[:, :width], eos)
    tokens = torch.cat([x, torch.full((batch, 1), sep), answer, torch.full((batch, 1), eos)], dim=1)  # [B, L+2+K]
    predicted = torch.arange(1, tokens.shape[1])[None, :]  # index of each next token
    mask = (predicted > length) & (predicted <= length + 1 + size[:, None])
    return tokens, mask


def build(sizes: dict) -> CausalLM:
    """The model of ``sizes``: absolute positions cover the longest sequence ``2L+2``, relative ones
    the source ``L``."""
    length = sizes["length"]
    covered = length if sizes["positions"] == "relative" else 2 * length + 2
    return CausalLM(
        vocab=length + 2,
        length=covered,
        dim=sizes["dim"],
        heads=sizes["heads"],
        depth=sizes["depth"],
        positions=sizes["positions"],
        clip=sizes["clip"],
    )


def loss(model, batch):
    """Next-token cross-entropy on the target tokens only."""
    tokens, mask = batch
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits[mask], tokens[:, 1:][mask])


def walk_ends(out: torch.Tensor) -> torch.Tensor:
    """``[B, k]`` values emitted so far -> ``[B]``: did the walk end at the last one?

    The ``k``-th value was read at position ``v_{k-1}`` (``v_0 = 0``); it ends the walk when it
    is not a forward pointer: ``v_k <= v_{k-1}``.
    """
    read_at = out[:, -2] if out.shape[1] > 1 else torch.zeros_like(out[:, -1])
    return out[:, -1] <= read_at


@torch.no_grad()
def answers(model: CausalLM, x: torch.Tensor, decoding: str = "eos") -> torch.Tensor:
    """``[B]`` the last token of the greedy continuation of ``x SEP`` before it stops (-1 if none).

    ``eos``: it stops at ``EOS``. ``task``: it chooses among the values ``0..L-1`` only and stops
    when the walk ends (:func:`walk_ends`); the values rise strictly until then, so every row
    stops within ``L`` tokens.
    """
    length = x.shape[1]
    eos = length + 1
    rule = dict(ends=walk_ends, choices=length) if check_choice("decoding", decoding, DECODINGS) == "task" else {}
    out = greedy_decode(
        model, torch.cat([x, torch.full((len(x), 1), length, device=x.device)], dim=1), length + 1, eos=eos, **rule
    )
    tokens = (out != eos).long().sum(1)  # tokens before the first EOS (rows are padded with EOS)
    last = out.gather(1, (tokens - 1).clamp(min=0)[:, None])[:, 0]
    return torch.where(tokens > 0, last, -1)


def seq2seq_run(target: str, profile: str, seed: int) -> Spec:
    """The answer-only or scratch-pad model, declared (:mod:`ponder.runner.specs`; its training:
    :func:`seq2seq_recipe`)."""
    sizes = by_profile(SIZES, profile)
    check_int("test hops", max(sizes["test_hops"]), maximum=cpvr_decoys.max_hops(sizes["length"]))
    cfg = TrainConfig(steps=sizes["steps"], batch_size=sizes["batch_size"], lr=sizes["lr"], seed=seed)
    config = {"target": target, "sizes": run_sizes(sizes), "train": cfg.as_dict()}
    return Spec(f"hut/scratchpad/{target}", config, profile, (__name__,), seq2seq_recipe, TRAINER)


def seq2seq_recipe(config: dict) -> Recipe:
    """How a run of ``config`` (:func:`seq2seq_run`) trains: next-token cross-entropy on its target's tokens of
    fresh C-PVR examples each step; evaluated by greedy decoding on the test set, per decoding rule and hop count."""
    sizes, target, cfg = config["sizes"], config["target"], TrainConfig(**config["train"])

    def batches(step):
        x = cpvr_decoys.sample(
            cfg.batch_size, sizes["length"], list(sizes["train_hops"]), seed=cfg.seed * 1_000_003 + step
        )[0]
        return encode(x, target)

    def evaluate(model):
        model.eval()
        x, m, label = test_set(sizes["length"], sizes["test_hops"], sizes["n_test"])

        def per_hop(decoding):
            correct = (answers(model, x.to(default_device()), decoding).cpu() == label).float()
            return {str(h): correct[m == h].mean().item() for h in sizes["test_hops"]}

        accuracy = {"eos": per_hop("eos")}
        # the answer-only target writes no walk: EOS is its only stop, so the two rules are one
        accuracy["task"] = per_hop("task") if target == "scratchpad" else accuracy["eos"]
        return {"accuracy": accuracy}

    return Recipe(lambda: build(sizes), loss, batches, cfg, evaluate)


def train_seq2seq(target: str, profile: str, seed: int):
    """Train (or load) the answer-only or scratch-pad model (:func:`seq2seq_run`); ``(model, metrics)`` with accuracy
    per decoding and test hop count."""
    return seq2seq_run(target, profile, seed)()


def scratchpad(profile: str, seed: int = 0, targets: Sequence[str] = TARGETS) -> pd.DataFrame:
    """One row per (seed, target, decoding, test hop count): accuracy, and whether the hop count was trained on.

    The seeds are ``seed + s`` for ``s`` in the profile's ``seeds``.
    """
    sizes = by_profile(SIZES, profile)
    rows = []
    for s in sizes["seeds"]:
        for target in targets:
            metrics = seq2seq_run(target, profile, seed + s).metrics()
            for decoding, accuracy in metrics["accuracy"].items():
                for h, a in accuracy.items():
                    split = "in distribution" if int(h) <= max(sizes["train_hops"]) else "out of distribution"
                    rows.append(
                        {
                            "seed": seed + s,
                            "target": LABELS[target],
                            "decoding": DECODING_LABELS[decoding],
                            "hops": int(h),
                            "accuracy": a,
                            "split": split,
                        }
                    )
    return pd.DataFrame(rows)


def chance(profile: str) -> pd.DataFrame:
    """Per test hop count (``hops``), the accuracy of always answering the test set's most frequent label."""
    sizes = by_profile(SIZES, profile)
    _, m, label = test_set(sizes["length"], sizes["test_hops"], sizes["n_test"])
    majority = cpvr.majority_accuracy(m, label)
    return pd.DataFrame({"hops": list(majority), "chance (majority label)": list(majority.values())})
