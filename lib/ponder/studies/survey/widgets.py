"""ipywidgets for the survey's knobs: each control re-evaluates a trained model through a
``ponder.studies.survey.analysis.knobs.knob_*`` function and redraws accuracy and compute per difficulty.

While a knob computes, its controls are disabled and a status line says what is going on (the
ponder weight trains a model that is not cached: for about
:func:`~ponder.studies.survey.analysis.knobs.knob_ponder_weight_seconds`, with training's progress bar in
the panel); an error lands in the panel's output, not in the log console; Kernel > Interrupt stops
the computation and leaves the panel usable. Difficulties beyond those the models trained on (C-PVR's
training hops, parity's training difficulties) are shaded as out of distribution."""

import html
import time
import traceback

import ipywidgets as widgets
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display
from matplotlib.ticker import MaxNLocator

from ...profiles import by_profile
from ..hyper_ut import cpvr as hyper_ut
from . import parity as survey_parity
from .analysis import knobs as knob_analysis
from .analysis import parity as parity_analysis
from .sizes.parity import PARITY


def _draw(frame: pd.DataFrame, x: str, compute_label: str, setting: str, last_trained: int) -> None:
    """Accuracy and compute (``macs`` or ``steps``) against ``frame[x]``, a difficulty: integer ticks; the
    difficulties beyond ``last_trained``, the largest the model trained on, shaded as out of distribution."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2), layout="constrained")
    y = "macs" if "macs" in frame else "steps"
    axes[0].plot(frame[x], frame["accuracy"], marker="o")
    axes[0].set(ylim=(0, 1.02), ylabel="accuracy")
    axes[1].plot(frame[x], frame[y], marker="o", color="C1")
    axes[1].set_ylabel(compute_label)
    axes[1].set_ylim(bottom=0)
    last = frame[x].max()
    for ax in axes:
        ax.set_xlabel(x)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if last > last_trained:
            beyond = f"beyond training ({x} > {last_trained}): out of distribution"
            ax.axvspan(last_trained + 0.5, last + 0.5, color="0.9", zorder=0, label=beyond)
    if last > last_trained:
        axes[0].legend(loc="lower left", fontsize=8)
    fig.suptitle(f"{setting}: mean accuracy {frame['accuracy'].mean():.3f}, mean {y} {frame[y].mean():.2f}")
    plt.show()


def _setting(control: widgets.Widget) -> str:
    """What a control is set to, for a status line and a title: a dropdown's label, else ``description = value``."""
    return control.label if isinstance(control, widgets.Dropdown) else f"{control.description} = {control.value}"


def _panel(
    control: widgets.Widget,
    compute,
    x: str,
    compute_label: str,
    last_trained: int,
    busy: str,
    button: str | None = None,
    stopped: str = "",
) -> widgets.Widget:
    """A control and an optional button, a status line below them (the whole text, wrapped) and two plots
    (accuracy, compute) redrawn from ``compute(value)`` with the difficulties beyond ``last_trained`` marked out
    of distribution; ``busy`` is the status while it computes, with the controls disabled.

    Kernel > Interrupt stops a computation: the status line says so (``stopped`` after it) and the panel stays
    usable. A click's callback runs in the kernel's main thread, where the interrupt lands as KeyboardInterrupt;
    the panel catches it before its Output widget would (which shows a traceback and swallows it) and ends the
    callback there, while the drawing at construction raises it again: the cell stops."""
    out, status = widgets.Output(), widgets.HTML()
    go = [widgets.Button(description=button)] if button else []

    def say(text: str) -> None:
        status.value = html.escape(text, quote=False)

    def redraw(*_) -> bool:
        """Compute and draw; False when an interrupt stopped it (a callback's return value is ignored)."""
        setting, start = _setting(control), time.perf_counter()
        for widget in (control, *go):
            widget.disabled = True
        say(f"{setting}: {busy}")
        with out:
            out.clear_output(wait=True)
            try:
                _draw(compute(control.value), x, compute_label, setting, last_trained)
                say(f"{setting}: done in {time.perf_counter() - start:.0f} s")
            except Exception:  # noqa: BLE001 -- shown in the panel, which stays usable
                out.append_stderr(traceback.format_exc())
                say(f"{setting}: failed, the error is below")
            except KeyboardInterrupt:
                say(f"{setting}: stopped after {time.perf_counter() - start:.0f} s (Kernel > Interrupt){stopped}")
                return False
            finally:
                for widget in (control, *go):
                    widget.disabled = False
        return True

    if go:
        go[0].on_click(redraw)
    else:
        control.observe(redraw, names="value")
        if not redraw():
            raise KeyboardInterrupt
    return widgets.VBox([widgets.HBox([control, *go]), status, out])


WEIGHTS = {"act": (1e-4, 1e-3, 1e-2), "pondernet": (0.1, 0.2, 0.5)}  # the ponder weights the parity tab offers


def weight_options(profile: str) -> list[tuple[str, tuple[str, float]]]:
    """The parity tab's ``(label, (halting, weight))`` options: those ``profile``'s grid trains (so
    ``make figures`` cached them) first and marked, then the ones a click trains."""
    grid = by_profile(PARITY, profile)["grid"]
    options = []
    for halting, values in WEIGHTS.items():
        knob = survey_parity.KNOBS[halting]
        name = f"{'ACT' if halting == 'act' else 'PonderNet'} {parity_analysis.SYMBOLS[knob]} = {{:g}}"
        options += [(name.format(v) + (" (trained)" if v in grid[knob] else ""), (halting, v)) for v in values]
    return sorted(options, key=lambda option: not option[0].endswith("(trained)"))


def knobs(profile: str, seed: int = 0) -> widgets.Widget:
    """Tabs: halting-bias shift (UT+ACT), exit threshold, MoD capacity, ponder weight (parity)."""
    bias = widgets.FloatSlider(
        value=0.0, min=-4.0, max=4.0, step=0.5, description="bias shift", continuous_update=False
    )
    threshold = widgets.FloatSlider(
        value=0.9, min=0.1, max=1.0, step=0.05, description="threshold λ", continuous_update=False
    )
    capacity = widgets.SelectionSlider(
        options=[0.125, 0.25, 0.375, 0.5, 0.75, 1.0], value=0.5, description="capacity", continuous_update=False
    )
    weight = widgets.Dropdown(options=weight_options(profile), description="weight")
    evaluating = "evaluating the trained model …"
    training = (
        "training or loading … (a run not cached yet trains for about "
        f"{knob_analysis.knob_ponder_weight_seconds(profile)} s)"
    )
    last_hop = max(by_profile(hyper_ut.SIZES, profile)["train_hops"])  # the C-PVR models trained on hops up to it

    def cpvr_panel(control: widgets.Widget, knob, compute_label: str) -> widgets.Widget:
        return _panel(control, lambda v: knob(profile, v, seed), "hops", compute_label, last_hop, evaluating)

    tabs = widgets.Tab(
        [
            cpvr_panel(bias, knob_analysis.knob_halting_bias, "ACT steps"),
            cpvr_panel(threshold, knob_analysis.knob_exit_threshold, "layers used"),
            cpvr_panel(capacity, knob_analysis.knob_mod_capacity, "MACs vs dense"),
            _panel(
                weight,
                lambda v: knob_analysis.knob_ponder_weight(profile, v[0], v[1], seed),
                "difficulty",
                "steps",
                by_profile(PARITY, profile)["train_max"],
                training,
                button="train / load",
                stopped="; the run's checkpoints stay in its cache, and the next click resumes from the last",
            ),
        ]
    )
    for i, title in enumerate(("halting bias (UT+ACT)", "exit threshold", "MoD capacity", "τ / λp (parity)")):
        tabs.set_title(i, title)
    display(tabs)
    return tabs
