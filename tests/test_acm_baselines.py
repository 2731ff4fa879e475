"""ACM's baselines (MoEfication, token halting, early exits), their MAC counts, and the eSpeak NG speech task."""

import _ctypes
import ctypes
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import ponder
from ponder.models import flops
from ponder.models.audio import FrameTransformer
from ponder.models.avit import AViT
from ponder.models.moe import MoE, balanced_kmeans, split_experts
from ponder.models.transformer import MLP
from ponder.models.vit import ViT
from ponder.models.ztw import ZTWViT, exit_at
from ponder.tasks import speech


def test_moe_split_keeps_the_function_and_top_all_is_dense():
    torch.manual_seed(0)
    moe = MoE(MLP(8, 32), experts=4)
    z = torch.randn(6, 8)
    dense = moe(z)
    split_experts(moe)
    torch.testing.assert_close(moe(z), dense, atol=1e-5, rtol=1e-5)
    moe.top_k = 4
    torch.testing.assert_close(moe(z), dense, atol=1e-5, rtol=1e-5)
    moe.top_k = 1
    moe(z)
    assert moe.macs().tolist() == [8 * 4 + 16 + 2 * 8 * 8] * 6  # router + one expert of 8 units


def test_balanced_kmeans_gives_equal_clusters():
    rows = np.random.default_rng(0).normal(size=(24, 5))
    assign = balanced_kmeans(rows, 4)
    assert np.bincount(assign, minlength=4).tolist() == [6, 6, 6, 6]


def test_halting_that_never_fires_is_the_vit_and_costs_the_same():
    torch.manual_seed(0)
    vit = ViT(image=8, patch=4, dim=8, depth=3, heads=2).eval()
    model = AViT(vit, shift=-1e4).eval()
    x = torch.rand(2, 1, 8, 8)
    torch.testing.assert_close(model(x), vit(x), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(flops.halting_vit(model), flops.vit(vit, 2))


def test_halting_that_fires_at_once_runs_one_block_per_patch():
    torch.manual_seed(0)
    model = AViT(ViT(image=8, patch=4, dim=8, depth=3, heads=2), shift=1e4).eval()
    model(torch.rand(2, 1, 8, 8))
    assert [c.tolist() for c in model.active_counts] == [[5, 5], [1, 1], [1, 1]]  # the class token never halts


def test_early_exits_pick_the_first_confident_head_and_count_its_cost():
    logits = torch.tensor(
        [[[5.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [5.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]
    )  # [exits, B, C]
    assert exit_at(logits, 0.9).tolist() == [0, 1]
    assert exit_at(logits, 0.999).tolist() == [2, 2]
    model = ZTWViT(ViT(image=8, patch=4, dim=8, depth=3, heads=2))
    full = flops.vit(model.vit, 1).item() + sum(h.macs for h in model.heads)
    assert flops.early_exit_vit(model, torch.tensor([2])).item() == full
    first = flops.early_exit_vit(model, torch.tensor([0])).item()
    embed, head, dim, hidden = flops.vit_parts(model.vit)
    assert first == embed + flops.dense_block(5, dim, hidden) + model.heads[0].macs


def test_frame_transformer_flops_match_the_hand_count():
    model = FrameTransformer(frames=3, features=5, classes=2, dim=4, depth=1, heads=1, mlp_ratio=2.0)
    model(torch.randn(2, 3, 5))
    hand = 3 * 5 * 4 + 4 * (4 * 16) + 4 * 2 * 4 * 4 + 4 * 2 * 4 * 8 + 4 * 2
    assert flops.vit(model, 2).tolist() == [hand, hand]


def test_espeak_synthesises_a_word_offline():
    wave = speech._espeak().say("yes", "en-us", 150, 50)
    assert wave.dtype == np.float32 and 0.1 * speech.RATE < len(wave) < 2 * speech.RATE and np.abs(wave).max() > 0.05
    with pytest.raises(ValueError, match="voice"):
        speech._espeak().say("yes", "no-such-voice", 150, 50)


UTTERANCE_HASHES = """
import hashlib, json, sys
from ponder.tasks import speech
order = slice(None, None, int(sys.argv[1]))  # 1: the grid's order, -1: reversed
words = speech.WORDS[:2][order]
rows = speech._generate(words, speech.VOICES[order], speech.RATES[order], speech.PITCHES[order], speech.VERSION)
print(json.dumps({
    f"{words[r['label']]} {r['voice']} {r['rate']} {r['pitch']}": hashlib.sha256(r["wave"].tobytes()).hexdigest()
    for r in rows
}))
"""


def utterance_hashes(step: int) -> dict[str, str]:
    """``{"word voice rate pitch": sha256 of the waveform}`` for two words in every voice, rate and
    pitch, synthesised by a fresh process (eSpeak NG is process-global) in the grid's order
    (``step=1``) or reversed (``step=-1``)."""
    lib = str(Path(ponder.__file__).parents[1])
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [lib, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", UTTERANCE_HASHES, str(step)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_speech_utterances_are_byte_identical_across_processes_and_orders():
    """Each utterance is a function of (word, voice, rate, pitch) alone: the same bytes from
    another fresh process, synthesised in the reverse order (eSpeak NG seeds its breath noise
    from the clock and keeps synthesis state between utterances)."""
    forward, backward = utterance_hashes(1), utterance_hashes(-1)
    assert len(forward) == 2 * len(speech.VOICES) * len(speech.RATES) * len(speech.PITCHES)
    assert sorted(k for k in forward if forward[k] != backward.get(k)) == []


# sha256 of the waveforms of PINNED_GRID (voices with breath noise, the Klatt synthesiser, another accent),
# synthesised by espeakng-loader PINNED_ESPEAK: the same bytes on every generation
PINNED_GRID = (("yes", "seven"), ("en-us+f3", "en+f2", "en+klatt", "en-gb-x-gbcwmd+klatt2"), (150,), (50,))
PINNED_ESPEAK = "0.2.4"
PINNED_WAVES = "b2c41f7d15716c8f1a780adc3bb72f7887a5c8ec551485311c75afaf5979c1bb"


def test_speech_utterances_match_their_pinned_hash():
    from importlib.metadata import version

    if version("espeakng-loader") != PINNED_ESPEAK:
        pytest.skip(f"the hash is pinned for espeakng-loader {PINNED_ESPEAK}, not {version('espeakng-loader')}")
    rows = list(speech._generate(*PINNED_GRID, speech.VERSION))
    assert len(rows) == 8 and [r["label"] for r in rows] == [0] * 4 + [1] * 4
    assert hashlib.sha256(b"".join(r["wave"].tobytes() for r in rows)).hexdigest() == PINNED_WAVES


def test_speech_split_is_by_voice(monkeypatch):
    """Train and test share no voice: the test speakers are :data:`speech.TEST_VOICES`, as CommonVoice's
    unseen speakers."""
    voices = np.array([v for v in speech.VOICES for _ in range(2)])
    fake = {
        "voice": voices,
        "label": np.arange(len(voices)) % 2,
        "wave": [np.full(400, i, np.float32) for i in range(len(voices))],
    }
    monkeypatch.setattr(speech, "utterances", lambda: fake)
    speech._split.cache_clear()
    try:
        train, test = speech._split("train"), speech._split("test")
    finally:
        speech._split.cache_clear()
    heard = lambda waves: {str(voices[int(w[0])]) for w in waves}  # noqa: E731
    assert heard(test[0]) == set(speech.TEST_VOICES) and heard(train[0]) == set(speech.VOICES) - set(speech.TEST_VOICES)
    assert len(train[0]) + len(test[0]) == len(voices) and 0 < len(speech.TEST_VOICES) < len(speech.VOICES)


def test_speech_refuses_an_engine_that_another_module_holds():
    """A library that stays loaded keeps its state between utterances: synthesis must stop."""
    held = ctypes.CDLL(speech._espeak().path)
    try:
        with pytest.raises(RuntimeError, match="stays loaded"):
            speech._espeak().say("yes", "en", 150, 50)
    finally:
        _ctypes.dlclose(held._handle)
    assert len(speech._espeak().say("yes", "en", 150, 50)) > 0


def test_features_and_speech_frames():
    clean = torch.zeros(2, speech.RATE)
    clean[0, 4000:8000] = 0.3
    feats = speech.features(clean + 0.01 * torch.randn(2, speech.RATE))
    assert feats.shape == (2, speech.frames(), speech.MELS) and torch.isfinite(feats).all()
    voiced = speech.speech_frames(clean)
    assert voiced[1].sum() == 0 and 10 <= voiced[0].sum() <= 13  # 4000 samples = 12.5 hops
