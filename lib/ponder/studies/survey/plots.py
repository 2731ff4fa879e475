"""Drawings of the survey targets: accuracy and compute of adaptive methods side by side."""

import math

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ...plots import colors


def shade_beyond(ax: plt.Axes, boundary: float, label: str = "beyond training") -> None:
    """Grey out the x-range right of ``boundary`` (the out-of-distribution part)."""
    ax.axvspan(boundary + 0.5, ax.get_xlim()[1], color="0.9", zorder=0)
    ax.text(boundary + 0.6, ax.get_ylim()[1], label, va="top", ha="left", fontsize=9, color="0.35")


def draw_parity(axes, frame: pd.DataFrame, train_max: int, hue: str = "method") -> None:
    """survey-1: accuracy (left) and steps (right) vs difficulty, one line per value of ``hue`` (sd over seeds).

    Difficulties are drawn in numeric order whatever their dtype (metrics keep them as strings,
    which would join 1, 10, 2, ...).
    """
    frame = frame.assign(difficulty=pd.to_numeric(frame["difficulty"])).sort_values("difficulty")
    names = sorted(frame[hue].unique())
    palette = dict(zip(names, colors(len(names))))
    for ax, y, label in zip(axes, ("accuracy", "steps"), ("accuracy", "steps used at inference")):
        sns.lineplot(frame, x="difficulty", y=y, hue=hue, palette=palette, marker="o", errorbar="sd", ax=ax)
        ax.set_xlim(0.5, frame["difficulty"].max() + 0.5)
        if y == "accuracy":
            ax.axhline(0.5, color="0.4", ls=":", lw=1)
            ax.set_ylim(0, 1.05)
        shade_beyond(ax, train_max)
        ax.set_xlabel("difficulty (non-zero entries)")
        ax.set_ylabel(label)
    axes[1].get_legend().remove()


def draw_exit_sweep(
    axes, summary: pd.DataFrame, sweep: pd.DataFrame, max_layers: int, shown=(0.5, 0.9, float("inf"))
) -> None:
    """survey-2: accuracy vs mean layers over the threshold sweep (left); layers per hop count (right)."""
    ax = axes[0]
    for color, where in zip(colors(2), ("in", "out of")):
        x, y = summary[f"layers ({where} training)"], summary[f"accuracy ({where} training)"]
        ax.plot(x, y, marker="o", color=color, label=f"hops {where} training")
        last = -math.inf
        for threshold, xi, yi in (
            zip(summary["threshold"], x, y) if where == "in" else ()
        ):  # one curve labelled, no overlaps
            if xi - last >= 0.08 * max_layers:
                ax.annotate(
                    "no exit" if threshold == float("inf") else f"λ={threshold:g}",
                    (xi, yi),
                    textcoords="offset points",
                    xytext=(3, -11),
                    fontsize=8,
                    color=color,
                )
                last = xi
    ax.set_xlim(0.5, max_layers + 0.5)
    ax.set_xlabel("mean layers used")
    ax.set_ylabel("accuracy")
    ax.legend(loc="lower right")
    part = sweep[sweep["threshold"].isin(shown)].copy()
    part["threshold"] = part["threshold"].map(lambda t: "no exit" if t == float("inf") else f"λ={t:g}")
    sns.lineplot(
        part,
        x="hops",
        y="layers",
        hue="threshold",
        marker="o",
        errorbar="se",
        err_style="bars",
        palette=colors(len(shown)),
        ax=axes[1],
    )
    axes[1].set_ylim(0, max_layers + 0.5)
    axes[1].set_xlabel("test hop count")
    axes[1].set_ylabel("mean layers used")
    shade_beyond(axes[1], sweep.loc[sweep["in_training"], "hops"].max())


def draw_mod(ax: plt.Axes, frame: pd.DataFrame) -> None:
    """survey-3: accuracy vs relative MACs, in and out of the training hops; MoD curve and the Transformer."""
    means = frame.groupby(["model", "capacity", "macs", "in_training"], as_index=False)["accuracy"].mean()
    for color, inside in zip(colors(2), (True, False)):
        part = means[means["in_training"] == inside]
        mod = part[part["model"] != "Transformer"].sort_values("macs")
        ax.plot(
            mod["macs"],
            mod["accuracy"],
            marker="o",
            color=color,
            label=f"MoD, hops {'in' if inside else 'out of'} training",
        )
        for _, row in mod.iterrows():
            ax.annotate(
                f"c={row['capacity']:g}",
                (row["macs"], row["accuracy"]),
                textcoords="offset points",
                xytext=(3, 4),
                fontsize=8,
                color=color,
            )
        dense = part[part["model"] == "Transformer"]
        ax.scatter(
            dense["macs"],
            dense["accuracy"],
            marker="*",
            s=180,
            color=color,
            edgecolor="black",
            zorder=3,
            label=f"Transformer, hops {'in' if inside else 'out of'} training",
        )
    ax.set_xlabel("multiply-adds per example, relative to the Transformer")
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=8)
