"""ipywidgets explorers. Widgets only wire controls to library functions; every published figure
is made by the same functions with fixed arguments in a static cell.

* :func:`sample_explorer` — the common shape: some controls, a "new sample" button, a plot that
  is redrawn whenever a control changes (sliders use ``continuous_update=False``);
* :func:`cpvr_explorer` — C-PVR's pointer chain (hut-1), on the decoy-chain task the models train
  on (its decoy chain drawn dashed, in another colour) or on plain C-PVR; ``widgets.hyper_ut`` and
  ``widgets.survey`` hold the trained-model explorers;
* :func:`hop_status` — what a hop count is to models trained on some hop counts (shown beside the
  hop sliders).
"""

from collections.abc import Callable, Sequence

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display

from ...tasks import cpvr, cpvr_decoys
from .plots.task import draw_chain

TASKS = {"decoy chain (the models' task)": "decoy", "plain C-PVR": "plain"}


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


def hop_status(hops: int, train_hops: Sequence[int]) -> str:
    """``hops`` as models trained on ``train_hops`` see it: within, beyond (out of distribution) or
    below (never trained) their training hop counts."""
    low, high = min(train_hops), max(train_hops)
    if hops > high:
        return f"{hops} hops: beyond the training hops {low}–{high} (out of distribution)"
    if hops < low:
        return f"{hops} hops: below the training hops {low}–{high} (never trained)"
    return f"{hops} hops: within the training hops {low}–{high}"


def draw_task(task: str, length: int, hops: int, seed: int):
    """One example of ``task`` (``"decoy"``: the C-PVR runs' own sampler,
    :func:`ponder.studies.hyper_ut.cpvr.sample`; ``"plain"``: :func:`ponder.tasks.cpvr.sample`):
    ``x`` ``[length]`` and its label."""
    from .cpvr import sample as runs_sample

    x, _, label = (runs_sample if task == "decoy" else cpvr.sample)(1, length, hops, seed=seed)
    return x[0], int(label[0])


def decoy_end(length: int, hops: int, seed: int) -> int:
    """Where the decoy chain of ``draw_task("decoy", length, hops, seed)``'s example ends: the position ``q_M`` that
    :func:`ponder.tasks.cpvr_decoys.sample` draws beside the example (the runs' sampler keeps ``x, hops, label``)."""
    return int(cpvr_decoys.sample(1, length, hops, seed=seed)[3][0])


def cpvr_explorer(
    length: int = 12, hops: int = 3, seed: int = 0, train_hops: Sequence[int] = (1, 2, 3)
) -> widgets.Widget:
    """A task menu (decoy chain, what the models train on, or plain C-PVR), sliders for sequence
    length and hop count, a button for a new sample, and the chain (on the decoy task its decoy chain
    too, dashed); a line says where the hop count lies against ``train_hops``. Hop counts run over
    what the task can hold: 1 to ``(L - 1) // 2`` with a decoy chain, 0 to ``L - 1`` without."""
    task_menu = widgets.Dropdown(options=TASKS, description="task")
    length_slider = widgets.IntSlider(value=length, min=3, max=32, description="length", continuous_update=False)
    hops_slider = widgets.IntSlider(
        value=hops, min=1, max=cpvr_decoys.max_hops(length), description="hops", continuous_update=False
    )

    def draw(sample_seed: int) -> None:
        plain = task_menu.value == "plain"
        hops_slider.min = (
            0 if plain else 1
        )  # a chain cannot be longer than the sequence (beside its decoy): clamps the hops
        hops_slider.max = length_slider.value - 1 if plain else cpvr_decoys.max_hops(length_slider.value)
        x, _ = draw_task(task_menu.value, length_slider.value, hops_slider.value, sample_seed)
        fig, ax = plt.subplots(figsize=(0.6 * length_slider.value + 1, 2.4))
        draw_chain(ax, x, None if plain else decoy_end(length_slider.value, hops_slider.value, sample_seed))
        fig.suptitle(hop_status(hops_slider.value, train_hops), fontsize=9)

    return sample_explorer([task_menu, length_slider, hops_slider], draw, seed)
