"""Drawings of C-PVR (target hut-1): one example with its pointer chain, and distributions."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch
from matplotlib.patches import FancyArrowPatch, Rectangle

from ..tasks.cpvr import count_hops, pointer_chain
from . import colors


def draw_chain(ax: plt.Axes, x) -> None:
    """One sequence as a row of cells; the pointer chain as arrows, the label cell outlined."""
    x = [int(v) for v in (x.tolist() if hasattr(x, "tolist") else x)]
    chain = pointer_chain(x)
    hops, label = count_hops(x)
    hop_color, label_color = colors(4)[0], colors(4)[3]
    for i, value in enumerate(x):
        on_chain = i in chain
        face = label_color if i == chain[-1] else hop_color if on_chain else "white"
        ax.add_patch(Rectangle((i, 0), 1, 1, facecolor=face, alpha=0.35 if on_chain else 1, edgecolor="0.3"))
        ax.text(i + 0.5, 0.5, str(value), ha="center", va="center", fontsize=11, weight="bold" if on_chain else None)
        ax.text(i + 0.5, -0.3, str(i), ha="center", va="center", fontsize=8, color="0.4")
    for a, b in zip(chain, chain[1:]):
        ax.add_patch(
            FancyArrowPatch(
                (a + 0.5, 1.05),
                (b + 0.5, 1.05),
                connectionstyle="arc3,rad=-0.4",
                arrowstyle="-|>",
                mutation_scale=12,
                color=hop_color,
                lw=1.5,
            )
        )
    ax.set_xlim(-0.2, len(x) + 0.2)
    ax.set_ylim(-0.6, 1.2 + 0.18 * max(1, max((b - a for a, b in zip(chain, chain[1:])), default=1)))
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"{hops} hop{'s' if hops != 1 else ''}: {' → '.join(map(str, chain))}, label {label}")


def distributions(hops: torch.Tensor, label: torch.Tensor) -> pd.DataFrame:
    """One row per example: its hop count and label (for seaborn)."""
    return pd.DataFrame({"hops": hops.numpy(), "label": label.numpy()})


def draw_label_by_hops(ax: plt.Axes, hops: torch.Tensor, label: torch.Tensor) -> None:
    """Label distribution per hop count (a label lies in ``[0, p_M]``, so more hops, larger labels)."""
    frame = distributions(hops, label)
    sns.boxplot(frame, x="hops", y="label", ax=ax, color=colors(1)[0], fliersize=1)
    ax.set_title("Label by hop count")


def draw_shortcuts(ax: plt.Axes, table: pd.DataFrame, length: int) -> None:
    """Per hop count and sampler (a :func:`ponder.analysis.hyper_ut.shortcuts` table): the majority label
    (dashed), the best position-only rule (solid), pruning dead ends (dotted, the uniform sampler's: the
    two samplers differ only in where chains end), and uniform guessing ``1/length``."""
    for (sampler, part), color in zip(table.groupby("sampler", sort=False), colors(table["sampler"].nunique())):
        ax.plot(
            part["hops"], part["best position rule"], "o-", color=color, label=f"best position rule, {sampler} ends"
        )
        ax.plot(
            part["hops"], part["majority label"], "s--", color=color, ms=4, label=f"most frequent label, {sampler} ends"
        )
    uniform = table[table["sampler"] == "uniform"]
    for column, marker in zip([c for c in table.columns if c.startswith("pruning dead ends")], "^v"):
        ax.plot(uniform["hops"], uniform[column], marker + ":", color="0.35", ms=4, label=f"{column}, uniform ends")
    ax.axhline(1 / length, color="0.3", ls=":", label=f"uniform guess 1/{length}")
    ax.set(
        xlabel="hops",
        ylabel="accuracy",
        title="Chance and shortcuts per hop count",
        xticks=sorted(table["hops"].unique()),
        ylim=(0, 1.02),
    )
    ax.legend(loc="lower right", fontsize=6)


def draw_hop_histogram(ax: plt.Axes, hops: torch.Tensor) -> None:
    """How many examples have each hop count."""
    values, counts = np.unique(hops.numpy(), return_counts=True)
    ax.bar(values, counts, color=colors(1)[0])
    ax.set(xlabel="hops", ylabel="examples", title="Hop-count distribution", xticks=values)
