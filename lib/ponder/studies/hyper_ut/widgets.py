"""The Hyper-UT explorer: pick a trained model and a hop count, see what it answers and how long it pondered.

Widgets only wire controls to library functions (``ponder.studies.hyper_ut.analysis.trace.ponder_trace``,
``ponder.plots``); the published figures are made by the notebooks' static cells.
"""

import ipywidgets as widgets
import matplotlib.pyplot as plt

from .analysis.trace import ponder_trace
from .cpvr import sample
from .explorer import decoy_end, hop_status, sample_explorer
from .plots.cpvr import draw_ponder_trace
from .plots.task import draw_chain


def ponder_explorer(
    models: dict, length: int, max_hops: int, hops: int = 2, seed: int = 0, train_hops: tuple[int, ...] = (1, 2, 3)
) -> widgets.Widget:
    """A model dropdown, a hop-count slider (1 to ``max_hops``) and a new-sample button; an example of
    the task the models train on (:func:`ponder.studies.hyper_ut.cpvr.sample`, C-PVR with a decoy
    chain), its chain and decoy chain, the model's answer, and its halting probability per step. The title says
    where the hop count lies against ``train_hops``."""
    model_menu = widgets.Dropdown(options=list(models), description="model")
    hops_slider = widgets.IntSlider(value=hops, min=1, max=max_hops, description="hops", continuous_update=False)

    def draw(sample_seed: int) -> None:
        model = models[model_menu.value]
        x, _, label = sample(1, length, hops_slider.value, seed=sample_seed)
        trace = ponder_trace(model, x[0])
        fig, (top, bottom) = plt.subplots(
            2, 1, figsize=(0.6 * length + 1, 5.2), height_ratios=[1, 1.3], layout="constrained"
        )
        draw_chain(top, x[0], decoy_end(length, hops_slider.value, sample_seed))
        verdict = "right" if trace["answer"] == int(label) else "wrong"
        fig.suptitle(
            f"{model_menu.value}: answers {trace['answer']} (p={trace['confidence']:.2f}), "
            f"label {int(label)}: {verdict}\n"
            f"{hop_status(hops_slider.value, train_hops)}"
        )
        draw_ponder_trace(bottom, trace, model.core.max_steps)

    return sample_explorer([model_menu, hops_slider], draw, seed)
