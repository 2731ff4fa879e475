"""ipywidgets for the survey's knobs: each control re-evaluates a trained model through a
``ponder.experiments.survey.knob_*`` function and redraws accuracy and compute per difficulty."""
import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display

from ..experiments import survey


def _panel(control: widgets.Widget, compute, x: str, compute_label: str, button: str | None = None) -> widgets.Widget:
    """A control, an optional button, and two plots (accuracy, compute) redrawn from ``compute(value)``."""
    out = widgets.Output()

    def redraw(*_):
        frame = compute(control.value)
        with out:
            out.clear_output(wait=True)
            fig, axes = plt.subplots(1, 2, figsize=(10, 3.2), layout="constrained")
            axes[0].plot(frame[x], frame["accuracy"], marker="o")
            axes[0].set_ylim(0, 1.02)
            axes[0].set_ylabel("accuracy")
            y = "macs" if "macs" in frame else "steps"
            axes[1].plot(frame[x], frame[y], marker="o", color="C1")
            axes[1].set_ylabel(compute_label)
            axes[1].set_ylim(bottom=0)
            for ax in axes:
                ax.set_xlabel(x)
            fig.suptitle(f"{control.description} = {control.value}: mean accuracy {frame['accuracy'].mean():.3f}, mean {y} {frame[y].mean():.2f}")
            plt.show()

    if button is None:
        control.observe(redraw, names="value")
        redraw()
        return widgets.VBox([control, out])
    go = widgets.Button(description=button)
    go.on_click(redraw)
    return widgets.VBox([widgets.HBox([control, go]), out])


def knobs(profile: str, seed: int = 0) -> widgets.Widget:
    """Tabs: halting-bias shift (UT+ACT), exit threshold, MoD capacity, ponder weight (parity)."""
    bias = widgets.FloatSlider(value=0.0, min=-4.0, max=4.0, step=0.5, description="bias shift", continuous_update=False)
    threshold = widgets.FloatSlider(value=0.9, min=0.1, max=1.0, step=0.05, description="threshold λ", continuous_update=False)
    capacity = widgets.SelectionSlider(options=[0.125, 0.25, 0.375, 0.5, 0.75, 1.0], value=0.5, description="capacity", continuous_update=False)
    weight = widgets.Dropdown(options=[("ACT τ = 0.0001", ("act", 1e-4)), ("ACT τ = 0.001", ("act", 1e-3)), ("ACT τ = 0.01", ("act", 1e-2)),
                                       ("PonderNet λp = 0.1", ("pondernet", 0.1)), ("PonderNet λp = 0.2", ("pondernet", 0.2)), ("PonderNet λp = 0.5", ("pondernet", 0.5))],
                              description="weight")
    tabs = widgets.Tab([
        _panel(bias, lambda v: survey.knob_halting_bias(profile, v, seed), "hops", "ACT steps"),
        _panel(threshold, lambda v: survey.knob_exit_threshold(profile, v, seed), "hops", "layers used"),
        _panel(capacity, lambda v: survey.knob_mod_capacity(profile, v, seed), "hops", "MACs vs dense"),
        _panel(weight, lambda v: survey.knob_ponder_weight(profile, v[0], v[1], seed), "difficulty", "steps", button="train / load"),
    ])
    for i, title in enumerate(("halting bias (UT+ACT)", "exit threshold", "MoD capacity", "τ / λp (parity)")):
        tabs.set_title(i, title)
    display(tabs)
    return tabs
