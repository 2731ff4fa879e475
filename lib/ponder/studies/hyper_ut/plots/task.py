"""Drawings of C-PVR (target hut-1): one example with its pointer chain (and its decoy chain on the decoy task),
and distributions."""

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Rectangle

from ....plots import colors
from ....tasks.cpvr import count_hops, pointer_chain


def decoy_chain(x: Sequence[int], end: int) -> list[int]:
    """The decoy chain ``[q_1, ..., q_M]`` of a decoy-task example (:mod:`ponder.tasks.cpvr_decoys`), followed back
    from its end ``q_M``: nothing points forward into a chain from outside it, so the one position ``p < q`` with
    ``x[p] == q`` is the decoy's link into ``q``, and none points into ``q_1``."""
    chain = [end]
    while links := [p for p in range(chain[0]) if x[p] == chain[0]]:
        chain.insert(0, links[0])
    return chain


def _arrows(ax: plt.Axes, chain: list[int], color, linestyle: str) -> None:
    """One arrow over the row per link of ``chain``, from position to position."""
    for a, b in zip(chain, chain[1:]):
        ax.add_patch(
            FancyArrowPatch(
                (a + 0.5, 1.05),
                (b + 0.5, 1.05),
                connectionstyle="arc3,rad=-0.4",
                arrowstyle="-|>",
                mutation_scale=12,
                color=color,
                lw=1.5,
                linestyle=linestyle,
            )
        )


def draw_chain(ax: plt.Axes, x, decoy_end: int | None = None) -> None:
    """One sequence as a row of cells; the pointer chain as arrows, the label cell outlined. With ``decoy_end``
    (the position ``q_M`` that :func:`ponder.tasks.cpvr_decoys.sample` draws) the decoy chain too, in another
    colour with dashed arrows, and a legend that tells the two apart."""
    x = [int(v) for v in (x.tolist() if hasattr(x, "tolist") else x)]
    chain = pointer_chain(x)
    decoy = [] if decoy_end is None else decoy_chain(x, decoy_end)
    hops, label = count_hops(x)
    hop_color, decoy_color, label_color = colors(4)[0], colors(4)[1], colors(4)[3]
    for i, value in enumerate(x):
        on_chain = i in chain or i in decoy
        face = label_color if i == chain[-1] else hop_color if i in chain else decoy_color if on_chain else "white"
        ax.add_patch(Rectangle((i, 0), 1, 1, facecolor=face, alpha=0.35 if on_chain else 1, edgecolor="0.3"))
        ax.text(i + 0.5, 0.5, str(value), ha="center", va="center", fontsize=11, weight="bold" if on_chain else None)
        ax.text(i + 0.5, -0.3, str(i), ha="center", va="center", fontsize=8, color="0.4")
    _arrows(ax, chain, hop_color, "-")
    _arrows(ax, decoy, decoy_color, "--")
    longest = max((b - a for c in (chain, decoy) for a, b in zip(c, c[1:])), default=1)
    ax.set_xlim(-0.2, len(x) + 0.2)
    ax.set_ylim(-0.6, 1.2 + 0.18 * max(1, longest))
    ax.set_aspect("equal")
    ax.axis("off")
    title = f"{hops} hop{'s' if hops != 1 else ''}: {' → '.join(map(str, chain))}, label {label}"
    if decoy:
        title += f"; decoy {' → '.join(map(str, decoy))}, value {x[decoy[-1]]}"
        ax.legend(
            handles=[
                Line2D([], [], color=hop_color, lw=1.5, label="chain from position 0 (its end holds the label)"),
                Line2D([], [], color=decoy_color, lw=1.5, ls="--", label="decoy chain (not reached from position 0)"),
            ],
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            ncols=2,
            fontsize=8,
            frameon=False,
        )
    ax.set_title(title)


def distributions(hops: torch.Tensor, label: torch.Tensor) -> pd.DataFrame:
    """One row per example: its hop count and label (for seaborn)."""
    return pd.DataFrame({"hops": hops.numpy(), "label": label.numpy()})


def draw_label_by_hops(ax: plt.Axes, hops: torch.Tensor, label: torch.Tensor) -> None:
    """Label distribution per hop count (a label lies in ``[0, p_M]``, so more hops, larger labels)."""
    frame = distributions(hops, label)
    sns.boxplot(frame, x="hops", y="label", ax=ax, color=colors(1)[0], fliersize=1)
    ax.set_title("Label by hop count")


def draw_shortcuts(ax: plt.Axes, table: pd.DataFrame, length: int) -> None:
    """Per hop count and sampler (a :func:`ponder.studies.hyper_ut.analysis.task.shortcuts` table): the majority label
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
