"""How big the HYLA runs are at each profile (:mod:`ponder.studies.hyla.experiments`): the run descriptions
(:class:`Sraven`, :class:`Fuzzy`, :class:`Text`; every field enters the run's config) and their rows per profile.

The dataclass defaults are the official recipe (:mod:`ponder.studies.hyla.experiments` describes it);
``warmup_steps`` counts steps, not a fraction of them. ``paper`` holds the paper's sizes (Table A3,
research notes §4.2).
"""

import math
from dataclasses import dataclass, replace

from ...models.attention import KINDS

MAIN_KINDS = ("softmax", "linear", "hyla")


# per profile, the learning rates × weight decays each kind tries on its base run and the first seed
# (experiments.hyla.tuned; None: the run's own); Table A3 tunes each kind. At gpu, whose sraven runs are the
# only ones inside the paper's regime (10M instances), every kind tries the paper grid's two learning rates at the
# official weight decay, so no kind is ranked at a rate set for another. cpu, which judges the kinds, tries the
# run's rate and the one a factor 3 below it, the paper grid's ratio; quick ranks them at the run's own rate.
TUNING = {
    "smoke": None,
    "quick": None,
    "cpu": {
        "sraven": dict(lr=(1e-3, 3e-3), weight_decay=(0.1,)),
        "fuzzy": dict(lr=(1e-3, 3e-3), weight_decay=(0.03,)),
    },
    "gpu": {
        "sraven": dict(lr=(3e-4, 1e-3), weight_decay=(0.1,)),
        "fuzzy": dict(lr=(1e-3, 3e-3), weight_decay=(0.03,)),
    },
    "paper": {
        "sraven": dict(lr=(3e-4, 1e-3), weight_decay=(0.1, 0.3)),
        "fuzzy": dict(lr=(1e-3, 3e-3), weight_decay=(0.03, 0.1)),
    },
}


@dataclass(frozen=True)
class Recipe:
    """The model parts and optimisation shared by sraven and fuzzy-logic runs; the defaults are the
    official ones (module docstring)."""

    warmup_steps: int = 50
    grad_clip: float = math.inf  # the official recipe does not clip
    code_dropout: float = 0.1  # latent-code dropout in training
    relative_position: bool = True
    relative_buckets: int | None = None  # T5 buckets (= max distance); None: the sequence length, as for sraven
    init: str = "lecun_normal"
    compiled: bool = (
        False  # train with the loss compiled (ponder.runner.gpu.compilation): the same function, fused kernels
    )


# -- sraven ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sraven(Recipe):
    """One sraven run: task, model and optimisation (``width`` multiplies dim, heads and MLP)."""

    kind: str = "hyla"
    k: int = 4
    f: int = 8
    holdout: float = 0.25
    dim: int = 64
    heads: int = 8
    head_dim: int = 4
    depth: int = 2
    width: int = 1
    steps: int = 1000
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.1
    eval_n: int = 1024

    @property
    def instances(self) -> int:
        return self.steps * self.batch_size


# The official model parts and recipe learn too slowly for the quick budget. Fuzzy logic, HYLA,
# width 32, batch 32, OOD R² after 1000 steps (one seed; ignoring the context gives 0.11): 0.56 with
# SMALL_SCALE, 0.39 with the relative position bias, 0.19 with code dropout 0.1, 0.13 with the
# LeCun-normal init; all official parts together: 0.05, still 0.11 after 2000 steps. So the quick
# profile keeps absolute positions, PyTorch's init, clipping at 1 and no code dropout; gpu and paper
# use the official ones (the dataclass defaults).
SMALL_SCALE = dict(code_dropout=0.0, relative_position=False, init="torch", grad_clip=1.0)

# quick: K = 4 stays at chance (all features right) at a CPU budget, so the quick sweeps use the
# smaller-K variant K = 2 (36 rule combinations, 9 held out); K = 4 appears in the K sweep.
SRAVEN = {
    "smoke": Sraven(k=2, dim=16, heads=4, head_dim=4, depth=1, steps=6, batch_size=16, warmup_steps=0, eval_n=64),
    "quick": Sraven(
        k=2,
        dim=32,
        heads=8,
        head_dim=4,
        depth=2,
        steps=800,
        batch_size=64,
        lr=3e-3,
        warmup_steps=40,
        eval_n=512,
        **SMALL_SCALE,
    ),
    # gpu: the paper's K = 4 model (Table A3) at a 4x batch and 10.24M instances, the paper's smallest
    # point (Fig. 4). At 1.5M every kind sat at chance (H100, figures/gpu/RUN.md); at 10.24M (H200,
    # seed 0) softmax reached 49.6 % OOD, linear 43.3 %, HYLA 23.1 %. The captured step runs at
    # 114 steps/s alone and ~150 summed over 3 processes, so a 20k-step run takes 2-3 minutes of the
    # GPU and the sraven runs of the four HYLA notebooks (~385k steps) about 40 minutes, over several
    # calls resuming from the run cache. Compiled: on the H200
    # (figures/gpu/bench-train.json) the compiled captured step ran 194 steps/s summed over
    # 6 processes against 104 (1.86x), and its CUDA test passed. The batch of 512 makes
    # 10.24M a quarter of the paper's updates (78k steps of 128) and HYLA's loss was still falling at the end:
    # batches of 256 or 128 for the same instances are the alternatives to compare on a GPU
    "gpu": Sraven(
        k=4,
        dim=128,
        heads=16,
        head_dim=4,
        depth=4,
        steps=20_000,
        batch_size=512,
        lr=1e-3,
        weight_decay=0.1,
        warmup_steps=150,
        eval_n=8192,
        compiled=True,
    ),
    "paper": Sraven(
        k=4,
        dim=128,
        heads=16,
        head_dim=4,
        depth=4,
        steps=156_250,
        batch_size=128,
        lr=1e-3,
        weight_decay=0.1,
        warmup_steps=1000,
        eval_n=51_200,
    ),
}


# -- fuzzy logic ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Fuzzy(Recipe):
    """One fuzzy-logic run (official ``logic_4var_2term``: L = 4 variables, K = 2 terms)."""

    kind: str = "hyla"
    n_vars: int = 4
    n_terms: int = 2
    length: int = 32  # N, in-context examples including the query
    relative_buckets: int | None = 128  # the official logic configuration's, at every length
    frac_test: float = 0.7
    dim: int = 32
    heads: int = 8
    head_dim: int = 2
    depth: int = 2
    steps: int = 1000
    batch_size: int = 64
    lr: float = 3e-3
    weight_decay: float = 0.03
    eval_n: int = 1024


FUZZY = {
    "smoke": Fuzzy(dim=16, heads=4, head_dim=2, depth=1, length=8, steps=6, batch_size=16, warmup_steps=0, eval_n=64),
    # quick: 1000 steps of batch 32 (32k sequences): HYLA's OOD R² 0.17 / 0.56 / 0.68 after 500 / 1000 / 1500
    "quick": Fuzzy(
        dim=32, heads=8, head_dim=2, depth=2, steps=1000, batch_size=32, warmup_steps=50, eval_n=512, **SMALL_SCALE
    ),
    # gpu: 8,000 steps of batch 128 (1.02M sequences), by a length probe (H200, seeds 0-2, OOD R²
    # HYLA / softmax / linear): at 2,000 steps 0.45 / 0.45 / 0.29, at 8,000 0.73 / 0.63 / 0.51; every kind
    # gains beyond the noise, and HYLA's lead over softmax goes from +0.001 ± 0.051 to +0.107 ± 0.005
    "gpu": Fuzzy(
        dim=128,
        heads=8,
        head_dim=2,
        depth=2,
        steps=8_000,
        batch_size=128,
        lr=3e-3,
        weight_decay=0.03,
        warmup_steps=100,
        eval_n=4096,
    ),
    "paper": Fuzzy(
        dim=128,
        heads=8,
        head_dim=2,
        depth=2,
        steps=50_000,
        batch_size=128,
        lr=3e-3,
        weight_decay=0.03,
        warmup_steps=100,
        eval_n=16_000,
    ),
}
# cpu: quick's runs 16 times longer (512k sequences). The kinds' order changes with length until
# about 8,000 steps (tools/length-probe.py, seeds 0-2, OOD R² HYLA / softmax / linear: 1,000 steps
# 0.38 / 0.51 / 0.34, 4,000 0.66 / 0.66 / 0.53, 8,000 0.74 / 0.71 / 0.59, 16,000 0.80 / 0.77 /
# 0.65, 32,000 0.86 / 0.79 / 0.69), so quick's runs rank how fast the kinds learn and cpu's judge an order
# they keep; none has converged at 32,000, which would cost twice the 55 CPU-minutes these take.
# A peak learning rate of 1e-2 instead of 3e-3 is no shortcut (4,000 steps: 0.64 / 0.65 / 0.37)
FUZZY["cpu"] = replace(FUZZY["quick"], steps=16_000)


# -- language modelling (stand-in for C4) ----------------------------------------------------
@dataclass(frozen=True)
class Text:
    """One byte-level language model on torch's reference documentation (``ponder.tasks.text``)."""

    kind: str = "hyla"
    length: int = 64
    dim: int = 64
    heads: int = 8
    depth: int = 2
    steps: int = 400
    batch_size: int = 32
    lr: float = 3e-3
    weight_decay: float = 0.1
    warmup_steps: int = 15
    grad_clip: float = 1.0
    eval_every: int = 50
    eval_n: int = 128
    # train with the loss compiled (ponder.runner.gpu.compilation), its validation outside the compiled part; in a run's
    # config only where true, so that adopting it on a GPU retrains no other run
    compiled: bool = False


TEXT = {
    "smoke": Text(dim=16, heads=4, depth=1, length=16, steps=6, batch_size=8, warmup_steps=0, eval_every=3, eval_n=16),
    "quick": Text(steps=300),
    "gpu": Text(
        length=128,
        dim=256,
        heads=8,
        depth=4,
        steps=3000,
        batch_size=64,
        lr=1e-3,
        warmup_steps=150,
        eval_every=250,
        eval_n=256,
    ),
    "paper": Text(
        length=128,
        dim=512,
        heads=8,
        depth=6,
        steps=20_000,
        batch_size=256,
        lr=1e-3,
        warmup_steps=1000,
        eval_every=500,
        eval_n=1024,
    ),
}


# -- which runs each target needs -------------------------------------------------------------
ALL_KINDS = tuple(KINDS)
SWEEPS = {
    # instances as fractions of the base run's steps; widths, depths, heads, K, held-out fractions;
    # the attention kinds of Table A1 (quick: the three main ones, the ablations need the paper's budget)
    # ``seeds`` (offsets from the notebook's seed): the comparisons the ledger judges against the seed
    # noise, Table A1's runs (hyla-a1's sraven and fuzzy-logic columns), hyla-6's three language models
    # and hyla-2's held-out drop and term decoding (about 3 and 4 CPU-minutes a seed at quick); the
    # sweeps train on the first seed only
    "smoke": dict(
        fractions=(1.0,),
        widths=(1,),
        depths=(1,),
        heads=(1, 4),
        ks=(2,),
        holdouts=(0.25,),
        lengths=(8,),
        frac_tests=(0.3, 0.7),
        ablations=ALL_KINDS,
        seeds=(0,),
    ),
    # cpu (quick: one seed): sraven's minutes go to the learning curve (4 data sizes, one model size) and fuzzy
    # logic's to longer runs at the paper's N = 32 (the sraven rankings cannot show at this budget,
    # while fuzzy-logic R² is still rising past the trivial level); K = 4 stays at chance here
    "cpu": dict(
        fractions=(0.125, 0.25, 0.5, 1.0),
        widths=(1,),
        depths=(2,),
        heads=(1, 8),
        ks=(2,),
        holdouts=(0.25, 0.75),
        lengths=(32,),
        frac_tests=(0.3, 0.7),
        ablations=MAIN_KINDS,
        seeds=(0, 1, 2, 3, 4),
    ),
    # gpu: every sraven run there is 10.24M instances or a fraction of one (about 3 GPU-minutes a
    # run), so its minutes go to the paper's question at the paper's regime: the
    # three main kinds at 10.24M on 3 seeds (hyla-a1's sraven rows, the one comparison of the paper's
    # regime; with one seed the ledger could only call it inconclusive) and at 2.56M on the first
    # (hyla-4's curve); the sweeps whose points cpu draws (heads, K, held-out fraction) and Table A1's
    # ablations (8 kinds: 16 GPU-minutes more a seed) stay at their base point here, and keep their
    # full grids at paper. The seeds also give hyla-2 and hyla-6 their 3 (18 fuzzy-logic and
    # language-model runs more, about 7 GPU-minutes at the rates the plan borrows for them)
    "gpu": dict(
        fractions=(0.25, 1.0),
        widths=(1,),
        depths=(4,),
        heads=(16,),
        ks=(4,),
        holdouts=(0.25,),
        lengths=(16, 32),
        frac_tests=(0.3, 0.7),
        ablations=MAIN_KINDS,
        seeds=(0, 1, 2),
    ),
    "paper": dict(
        fractions=(0.5, 1.0, 2.0),
        widths=(1, 2, 4),
        depths=(4, 8, 16),
        heads=(1, 2, 4, 8, 16),
        ks=(2, 3, 4, 5),
        holdouts=(0.1, 0.25, 0.5, 0.75, 0.9),
        lengths=(16, 32, 64, 96),
        frac_tests=(0.3, 0.5, 0.7),
        ablations=ALL_KINDS,
        seeds=(0, 1, 2),
    ),
}
SWEEPS["quick"] = dict(SWEEPS["cpu"], seeds=(0,))  # 35 minutes in all: hyla-2 and hyla-6 judged at cpu
