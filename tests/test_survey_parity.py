"""Survey-1 (ponder.studies.survey.parity): the grid of runs, the per-run summary (success,
extrapolation), pairing by cell, difficulties in numeric order, the one-step control."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from ponder.profiles import PROFILES
from ponder.studies.survey import parity as sp
from ponder.studies.survey import schedule as survey_schedule
from ponder.studies.survey.analysis import knobs
from ponder.studies.survey.analysis import parity as pa
from ponder.studies.survey.plots import draw_parity


@pytest.mark.parametrize("profile", PROFILES)
def test_profiles_follow_the_paper_design(profile):
    s = sp.PARITY[profile]
    assert s["train_max"] * 2 == s["dim"]  # trained on 1..dim/2, tested on 1..dim
    assert set(s["grid"]) == set(sp.KNOBS.values())
    assert len({len(values) for values in s["grid"].values()}) == 1  # the methods' cells correspond
    assert sp.PARITY["paper"]["dim"] == 96 and sp.PARITY["paper"]["train_max"] == 48


def test_settings_take_the_first_grid_value_and_known_overrides():
    s = sp.parity_settings("quick")
    assert (s["tau"], s["lambda_p"]) == (
        sp.PARITY["quick"]["grid"]["tau"][0],
        sp.PARITY["quick"]["grid"]["lambda_p"][0],
    )
    assert "seeds" not in s and "grid" not in s
    assert sp.parity_settings("quick", max_steps=1)["max_steps"] == 1
    with pytest.raises(ValueError, match="unknown parity settings"):
        sp.parity_settings("quick", lamda_p=0.3)


def test_grid_runs_cover_seeds_times_knob_values_per_method():
    s = sp.PARITY["quick"]
    runs = sp.grid_runs("quick", seed=5)
    values = {h: s["grid"][sp.KNOBS[h]] for h in sp.KNOBS}
    assert set(runs) == {(h, 5 + o, j) for h in sp.KNOBS for o in s["seeds"] for j in range(len(values[h]))}
    default = sp.parity_settings("quick")
    for (h, seed, j), run in runs.items():
        assert (run.config["halting"], run.profile, run.config["train"]["seed"]) == (h, "quick", seed)
        changed = {k: v for k, v in run.config.items() if k in default and v != default[k]}
        assert changed == ({sp.KNOBS[h]: values[h][j]} if j else {})  # one knob per method, nothing else changes
    controls = sp.control_runs("quick", seed=5)
    assert sorted(controls) == [5 + o for o in s["seeds"]]
    for run in controls.values():
        changed = {k: v for k, v in run.config.items() if k in default and v != default[k]}
        assert run.config["halting"] == "act" and changed == {"max_steps": 1}
    assert len(survey_schedule.parity_jobs("quick", seed=5)["survey_parity"]) == len(runs) + len(controls)


def metrics(accuracy: dict[int, float], steps: float = 2.0) -> dict:
    """Metrics as a run stores them: string keys, in JSON's sorted (string) order."""
    keys = sorted(str(d) for d in accuracy)
    return {"accuracy": {k: accuracy[int(k)] for k in keys}, "steps": {k: steps for k in keys}}


def test_run_frame_orders_difficulties_numerically():
    frame = pa.run_frame(metrics({d: d / 100 for d in range(1, 13)}), train_max=6, method="ACT")
    assert frame["difficulty"].tolist() == list(range(1, 13))
    assert frame["in_training"].tolist() == [True] * 6 + [False] * 6
    assert frame["accuracy"].tolist() == [d / 100 for d in range(1, 13)] and (frame["method"] == "ACT").all()


def grid_frame(trained: dict, beyond: float = 0.5) -> pd.DataFrame:
    """A parity_frame with runs ``{(method, seed, cell): accuracy on every training difficulty}``."""
    parts = [
        pa.run_frame(
            metrics({1: acc, 2: acc, 3: beyond + seed / 10, 4: beyond}),
            train_max=2,
            method=m,
            knob="k",
            value=float(cell),
            cell=cell,
            seed=seed,
        )
        for (m, seed, cell), acc in trained.items()
    ]
    return pd.concat(parts, ignore_index=True)


def test_run_summary_success_is_training_accuracy_at_least_the_threshold():
    frame = grid_frame({("ACT", 0, 0): 0.96, ("ACT", 1, 0): 0.949, ("PonderNet", 0, 0): 0.95, ("PonderNet", 1, 0): 1.0})
    runs = pa.run_summary(frame).set_index(["method", "seed"])
    assert runs["success"].to_dict() == {("ACT", 0): 1, ("ACT", 1): 0, ("PonderNet", 0): 1, ("PonderNet", 1): 1}
    assert runs.loc[("ACT", 1), "trained"] == pytest.approx(0.949)
    assert runs.loc[("ACT", 1), "beyond"] == pytest.approx(0.55)  # mean of 0.5 + 1/10 and 0.5
    assert runs["steps"].eq(2.0).all()
    assert pa.run_summary(frame).groupby("method")["success"].mean().to_dict() == {"ACT": 0.5, "PonderNet": 1.0}
    assert pa.run_summary(frame, threshold=0.99)["success"].sum() == 1


def test_by_cell_pairs_runs_of_the_same_seed_and_knob_index():
    cells = [(m, seed, cell) for m in ("ACT", "PonderNet") for seed in (0, 1) for cell in (0, 1)]
    frame = grid_frame(
        {(m, seed, cell): 0.6 + 0.1 * seed + 0.01 * cell + (0.2 if m == "PonderNet" else 0) for m, seed, cell in cells}
    )
    cells = pa.by_cell(pa.run_summary(frame), "trained")
    assert list(cells.index) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert (cells["PonderNet"] - cells["ACT"]).to_numpy() == pytest.approx([0.2] * 4)  # same cell, same seed offset


def test_draw_parity_joins_difficulties_in_numeric_order():
    frame = pd.concat(
        [pa.run_frame(metrics({d: 0.5 for d in range(1, 13)}), train_max=6, setting=s, seed=0) for s in ("a", "b")]
    )
    frame["difficulty"] = frame["difficulty"].astype(str)  # as metrics keep them, and in string order
    frame = frame.sort_values("difficulty")
    fig, axes = plt.subplots(1, 2)
    draw_parity(axes, frame, train_max=6, hue="setting")
    for ax in axes:
        for line in [line for line in ax.get_lines() if len(line.get_xdata()) > 2]:
            assert list(line.get_xdata()) == list(range(1, 13))
    plt.close(fig)


def test_control_takes_one_step_and_the_knob_frame_is_ordered():
    control = pa.control_frame("smoke")
    assert control["steps"].eq(1.0).all() and (control["method"] == pa.CONTROL).all()
    knob = knobs.knob_ponder_weight("smoke", "pondernet", 0.5)
    assert knob["difficulty"].tolist() == list(range(1, sp.PARITY["smoke"]["dim"] + 1)) and knob["knob"].eq(0.5).all()
