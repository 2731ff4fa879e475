"""The knobs the survey's widget notebook turns on the trained models (:mod:`ponder.studies.survey.widgets`): UT+ACT's
halting bias, early exit's threshold and Mixture-of-Depths' capacity on C-PVR, and the ponder weight of parity's ACT
and PonderNet (which trains a run not cached yet).

Nothing here defines a run, so nothing here is part of a run's cache key
(:func:`ponder.runner.runs.import_closure`): an edit retrains no run."""

from contextlib import contextmanager

import pandas as pd
import torch

from ....models.mod import block_macs, mod_macs
from ....profiles import by_profile
from ...hyper_ut import cpvr as hyper_ut
from ...hyper_ut.cpvr import per_hop
from .. import parity as survey_parity
from ..cpvr import train_early_exit, train_mod
from ..sizes.cpvr import SURVEY
from .parity import run_frame


@contextmanager
def shifted_halting_bias(unit: torch.nn.Module, offset: float):
    """Temporarily add ``offset`` to a halting unit's bias (negative: halt later, "deep start")."""
    with torch.no_grad():
        unit.linear.bias += offset
    try:
        yield unit
    finally:
        with torch.no_grad():
            unit.linear.bias -= offset


def knob_settings(profile: str, seed: int = 0) -> pd.DataFrame:
    """A few settings of each knob (:func:`knob_halting_bias`, :func:`knob_exit_threshold`, :func:`knob_mod_capacity`):
    a row per setting with the mean accuracy over the test hop counts and the mean compute (MoD's relative MACs, the
    others' steps or layers)."""
    capacity = by_profile(SURVEY, profile)["table_capacity"]
    settings = [
        *(("UT+ACT halting-bias shift", shift, knob_halting_bias) for shift in (-2.0, 0.0, 2.0)),
        *(("early-exit threshold", threshold, knob_exit_threshold) for threshold in (0.5, 0.9, 0.99)),
        *((f"MoD capacity (trained at {capacity:g})", c, knob_mod_capacity) for c in (0.25, 0.5, 1.0)),
    ]
    rows = []
    for setting, knob, measure in settings:
        frame = measure(profile, knob, seed)
        compute = frame["macs" if "macs" in frame else "steps"].mean()
        rows.append({"setting": setting, "knob": knob, "accuracy": frame["accuracy"].mean(), "compute": compute})
    return pd.DataFrame(rows)


def knob_halting_bias(profile: str, offset: float, seed: int = 0) -> pd.DataFrame:
    """UT+ACT on C-PVR with its trained halting bias shifted by ``offset``: accuracy and steps per hop."""
    sizes = by_profile(hyper_ut.SIZES, profile)
    model, _ = hyper_ut.train_cpvr("ut_act", profile, seed)
    with shifted_halting_bias(model.depth.halting, offset):
        metrics = per_hop(model, sizes["length"], sizes["test_hops"], sizes["n_test"])
    return hyper_ut.frame(metrics, knob=offset)


def knob_exit_threshold(profile: str, threshold: float, seed: int = 0) -> pd.DataFrame:
    """The early-exit Transformer at ``threshold``: accuracy and layers per hop."""
    sizes = by_profile(hyper_ut.SIZES, profile)
    model, _ = train_early_exit(profile, seed)
    model.threshold = threshold
    return hyper_ut.frame(per_hop(model, sizes["length"], sizes["test_hops"], sizes["n_test"]), knob=threshold)


def knob_mod_capacity(profile: str, capacity: float, seed: int = 0) -> pd.DataFrame:
    """The MoD model trained at the table's capacity, run at ``capacity``: accuracy per hop, relative MACs."""
    sizes, survey = by_profile(hyper_ut.SIZES, profile), by_profile(SURVEY, profile)
    m, tokens = sizes["model"], sizes["length"] + 1
    model, _ = train_mod(profile, survey["table_capacity"], seed)
    model.core.set_capacity(capacity)
    try:
        metrics = per_hop(model, sizes["length"], sizes["test_hops"], sizes["n_test"])
    finally:
        model.core.set_capacity(survey["table_capacity"])
    macs = mod_macs(tokens, m["dim"], m["steps"], capacity, m["mlp_ratio"]) / (
        m["steps"] * block_macs(tokens, m["dim"], m["mlp_ratio"])
    )
    return hyper_ut.frame(metrics, knob=capacity, macs=macs)


# what a parity run of the ponder-weight knob costs per training step on one CPU core at quick
# sizes, for the widget to say (measured on a busy 2-core machine, 10,000 steps: PonderNet 200 s,
# ACT 82-167 s)
PARITY_SECONDS_PER_STEP = 0.02


def knob_ponder_weight_seconds(profile: str) -> int:
    """About how many seconds :func:`knob_ponder_weight` trains a run that is not cached (one CPU core)."""
    return round(survey_parity.parity_settings(profile)["steps"] * PARITY_SECONDS_PER_STEP)


def knob_ponder_weight(profile: str, halting: str, weight: float, seed: int = 0) -> pd.DataFrame:
    """Parity trained with ACT's ``tau`` or PonderNet's ``lambda_p`` set to ``weight`` (trains if not
    cached): accuracy and steps per test difficulty, in increasing order."""
    _, metrics = survey_parity.train_parity(halting, profile, seed, **{survey_parity.KNOBS[halting]: weight})
    return run_frame(metrics, survey_parity.parity_settings(profile)["train_max"], knob=weight)
