"""Figures of the scratch-pad (hut-7): answer-only and scratch-pad accuracy per test hop count."""

import matplotlib.pyplot as plt
import pandas as pd

from .cpvr import draw_accuracy_vs_hops


def draw_scratchpad(fig: plt.Figure, frame: pd.DataFrame, chance: pd.DataFrame, train_max: int) -> None:
    """hut-7: one panel per decoding rule, answer-only and scratch-pad accuracy per test hop count
    (s.e. over seeds), ``chance`` (``hops`` and one column per baseline) in grey."""
    decodings, order = list(dict.fromkeys(frame["decoding"])), list(dict.fromkeys(frame["target"]))
    axes = fig.subplots(1, len(decodings), sharey=True, squeeze=False)[0]
    for ax, decoding in zip(axes, decodings):
        part = frame[frame["decoding"] == decoding].rename(columns={"target": "model"})
        draw_accuracy_vs_hops(ax, part, order, train_max, baselines=chance)
        ax.set_title(decoding)
