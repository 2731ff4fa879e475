"""Figures of HyperU-ViT on the textured digits (hut-8)."""

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ....plots import colors
from .cpvr import draw_table, mean_se


def vision_table(runs: pd.DataFrame) -> pd.DataFrame:
    """hut-8: one row per model of ``hyper_ut_vision.comparison``'s per-seed rows, mean ± s.e. over seeds."""
    return (
        runs.groupby("model", sort=False)
        .agg(
            **{
                "top-1": ("top-1", lambda v: mean_se(v, 3)),
                "average layers": ("average layers", lambda v: mean_se(v, 2)),
                "layer savings": ("layer savings", lambda v: mean_se(100 * v, 0) + " %"),
                "parameters": ("parameters", "first"),
                "seeds": ("seed", "nunique"),
            }
        )
        .reset_index()
    )


def draw_vision(fig: plt.Figure, runs: pd.DataFrame, depth: int, per_image: pd.DataFrame, chance: float) -> None:
    """hut-8: the table of :func:`vision_table` beside bars of top-1 and layer savings (mean, s.e. over
    seeds as error bars, each seed a dot, a dashed line at the paper's 70 % savings); below, the share
    of test images by the layers they used (``per_image``: ``hyper_ut_vision.layers_per_image``, one seed);
    ``chance`` (one class in ``1 / classes``) dotted on the top-1 panel."""
    top, bottom = fig.subfigures(2, 1, height_ratios=[1, 0.75])
    left, right = top.subfigures(1, 2, width_ratios=[1.2, 1])
    draw_table(left.subplots(), vision_table(runs), font_size=10)
    order = list(dict.fromkeys(runs["model"]))
    palette = dict(zip(order, colors(len(order))))
    for ax, column in zip(right.subplots(1, 2), ["top-1", "layer savings"]):
        sns.barplot(
            runs, x="model", y=column, hue="model", order=order, palette=palette, errorbar="se", capsize=0.2, ax=ax
        )
        sns.stripplot(runs, x="model", y=column, order=order, color="0.2", size=4, ax=ax)
        ax.set(title=column, ylim=(0, 1), xlabel="")
        ax.tick_params(axis="x", rotation=20)
        if column == "top-1":
            ax.axhline(chance, color="0.3", ls=":", lw=1)
            ax.text(-0.45, chance + 0.01, "chance", ha="left", va="bottom", fontsize=8, color="0.3")
    ax.axhline(0.7, color="0.3", ls="--", lw=1)
    ax.text(-0.45, 0.71, "paper: > 70 %", ha="left", va="bottom", fontsize=8, color="0.3")
    top.suptitle(
        f"Digits (stand-in for ImageNet-1k), at most {depth} layers; "
        f"bars: mean over {runs.seed.nunique()} seed(s) ± s.e."
    )
    ax = bottom.subplots()
    sns.histplot(
        per_image,
        x="layers",
        hue="model",
        hue_order=order,
        palette=palette,
        discrete=True,
        multiple="dodge",
        stat="percent",
        common_norm=False,
        shrink=0.8,
        ax=ax,
    )
    ax.set(
        xticks=range(1, depth + 1),
        xlim=(0.4, depth + 0.6),
        xlabel="layers used",
        ylabel="% of test images",
        title=f"per-image halting: layers each of the {len(per_image) // len(order):,} test images used (first seed)",
    )
