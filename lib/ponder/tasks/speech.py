"""Spoken words synthesised with eSpeak NG: a stand-in for CommonVoice (ACM's second modality).

The twenty core words of Speech Commands (ten commands and the digits "zero" to "nine", with
near-homophones such as "no"/"go", "on"/"one", "off"/"up") are spoken by eSpeak NG — the library
and its voice data come with the PyPI package ``espeakng-loader``, nothing is installed
system-wide — with 16 voices (8 English accents, with eSpeak NG's voice variants), 4 speaking
rates and 3 pitches: 3,840 utterances. The split is by speaker, as CommonVoice's: the 4 voices
of :data:`TEST_VOICES` are heard only at test. Each utterance is pasted at a random offset into a
one-second clip and white noise is added at a random signal-to-noise ratio of 0–20 dB, so every
clip has speech *and* silence; the test set renders every test utterance :data:`TEST_COPIES`
times. Features are log-mel spectrogram frames (25 ms windows, 20 ms hop, 40 mel bands); a
model sees one token per frame.

* :func:`utterances` — the synthesised words (cached as a ``datasets.Dataset``), split by voice;
* :func:`clips` — one split as fixed clips, :func:`fixed_features` their frames (made once per process);
  :func:`sample` — fresh training clips from a seed;
* :func:`features` — waveform → log-mel frames; :func:`speech_frames` — which frames hold speech.
"""

import _ctypes
import ctypes
import math
import os
from functools import lru_cache

import numpy as np
import torch

from .. import exact
from ..checks import check_choice, check_int
from ..paths import data_cache_dir

VERSION = (
    "3"  # 2: a fresh engine and a fixed noise seed per utterance (byte-identical generations); 3: 20 words, 16 voices
)
WORDS = (
    "yes",
    "no",
    "up",
    "down",
    "left",
    "right",
    "on",
    "off",
    "stop",
    "go",
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
)
VOICES = (
    "en-us",
    "en-us+f3",
    "en-us+m7",
    "en",
    "en+f2",
    "en+m3",
    "en+klatt",
    "en-gb-scotland",
    "en-gb-scotland+f4",
    "en-gb-x-rp+m2",
    "en-gb-x-rp+f1",
    "en-029+m4",
    "en-029+f5",
    "en-us-nyc+m1",
    "en-gb-x-gbclan+m5",
    "en-gb-x-gbcwmd+klatt2",
)
TEST_VOICES = VOICES[3::4]  # speakers heard only at test: en, en-gb-scotland, en-029+m4, en-gb-x-gbcwmd+klatt2
TEST_COPIES = 6  # renderings (offset, noise) of each test utterance
SNR_DB = (0.0, 20.0)  # range of the clips' signal-to-noise ratio
RATES = (120, 150, 180, 210)
PITCHES = (30, 50, 70)
RATE = 16_000  # samples per second of the clips
CLIP_SECONDS = 1.0
WINDOW, HOP, MELS = 400, 320, 40  # 25 ms, 20 ms, mel bands
SPLITS = ("train", "test")
NOISE_SEED = 1  # eSpeak NG's breath-noise generator, seeded afresh for every utterance


class _ESpeak:
    """Minimal ctypes binding: synchronous synthesis into a callback that collects 16-bit samples.

    Every utterance gets a fresh engine, so that it is a function of (text, voice, rate, pitch)
    alone and the same bytes in every process: eSpeak NG keeps synthesis state in C statics that
    no API call resets (the pitch flutter's phase, the glottal cycle count behind a voice's
    roughness, the gain control, the breath resonators), so the same word twice in one process
    differed, and it seeds the generator of the breath noise (voices with ``breath``, here
    ``+f2`` and ``+f3``) from the clock in ``espeak_Initialize``. :meth:`say` therefore loads the
    library, initialises it, seeds the noise with :data:`NOISE_SEED`, synthesises, and unloads the
    library (``dlclose``: its statics start afresh at the next load; about 5 ms). None of
    :data:`VOICES` uses the speechPlayer generator, the one part that draws libc ``rand()``.
    """

    def __init__(self):
        import espeakng_loader

        self.path = espeakng_loader.get_library_path()
        self.data = espeakng_loader.get_data_path().encode()
        callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)
        self.chunks: list[np.ndarray] = []
        self._callback = callback(self._collect)  # kept alive as long as the binding

    def _collect(self, wave, count, events) -> int:
        if count > 0:
            self.chunks.append(np.ctypeslib.as_array(wave, shape=(count,)).copy())
        return 0

    def _load(self) -> tuple[ctypes.CDLL, int]:
        """A freshly loaded, initialised engine with its noise seeded, and its sample rate."""
        lib = ctypes.CDLL(self.path)
        rate = lib.espeak_Initialize(2, 0, self.data, 0)  # 2: synchronous
        if rate <= 0:
            raise RuntimeError("eSpeak NG failed to initialise")
        lib.espeak_SetSynthCallback(self._callback)
        lib.espeak_Synth.argtypes = [
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
        lib.espeak_ng_SetRandSeed(NOISE_SEED)
        return lib, rate

    def _unload(self, lib: ctypes.CDLL) -> None:
        """Terminate and unload the engine; refuse to go on if the library stays loaded (another
        module holds it), since its state would then carry over to the next utterance."""
        lib.espeak_Terminate()
        _ctypes.dlclose(lib._handle)
        try:
            still = ctypes.CDLL(self.path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            return
        _ctypes.dlclose(still._handle)
        raise RuntimeError(
            f"{self.path} stays loaded (another module holds it): eSpeak NG's state would carry over between utterances"
        )

    def say(self, text: str, voice: str, rate: int, pitch: int) -> np.ndarray:
        """Float waveform in ``[-1, 1]`` at :data:`RATE`, from a fresh engine."""
        lib, engine_rate = self._load()
        try:
            if lib.espeak_SetVoiceByName(voice.encode()) != 0:
                raise ValueError(f"eSpeak NG has no voice {voice!r}")
            lib.espeak_SetParameter(1, rate, 0)  # espeakRATE, words per minute
            lib.espeak_SetParameter(3, pitch, 0)  # espeakPITCH, 0..100
            self.chunks = []
            data = text.encode()
            lib.espeak_Synth(data, len(data) + 1, 0, 1, 0, 0, None, None)
            lib.espeak_Synchronize()
        finally:
            self._unload(lib)
        wave = np.concatenate(self.chunks).astype(np.float32) / 32768.0
        positions = np.arange(0, len(wave) - 1, engine_rate / RATE)  # linear resampling to RATE
        return np.interp(positions, np.arange(len(wave)), wave).astype(np.float32)


@lru_cache(maxsize=1)
def _espeak() -> _ESpeak:
    return _ESpeak()


def _generate(words, voices, rates, pitches, version):
    engine = _espeak()
    for w, word in enumerate(words):
        for voice in voices:
            for rate in rates:
                for pitch in pitches:
                    wave = engine.say(word, voice, rate, pitch)
                    keep = np.nonzero(np.abs(wave) > 0.01)[0]  # trim eSpeak's leading/trailing silence
                    wave = wave[keep[0] : keep[-1] + 1][: int(0.8 * RATE)]
                    yield {"wave": wave, "label": w, "voice": voice, "rate": rate, "pitch": pitch}


@lru_cache(maxsize=1)
def utterances():
    """Every (word, voice, rate, pitch) utterance as a cached ``datasets.Dataset`` (3,840 rows)."""
    import datasets

    return datasets.Dataset.from_generator(
        _generate,
        gen_kwargs={"words": WORDS, "voices": VOICES, "rates": RATES, "pitches": PITCHES, "version": VERSION},
        cache_dir=str(data_cache_dir()),
    ).with_format("numpy")


@lru_cache(maxsize=2)
def _split(split: str) -> tuple[list[np.ndarray], torch.Tensor]:
    """The utterances of a split's voices (:data:`TEST_VOICES` or the others), in the grid's order."""
    data = utterances()
    voices = data["voice"]
    idx = [i for i, voice in enumerate(voices) if (voice in TEST_VOICES) == (split == "test")]
    waves, labels = data["wave"], data["label"]
    return [np.asarray(waves[i], dtype=np.float32) for i in idx], torch.as_tensor(
        np.asarray(labels)[idx], dtype=torch.long
    )


def _clips(waves: list[np.ndarray], picks: list[int], generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Paste each picked utterance at a random offset into a noisy clip; also return the clean speech."""
    length = int(CLIP_SECONDS * RATE)
    clean = torch.zeros(len(picks), length)
    for row, i in enumerate(picks):
        wave = torch.from_numpy(waves[i])
        wave = wave / wave.abs().max().clamp_min(1e-6) * 0.5
        offset = int(torch.randint(0, length - len(wave) + 1, (1,), generator=generator))
        clean[row, offset : offset + len(wave)] = wave
    low, high = SNR_DB
    snr_db = low + (high - low) * torch.rand(len(picks), 1, generator=generator)
    power = clean.pow(2).sum(1, keepdim=True) / (clean != 0).sum(1, keepdim=True).clamp_min(1)
    noise = torch.randn(clean.shape, generator=generator) * exact.sqrt(power / 10 ** (snr_db / 10))
    return clean + noise, clean


def clips(split: str, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A fixed set: noisy clips ``[n, RATE]``, labels ``[n]``, clean speech ``[n, RATE]`` (for speech masks).

    The test split renders each utterance :data:`TEST_COPIES` times (all once, then again, ...)."""
    check_choice("split", split, SPLITS)
    waves, labels = _split(split)
    picks = list(range(len(waves))) * (TEST_COPIES if split == "test" else 1)
    noisy, clean = _clips(waves, picks, torch.Generator().manual_seed(7919 * seed + SPLITS.index(split)))
    return noisy, labels[picks], clean


@lru_cache(maxsize=2)
def _fixed_features(split: str, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    noisy, labels, _ = clips(split, seed)
    return features(noisy), labels


def fixed_features(split: str, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`clips`' log-mel frames ``[n, frames, MELS]`` and labels, made once per process (the
    5,760 test clips take about 8 s and 0.7 GB; only their 45 MB of features are kept); copies."""
    return tuple(t.clone() for t in _fixed_features(split, seed))


def sample(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` training clips (log-mel features ``[n, frames, MELS]``) and labels, a function of ``seed``."""
    check_int("n", n, minimum=1)
    waves, labels = _split("train")
    generator = torch.Generator().manual_seed(seed)
    picks = torch.randint(0, len(waves), (n,), generator=generator).tolist()
    noisy, _ = _clips(waves, picks, generator)
    return features(noisy), labels[picks]


@lru_cache(maxsize=1)
def _mel_filters() -> torch.Tensor:
    """``[WINDOW // 2 + 1, MELS]`` triangular mel filters between 50 Hz and 8 kHz."""
    mel = lambda f: 2595 * math.log10(1 + f / 700)  # noqa: E731
    edges = 700 * (10 ** (torch.linspace(mel(50), mel(RATE / 2), MELS + 2) / 2595) - 1)
    freqs = torch.linspace(0, RATE / 2, WINDOW // 2 + 1)
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    up = (freqs - lower) / (centre - lower)
    down = (upper - freqs) / (upper - centre)
    return torch.clamp(torch.minimum(up, down), min=0).T


def features(wave: torch.Tensor) -> torch.Tensor:
    """``[n, samples] -> [n, frames, MELS]``: log-mel energies, 25 ms windows every 20 ms."""
    spectrum = torch.stft(
        wave, n_fft=WINDOW, hop_length=HOP, window=torch.hann_window(WINDOW), center=False, return_complex=True
    )
    power = spectrum.abs().pow(2).transpose(1, 2)  # [n, frames, freqs]
    return torch.log(power @ _mel_filters() + 1e-6)


def speech_frames(clean: torch.Tensor) -> torch.Tensor:
    """``[n, samples] -> [n, frames]`` bool: frames whose window overlaps the pasted utterance."""
    voiced = (clean != 0).float().unfold(1, WINDOW, HOP).mean(-1)
    return voiced > 0.5


def frames() -> int:
    return (int(CLIP_SECONDS * RATE) - WINDOW) // HOP + 1
