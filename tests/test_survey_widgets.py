"""The survey's knob widgets redraw from the knob functions (stubbed here: no training)."""
import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from ponder.widgets import survey as survey_widgets
from ponder.experiments import survey


@pytest.fixture
def calls(monkeypatch):
    seen = []

    def stub(name, x="hops"):
        def knob(*args):
            seen.append((name, args))
            return pd.DataFrame({x: [1, 2, 3], "accuracy": [0.9, 0.8, 0.5], "steps": [2.0, 3.0, 4.0]})

        return knob

    monkeypatch.setattr(survey, "knob_halting_bias", stub("bias"))
    monkeypatch.setattr(survey, "knob_exit_threshold", stub("threshold"))
    monkeypatch.setattr(survey, "knob_mod_capacity", stub("capacity"))
    monkeypatch.setattr(survey, "knob_ponder_weight", stub("weight", "difficulty"))
    return seen


def test_knobs_draw_and_follow_their_controls(calls):
    tabs = survey_widgets.knobs("smoke", seed=0)
    assert [tabs.get_title(i) for i in range(4)] == ["halting bias (UT+ACT)", "exit threshold", "MoD capacity", "τ / λp (parity)"]
    assert [name for name, _ in calls] == ["bias", "threshold", "capacity"]  # drawn once each; the ponder weight waits for its button
    bias = tabs.children[0].children[0]
    bias.value = -2.0
    assert calls[-1] == ("bias", ("smoke", -2.0, 0))
    controls, button = tabs.children[3].children[0].children
    controls.value = ("pondernet", 0.5)
    button.click()
    assert calls[-1] == ("weight", ("smoke", "pondernet", 0.5, 0))
