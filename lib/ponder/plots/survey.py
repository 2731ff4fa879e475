"""Drawings of the survey targets: accuracy and compute of adaptive methods side by side."""
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from . import colors


def shade_beyond(ax: plt.Axes, boundary: float, label: str = "beyond training") -> None:
    """Grey out the x-range right of ``boundary`` (the out-of-distribution part)."""
    ax.axvspan(boundary + 0.5, ax.get_xlim()[1], color="0.9", zorder=0)
    ax.text(boundary + 0.6, ax.get_ylim()[1], label, va="top", ha="left", fontsize=9, color="0.35")


def draw_parity(axes, frame: pd.DataFrame, train_max: int) -> None:
    """survey-1: accuracy (left) and steps (right) vs difficulty, one line per method (sd over seeds)."""
    palette = dict(zip(sorted(frame["method"].unique()), colors(2)))
    for ax, y, label in zip(axes, ("accuracy", "steps"), ("accuracy", "steps used at inference")):
        sns.lineplot(frame, x="difficulty", y=y, hue="method", palette=palette, marker="o", errorbar="sd", ax=ax)
        ax.set_xlim(0.5, frame["difficulty"].max() + 0.5)
        if y == "accuracy":
            ax.axhline(0.5, color="0.4", ls=":", lw=1)
            ax.set_ylim(0.3, 1.05)
        shade_beyond(ax, train_max)
        ax.set_xlabel("difficulty (non-zero entries)")
        ax.set_ylabel(label)
    axes[1].get_legend().remove()


def draw_tradeoff(ax: plt.Axes, frame: pd.DataFrame, x: str, y: str, hue: str, label: str | None = None, xlabel: str = "", ylabel: str = "accuracy") -> None:
    """An accuracy-vs-compute curve per ``hue`` group, points annotated with ``label``."""
    groups = sorted(frame[hue].unique())
    for color, group in zip(colors(len(groups)), groups):
        part = frame[frame[hue] == group].sort_values(x)
        ax.plot(part[x], part[y], marker="o", color=color, label=str(group))
        if label is not None:
            for _, row in part.iterrows():
                ax.annotate(str(row[label]), (row[x], row[y]), textcoords="offset points", xytext=(4, 4), fontsize=8, color=color)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel)
    ax.legend(title=hue)
