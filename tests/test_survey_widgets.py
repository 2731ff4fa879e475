"""The survey's knob widgets redraw from the knob functions (stubbed here: no training), show
when they are busy, put errors in their panel, and label difficulties with integer ticks."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from ponder.analysis import survey
from ponder.widgets import survey as survey_widgets

TITLES = ["halting bias (UT+ACT)", "exit threshold", "MoD capacity", "τ / λp (parity)"]


def frame(x: str = "hops") -> pd.DataFrame:
    return pd.DataFrame({x: [1, 2, 3], "accuracy": [0.9, 0.8, 0.5], "steps": [2.0, 3.0, 4.0]})


@pytest.fixture
def calls(monkeypatch):
    seen = []

    def stub(name, x="hops"):
        def knob(*args):
            seen.append((name, args))
            return frame(x)

        return knob

    monkeypatch.setattr(survey, "knob_halting_bias", stub("bias"))
    monkeypatch.setattr(survey, "knob_exit_threshold", stub("threshold"))
    monkeypatch.setattr(survey, "knob_mod_capacity", stub("capacity"))
    monkeypatch.setattr(survey, "knob_ponder_weight", stub("weight", "difficulty"))
    plt.close("all")
    yield seen
    plt.close("all")


def ponder_weight_panel(tabs):
    """The last tab's ``(dropdown, button, status, output)``."""
    controls, out = tabs.children[3].children
    return (*controls.children, out)


def test_knobs_draw_and_follow_their_controls(calls):
    tabs = survey_widgets.knobs("smoke", seed=0)
    assert [tabs.get_title(i) for i in range(4)] == TITLES
    assert [name for name, _ in calls] == [
        "bias",
        "threshold",
        "capacity",
    ]  # drawn once each; the ponder weight waits for its button
    bias, status = tabs.children[0].children[0].children
    bias.value = -2.0
    assert calls[-1] == ("bias", ("smoke", -2.0, 0))
    assert status.value.startswith("bias shift = -2.0: done in")
    weight, button, _, _ = ponder_weight_panel(tabs)
    weight.value = ("pondernet", 0.5)
    button.click()
    assert calls[-1] == ("weight", ("smoke", "pondernet", 0.5, 0))


def test_ponder_weight_is_busy_while_it_trains(calls, monkeypatch):
    tabs = survey_widgets.knobs("quick", seed=0)
    weight, button, status, _ = ponder_weight_panel(tabs)
    seen = []

    def training(*args):
        seen.append((weight.disabled, button.disabled, status.value))
        return frame("difficulty")

    monkeypatch.setattr(survey, "knob_ponder_weight", training)
    button.click()
    seconds = survey.knob_ponder_weight_seconds("quick")
    assert 60 <= seconds <= 600  # a few minutes: 10,000 steps
    assert seen == [
        (
            True,
            True,
            f"ACT τ = 0.001 (trained): training or loading … (a run not cached yet trains for about {seconds} s)",
        )
    ]
    assert not weight.disabled and not button.disabled and "done in" in status.value


def test_a_failing_knob_reports_in_its_panel(calls, monkeypatch):
    tabs = survey_widgets.knobs("smoke", seed=0)
    _, button, status, out = ponder_weight_panel(tabs)

    def failing(*args):
        raise RuntimeError("no space left on device")

    monkeypatch.setattr(survey, "knob_ponder_weight", failing)
    button.click()
    errors = [o["text"] for o in out.outputs if o.get("name") == "stderr"]
    assert len(errors) == 1 and "RuntimeError: no space left on device" in errors[0]
    assert "failed" in status.value and not button.disabled


def test_difficulty_axes_have_integer_ticks(calls):
    tabs = survey_widgets.knobs("smoke", seed=0)
    ponder_weight_panel(tabs)[1].click()
    axes = [ax for n in plt.get_fignums() for ax in plt.figure(n).axes]
    assert len(axes) == 8 and {ax.get_xlabel() for ax in axes} == {"hops", "difficulty"}
    for ax in axes:
        assert [t for t in ax.get_xticks() if t != int(t)] == []
