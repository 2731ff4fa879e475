"""ipywidgets explorers. Widgets only wire controls to library functions; every published figure
is made by the same functions with fixed arguments in a static cell.

* :func:`sample_explorer` — the common shape: some controls, a "new sample" button, a plot that
  is redrawn whenever a control changes (sliders use ``continuous_update=False``);
* :func:`cpvr_explorer` — C-PVR's pointer chain (hut-1); ``widgets.hyper_ut`` and
  ``widgets.survey`` hold the trained-model explorers.
"""
from collections.abc import Callable

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display

from ..plots.cpvr import draw_chain
from ..tasks.cpvr import sample


def sample_explorer(controls: list[widgets.ValueWidget], draw: Callable[[int], None], seed: int = 0) -> widgets.Widget:
    """``controls`` and a "new sample" button above an output; ``draw(seed)`` makes the figure.

    A control's change redraws with the same sample seed; the button moves to the next seed. A
    control that ``draw`` itself changes (a slider clamped to a new maximum) does not redraw again:
    ``draw`` reads the controls after changing them, so one figure shows the final state.
    """
    button = widgets.Button(description="new sample", icon="refresh")
    out = widgets.Output()
    state = {"seed": seed, "drawing": False}

    def redraw(*_):
        if state["drawing"]:
            return
        state["drawing"] = True
        try:
            with out:
                out.clear_output(wait=True)
                draw(state["seed"])
                plt.show()
        finally:
            state["drawing"] = False

    def new_sample(_):
        state["seed"] += 1
        redraw()

    for control in controls:
        control.observe(redraw, names="value")
    button.on_click(new_sample)
    redraw()
    box = widgets.VBox([widgets.HBox([*controls, button]), out])
    display(box)
    return box


def cpvr_explorer(length: int = 12, hops: int = 3, seed: int = 0) -> widgets.Widget:
    """Sliders for sequence length and hop count, a button for a new sample, and the chain."""
    length_slider = widgets.IntSlider(value=length, min=2, max=32, description="length", continuous_update=False)
    hops_slider = widgets.IntSlider(value=hops, min=0, max=length - 1, description="hops", continuous_update=False)

    def draw(sample_seed: int) -> None:
        hops_slider.max = length_slider.value - 1  # a chain cannot be longer than the sequence: clamps the hops
        x, _, _ = sample(1, length_slider.value, hops_slider.value, seed=sample_seed)
        _, ax = plt.subplots(figsize=(0.6 * length_slider.value + 1, 2.2))
        draw_chain(ax, x[0])

    return sample_explorer([length_slider, hops_slider], draw, seed)
