"""Figures of Hyper-UT's modules (hut-6, hut-10): routing weights per step, accuracy per pool size."""

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ....plots import colors
from .cpvr import draw_baselines, shade_out_of_distribution


def draw_routing(fig: plt.Figure, frame: pd.DataFrame) -> None:
    """hut-6: one heatmap per test hop count: mean routing weight of each pool entry at each step."""
    hops = sorted(frame["hops"].unique())
    axes = fig.subplots(1, len(hops), sharey=True, squeeze=False)[0]
    vmax = frame["weight"].max()
    for ax, h in zip(axes, hops):
        table = frame[frame["hops"] == h].pivot_table(index="module", columns="step", values="weight")
        every = max(1, len(table) // 8)  # at most 8 tick labels, so large pools stay readable
        sns.heatmap(
            table,
            vmin=0,
            vmax=vmax,
            cmap="magma",
            cbar=ax is axes[-1],
            cbar_kws={"label": "routing weight"},
            yticklabels=every,
            ax=ax,
        )
        ax.set(title=f"{h} hop{'s' if h != 1 else ''}", xlabel="step", ylabel="pool entry" if ax is axes[0] else None)


def draw_pool_sizes(
    ax: plt.Axes,
    frame: pd.DataFrame,
    train_max: int,
    hue: str = "pool_size",
    title: str = "pool size N",
    baselines: pd.DataFrame | None = None,
) -> None:
    """hut-10: accuracy per test hop count for each value of ``hue`` (pool size, or generator), s.e. over seeds;
    ``baselines`` as in :func:`.cpvr.draw_accuracy_vs_hops`."""
    values = sorted(frame[hue].unique())
    sns.lineplot(
        frame,
        x="hops",
        y="accuracy",
        hue=hue,
        hue_order=values,
        marker="o",
        errorbar="se",
        err_style="bars",
        ax=ax,
        palette=colors(len(values)),
    )
    draw_baselines(ax, baselines)
    shade_out_of_distribution(ax, train_max, int(frame["hops"].max()))
    ax.set(xlabel="test hop count", ylabel="accuracy", ylim=(0, 1.02), xticks=sorted(frame["hops"].unique()))
    ax.legend(title=title, fontsize=9)
