"""The survey's knob widgets redraw from the knob functions (stubbed here: no training), show
when they are busy in a status line that shows its whole text, put errors in their panel, stop on
Kernel > Interrupt and stay usable, label difficulties with integer ticks and shade those beyond
training as out of distribution."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets
import ipywidgets.widgets.widget_output
import matplotlib.pyplot as plt
import pandas as pd
import pytest
import torch
from torch import nn

from ponder.runner.runs import Run
from ponder.runner.training import TrainConfig, train_run
from ponder.studies.survey import widgets as survey_widgets
from ponder.studies.survey.analysis import knobs

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

    monkeypatch.setattr(knobs, "knob_halting_bias", stub("bias"))
    monkeypatch.setattr(knobs, "knob_exit_threshold", stub("threshold"))
    monkeypatch.setattr(knobs, "knob_mod_capacity", stub("capacity"))
    monkeypatch.setattr(knobs, "knob_ponder_weight", stub("weight", "difficulty"))
    plt.close("all")
    yield seen
    plt.close("all")


def ponder_weight_panel(tabs):
    """The last tab's ``(dropdown, button, status, output)``."""
    controls, status, out = tabs.children[3].children
    return (*controls.children, status, out)


def test_knobs_draw_and_follow_their_controls(calls):
    tabs = survey_widgets.knobs("smoke", seed=0)
    assert [tabs.get_title(i) for i in range(4)] == TITLES
    assert [name for name, _ in calls] == [
        "bias",
        "threshold",
        "capacity",
    ]  # drawn once each; the ponder weight waits for its button
    (bias,), status = tabs.children[0].children[0].children, tabs.children[0].children[1]
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

    monkeypatch.setattr(knobs, "knob_ponder_weight", training)
    button.click()
    seconds = knobs.knob_ponder_weight_seconds("quick")
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

    monkeypatch.setattr(knobs, "knob_ponder_weight", failing)
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


def test_the_status_line_shows_its_whole_text_on_a_row_of_its_own(calls, monkeypatch):
    """A Label cuts a long text short with an ellipsis; an HTML widget on a row of its own wraps it."""
    tabs = survey_widgets.knobs("quick", seed=0)
    controls, status, _ = tabs.children[3].children
    assert isinstance(status, widgets.HTML) and status not in controls.children
    while_busy = []
    monkeypatch.setattr(knobs, "knob_ponder_weight", lambda *args: while_busy.append(status.value) or frame())
    controls.children[1].click()
    seconds = knobs.knob_ponder_weight_seconds("quick")
    assert while_busy == [
        f"ACT τ = 0.001 (trained): training or loading … (a run not cached yet trains for about {seconds} s)"
    ]


def test_hops_beyond_training_are_shaded_out_of_distribution(monkeypatch):
    """At quick the C-PVR models train on hops 1-3 (tested to 5), the parity models on difficulties 1-8."""
    hops = pd.DataFrame({"hops": [1, 2, 3, 4, 5], "accuracy": [1.0, 1.0, 0.9, 0.7, 0.6], "steps": [2.0, 3, 4, 5, 5]})
    parity = pd.DataFrame({"difficulty": range(1, 11), "accuracy": [1.0] * 10, "steps": [3.0] * 10})
    for knob in ("knob_halting_bias", "knob_exit_threshold", "knob_mod_capacity"):
        monkeypatch.setattr(knobs, knob, lambda *args: hops)
    monkeypatch.setattr(knobs, "knob_ponder_weight", lambda *args: parity)
    plt.close("all")
    tabs = survey_widgets.knobs("quick", seed=0)
    ponder_weight_panel(tabs)[1].click()
    figures = [plt.figure(n) for n in plt.get_fignums()]
    assert len(figures) == 4
    for figure, (x, last_trained, last) in zip(figures, [("hops", 3, 5)] * 3 + [("difficulty", 8, 10)]):
        for ax in figure.axes:
            (span,) = ax.patches
            assert span.get_x() == last_trained + 0.5 and span.get_x() + span.get_width() == last + 0.5
        (entry,) = figure.axes[0].get_legend().get_texts()
        assert entry.get_text() == f"beyond training ({x} > {last_trained}): out of distribution"
    plt.close("all")


def test_nothing_is_shaded_within_the_training_hops(calls):
    """The stub's frames run to 3 hops: the quick models train on hops 1-3, smoke's on 1-2."""
    survey_widgets.knobs("quick", seed=0)
    assert all(not ax.patches and ax.get_legend() is None for n in plt.get_fignums() for ax in plt.figure(n).axes)
    plt.close("all")
    survey_widgets.knobs("smoke", seed=0)
    assert all(len(ax.patches) == 1 for n in plt.get_fignums() for ax in plt.figure(n).axes)


@pytest.fixture
def in_a_kernel(monkeypatch):
    """Output widgets as in a kernel, where they show what is raised in them and swallow it (an interrupt too);
    the tracebacks they show."""
    shown = []
    shell = SimpleNamespace(kernel=None, showtraceback=lambda exc_tuple, tb_offset: shown.append(exc_tuple))
    monkeypatch.setattr(ipywidgets.widgets.widget_output, "get_ipython", lambda: shell)
    return shown


def interrupted(*args):
    """A knob that Kernel > Interrupt stops: in the kernel's main thread, where a click's callback runs."""
    raise KeyboardInterrupt


def test_an_interrupt_stops_a_clicked_training_and_the_panel_stays_usable(calls, monkeypatch, in_a_kernel):
    """The panel says it stopped, shows no traceback, re-enables its controls, and the next click trains."""
    tabs = survey_widgets.knobs("smoke", seed=0)
    weight, button, status, out = ponder_weight_panel(tabs)
    monkeypatch.setattr(knobs, "knob_ponder_weight", interrupted)
    button.click()  # the callback ends: the interrupt stopped what it was for
    assert status.value.startswith("ACT τ = 0.001 (trained): stopped after ")
    assert "(Kernel &gt; Interrupt); the run's checkpoints stay in its cache" in status.value
    assert not weight.disabled and not button.disabled
    assert in_a_kernel == [] and [o for o in out.outputs if o.get("name") == "stderr"] == []
    monkeypatch.setattr(knobs, "knob_ponder_weight", lambda *args: frame("difficulty"))
    button.click()
    assert "done in" in status.value


def test_an_interrupt_while_the_cell_draws_stops_the_cell(calls, monkeypatch, in_a_kernel):
    monkeypatch.setattr(knobs, "knob_halting_bias", interrupted)
    with pytest.raises(KeyboardInterrupt):
        survey_widgets.knobs("smoke", seed=0)
    assert [name for name, _ in calls] == []  # the panels after it are not drawn


CONFIG = TrainConfig(steps=20, batch_size=8, lr=1e-2, seed=0, checkpoint_every=5)


def test_an_interrupted_training_resumes_from_its_checkpoint(calls, monkeypatch, in_a_kernel):
    """A training that an interrupt stops at step 7 leaves its step-5 checkpoint in the run cache, and
    releases the run's lock: the next click resumes there and finishes the run."""
    run = Run("toy-parity", {"train": CONFIG.as_dict()}, "smoke", code=["ponder.tasks.parity"])
    steps, interrupt_at = [], [7]

    def batches(step: int):
        steps.append(step)
        if step in interrupt_at:
            interrupt_at.clear()
            raise KeyboardInterrupt
        x = torch.randn(CONFIG.batch_size, 4, generator=torch.Generator().manual_seed(step))
        return x, x.sum(dim=1, keepdim=True)

    def training(*args):
        loss = lambda model, batch: ((model(batch[0]) - batch[1]) ** 2).mean()  # noqa: E731
        train_run(run, lambda: nn.Linear(4, 1), loss, batches, CONFIG)
        return frame("difficulty")

    monkeypatch.setattr(knobs, "knob_ponder_weight", training)
    tabs = survey_widgets.knobs("smoke", seed=0)
    _, button, status, _ = ponder_weight_panel(tabs)
    button.click()
    assert "stopped after" in status.value and not run.done
    assert run.load_tensors("checkpoint")[1]["step"] == 5
    steps.clear()
    button.click()
    assert "done in" in status.value and run.done
    assert steps == list(range(5, CONFIG.steps))
