"""ipywidgets explorers. Widgets only wire controls to library functions; every published figure
is made by the same functions with fixed arguments in a static cell."""
import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display

from .plots.cpvr import draw_chain
from .tasks.cpvr import sample


def cpvr_explorer(length: int = 12, hops: int = 3, seed: int = 0) -> widgets.Widget:
    """Sliders for sequence length and hop count, a button for a new sample, and the chain."""
    length_slider = widgets.IntSlider(value=length, min=2, max=32, description="length", continuous_update=False)
    hops_slider = widgets.IntSlider(value=hops, min=0, max=length - 1, description="hops", continuous_update=False)
    button = widgets.Button(description="new sample", icon="refresh")
    out = widgets.Output()
    state = {"seed": seed}

    def redraw(*_):
        hops_slider.max = length_slider.value - 1  # a chain cannot be longer than the sequence
        x, _, _ = sample(1, length_slider.value, hops_slider.value, seed=state["seed"])
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(0.6 * length_slider.value + 1, 2.2))
            draw_chain(ax, x[0])
            plt.show()

    def new_sample(_):
        state["seed"] += 1
        redraw()

    length_slider.observe(redraw, names="value")
    hops_slider.observe(redraw, names="value")
    button.on_click(new_sample)
    redraw()
    box = widgets.VBox([widgets.HBox([length_slider, hops_slider, button]), out])
    display(box)
    return box
