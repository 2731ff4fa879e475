"""hut-7's seq2seq stand-in: relative positions, the two decoding rules, the smoke run."""

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from ponder.models.seq2seq import CausalLM, RelativeBias, greedy_decode
from ponder.profiles import PROFILES, by_profile
from ponder.studies.hyper_ut import scratchpad as S
from ponder.studies.hyper_ut.analysis import scratchpad as SA
from ponder.tasks import cpvr, cpvr_decoys

LENGTH = 10  # the worked example's: x = [3, 9, 4, 6, 0, 2, 8, 1, 5, 7], 0 -> 3 -> 6 -> 8, label 5
SEP, EOS = LENGTH, LENGTH + 1
WORKED = torch.tensor([[3, 9, 4, 6, 0, 2, 8, 1, 5, 7]])


def relative_model(seed: int = 0) -> CausalLM:
    torch.manual_seed(seed)
    return CausalLM(vocab=LENGTH + 2, length=LENGTH, dim=16, heads=2, depth=2, positions="relative", clip=2)


# -- relative positions ----------------------------------------------------------------------
def test_relative_bias_depends_only_on_the_clipped_distance():
    torch.manual_seed(0)
    relative = RelativeBias(heads=3, clip=2)
    nn.init.normal_(relative.bias)
    b = relative(7, causal=True)
    assert b.shape == (3, 7, 7)
    for i in range(7):
        for j in range(7):
            if j > i:
                assert torch.isinf(b[:, i, j]).all() and (b[:, i, j] < 0).all()
            else:
                torch.testing.assert_close(b[:, i, j], relative.bias[:, min(i - j, 2)])
    torch.testing.assert_close(relative(5, causal=True), b[:, :5, :5])  # a shorter sequence reads the same entries
    torch.testing.assert_close(relative(7, causal=False), relative(7, causal=False).transpose(1, 2))


def test_relative_positions_share_one_vector_after_the_source():
    model = relative_model()
    assert model.positions.shape == (LENGTH + 1, 16)
    assert model.position_ids(14).tolist() == list(range(LENGTH)) + [LENGTH] * 4


def test_a_model_trained_on_short_sequences_runs_on_longer_ones():
    from ponder.runner.training import TrainConfig, train

    model = relative_model()
    x, _, _ = cpvr.sample(16, LENGTH, [1, 2], seed=0)
    batch = S.encode(x, "scratchpad")
    assert batch[0].shape[1] <= LENGTH + 5  # at most 2 hops: SEP, 3 values, EOS
    train(model, S.loss, lambda step: batch, TrainConfig(steps=3, batch_size=16))
    long = torch.randint(LENGTH, (4, 3 * LENGTH))
    logits = model(long)
    assert logits.shape == (4, 3 * LENGTH, LENGTH + 2) and torch.isfinite(logits).all()
    absolute = CausalLM(vocab=LENGTH + 2, length=2 * LENGTH + 2, dim=16, heads=2, depth=1)
    with pytest.raises(ValueError, match="longer than length"):
        absolute(long)


def test_relative_attention_is_causal():
    model = relative_model()
    s = torch.randint(LENGTH, (2, 15))
    changed = s.clone()
    changed[:, 12:] = (changed[:, 12:] + 1) % LENGTH
    torch.testing.assert_close(model(s)[:, :12], model(changed)[:, :12])


def test_bad_positions_raise_naming_them():
    with pytest.raises(ValueError, match="positions"):
        CausalLM(vocab=4, length=4, dim=8, heads=2, depth=1, positions="rotary")
    with pytest.raises(ValueError, match="clip"):
        RelativeBias(heads=2, clip=0)


# -- decoding ---------------------------------------------------------------------------------
class Scripted(nn.Module):
    """A stand-in model that emits ``script[k]`` as its ``k``-th new token after a prompt of ``prompt`` tokens."""

    def __init__(self, script: list[int], prompt: int = LENGTH + 1, vocab: int = LENGTH + 2):
        super().__init__()
        self.script, self.prompt, self.vocab = script, prompt, vocab

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        logits = torch.zeros(len(s), s.shape[1], self.vocab)
        logits[:, -1, self.script[s.shape[1] - self.prompt]] = 1.0
        return logits


def test_walk_ends_at_the_first_value_that_is_not_a_forward_pointer():
    walk = torch.tensor([[3, 6, 8, 5]])  # read at 0, 3, 6, 8
    assert [S.walk_ends(walk[:, :k]).item() for k in range(1, 5)] == [False, False, False, True]
    assert S.walk_ends(torch.tensor([[0]])).item()  # x[0] = 0: no hop, the label is read at 0


def test_a_walk_that_ends_correctly_is_answered_alike_by_both_rules():
    model = Scripted([3, 6, 8, 5, EOS, EOS])
    assert S.answers(model, WORKED, "eos").item() == 5
    assert S.answers(model, WORKED, "task").item() == 5


def test_a_walk_that_overshoots_is_cut_by_the_task_rule():
    model = Scripted([3, 6, 8, 5, 2, 9, EOS])  # the walk ended at 5; EOS comes two values late
    assert S.answers(model, WORKED, "eos").item() == 9
    assert S.answers(model, WORKED, "task").item() == 5


def test_the_task_rule_never_chooses_eos():
    model = Scripted([3, EOS] + [0] * LENGTH)  # EOS masked: the argmax over the values is 0 (ties: the first)
    assert greedy_decode(model, torch.cat([WORKED, torch.tensor([[SEP]])], 1), LENGTH + 1, EOS).tolist() == [[3, EOS]]
    assert S.answers(model, WORKED, "task").item() == 0  # 3, then 0 <= 3 ends the walk


def reference_decode(model: nn.Module, prompt: torch.Tensor, max_new: int, eos: int) -> list[list[int]]:
    """Greedy decoding one row at a time until ``eos``, padded with ``eos``: what :func:`greedy_decode`
    did before its rules."""
    rows = []
    for p in prompt:
        s, out = p[None], []
        while len(out) < max_new and (not out or out[-1] != eos):
            out.append(model(s)[0, -1].argmax().item())
            s = torch.cat([s, torch.tensor([[out[-1]]])], dim=1)
        rows.append(out)
    width = max(len(r) for r in rows)
    return [r + [eos] * (width - len(r)) for r in rows]


@pytest.mark.parametrize("positions, eos_bias", [("absolute", 0.0), ("relative", 0.8)])
def test_eos_decoding_is_unchanged(positions, eos_bias):
    torch.manual_seed(1)
    model = CausalLM(vocab=LENGTH + 2, length=2 * LENGTH + 2, dim=16, heads=2, depth=2, positions=positions).eval()
    with torch.no_grad():
        model.head.bias[EOS] = eos_bias  # some rows stop early, some run to max_new
    x, _, _ = cpvr.sample(12, LENGTH, [1, 2, 3], seed=0)
    prompt = torch.cat([x, torch.full((12, 1), SEP)], dim=1)
    out = greedy_decode(model, prompt, LENGTH + 1, EOS)
    assert out.tolist() == reference_decode(model, prompt, LENGTH + 1, EOS)
    lengths = (out != EOS).sum(1)
    assert lengths.min() < lengths.max()  # the case is not trivial


# -- the experiment -------------------------------------------------------------------------
def test_smoke_run_reports_both_decodings_and_answer_only_has_one_rule():
    frame = S.scratchpad("smoke")
    sizes = S.SIZES["smoke"]
    assert set(frame["decoding"]) == set(S.DECODING_LABELS.values())
    assert len(frame) == len(sizes["seeds"]) * len(S.TARGETS) * len(S.DECODINGS) * len(sizes["test_hops"])
    answer = frame[frame["target"] == S.LABELS["answer"]].pivot_table(
        index="hops", columns="decoding", values="accuracy"
    )
    assert (answer.iloc[:, 0] == answer.iloc[:, 1]).all()
    assert S.chance("smoke")["hops"].tolist() == list(sizes["test_hops"])


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profiles_test_set_has_a_decoy_chain_and_its_hop_counts(profile):
    """The scratch-pad tests on the Hyper-UT runs' task, C-PVR with a decoy chain, at every hop count its
    profile names."""
    sizes = by_profile(S.SIZES, profile)
    x, hops, label = S.test_set(sizes["length"], sizes["test_hops"], 3)
    assert sorted(set(hops.tolist())) == list(sizes["test_hops"])
    assert all(cpvr.count_hops(row.tolist()) == (h, y) for row, h, y in zip(x, hops.tolist(), label.tolist()))
    assert torch.equal(x, cpvr.fixed_test_set(cpvr_decoys.sample, sizes["length"], sizes["test_hops"], 3)[0])


def test_training_batches_carry_a_decoy_and_hops_beyond_its_room_are_refused(monkeypatch):
    batches = S.seq2seq_recipe(S.seq2seq_run("answer", "smoke", 0).config).batches
    sizes = S.SIZES["smoke"]
    x = cpvr_decoys.sample(sizes["batch_size"], sizes["length"], list(sizes["train_hops"]), seed=1)[0]  # seed 0, step 1
    assert torch.equal(batches(1)[0], S.encode(x, "answer")[0])
    monkeypatch.setitem(S.SIZES, "smoke", dict(sizes, test_hops=(1, 2, 3, 4)))  # length 8 leaves room for 3 hops
    with pytest.raises(ValueError, match="test hops"):
        S.seq2seq_run("answer", "smoke", 0)


# -- the claims --------------------------------------------------------------------------------
PAD, ANSWER, EOS_RULE, TASK_RULE = S.LABELS["scratchpad"], S.LABELS["answer"], *S.DECODING_LABELS.values()


def seq2seq_frame(ood: dict, iid: dict | None = None) -> pd.DataFrame:
    """:func:`S.scratchpad`'s rows for seeds 0..2: per (target, decoding), ``ood``'s per-seed accuracy at hop 3 (out
    of distribution) and, at hops 1 and 2, ``iid``'s per target (1.0 where not given)."""
    iid = iid or {}
    rows = []
    for (target, decoding), accuracies in ood.items():
        inside = iid.get(target, [1.0] * len(accuracies))
        for seed, (a_in, a_out) in enumerate(zip(inside, accuracies)):
            run = {"seed": seed, "target": target, "decoding": decoding}
            rows += [{**run, "hops": h, "accuracy": a_in, "split": "in distribution"} for h in (1, 2)]
            rows.append({**run, "hops": 3, "accuracy": a_out, "split": "out of distribution"})
    return pd.DataFrame(rows)


def ood_accuracies(pad_eos, pad_task, answer) -> dict:
    return {
        (PAD, EOS_RULE): pad_eos,
        (PAD, TASK_RULE): pad_task,
        (ANSWER, EOS_RULE): answer,
        (ANSWER, TASK_RULE): answer,
    }


@pytest.mark.parametrize(
    "pad_eos, pad_task, verdict",
    [([0.8, 0.85, 0.9], [0.7, 0.75, 0.8], "holds"), ([0.4, 0.45, 0.5], [0.4, 0.45, 0.5], "does not hold")],
)
def test_scratchpad_claims_judge_the_scratchpad_against_answer_only_out_of_distribution(pad_eos, pad_task, verdict):
    """hut-7: answer-only scores 0.5-0.6 out of distribution and both models 1.0 on the training hops."""
    rows = SA.scratchpad_claims(seq2seq_frame(ood_accuracies(pad_eos, pad_task, [0.5, 0.55, 0.6])))
    assert [r.target for r in rows] == ["hut-7"] * 5 and all(r.paper is None for r in rows)
    assert [r.verdict and r.verdict.verdict for r in rows] == [verdict] * 3 + [None, None]
    eos, task = np.mean(pad_eos), np.mean(pad_task)
    assert [r.ours for r in rows] == [
        f"{eos:.2f} vs 0.55",
        f"{task:.2f} vs 0.55",
        f"0.45 vs {1 - eos:.2f}",
        "1.00 vs 1.00",
        f"{eos:.2f} vs {task:.2f}",
    ]
    assert "stopped by the task's rule" in rows[1].text and "loses less" in rows[2].text


def test_scratchpad_claims_are_inconclusive_where_a_run_does_not_fit_its_training_hops():
    ood = ood_accuracies([0.8, 0.85, 0.9], [0.8, 0.85, 0.9], [0.5, 0.55, 0.6])
    rows = SA.scratchpad_claims(seq2seq_frame(ood, iid={ANSWER: [1.0, 0.9, 1.0]}))
    assert [r.verdict and r.verdict.verdict for r in rows] == ["inconclusive"] * 3 + [None, None]
    why = "answer only, seed 1: its accuracy on the training hops is 0.90, below 0.95"
    assert all(why in r.verdict.noise and "by the noise rule alone: holds" in r.verdict.noise for r in rows[:3])
    assert rows[3].ours == "1.00 vs 0.97"
