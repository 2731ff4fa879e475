"""Figures of the HYLA notebooks (Schug et al., ICLR 2025): one function per panel kind."""

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ...ledger.verdicts import Estimate
from ...models.attention import PAPER_NAMES
from ...plots import colors
from ...tasks import sraven

KIND_ORDER = ("softmax", "linear", "hyla")
LABELS = {"softmax": "softmax", "linear": "linear", "hyla": "HYLA"}


def kind_palette() -> dict[str, tuple]:
    return dict(zip(KIND_ORDER, colors(3)))


def draw_lines(ax: plt.Axes, frame: pd.DataFrame, x: str, y: str, style: str | None = None, logx: bool = False) -> None:
    """``y`` against ``x``, one colour per attention kind (column ``kind``), line style by ``style``."""
    frame = frame.assign(model=frame["kind"].map(LABELS))
    palette = {LABELS[k]: c for k, c in kind_palette().items()}
    sns.lineplot(
        frame,
        x=x,
        y=y,
        hue="model",
        hue_order=[LABELS[k] for k in KIND_ORDER],
        style=style or "model",
        markers=True,
        dashes=True,
        palette=palette,
        ax=ax,
        errorbar=None,
    )
    ticks = sorted(frame[x].unique())
    if logx:
        ax.set_xscale("log", base=2)
        ax.minorticks_off()
    if logx or len(ticks) <= 6:
        ax.set_xticks(ticks, [f"{t:,g}" for t in ticks])


def draw_table(ax: plt.Axes, frame: pd.DataFrame, title: str) -> None:
    """A data frame as a table drawn on ``ax`` (first column left-aligned)."""
    ax.axis("off")
    table = ax.table(cellText=frame.values, colLabels=list(frame.columns), loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.scale(1, 1.35)
    for (row, col), cell in table.get_celld().items():
        if row == 0:
            cell.set_text_props(weight="bold")
            cell.set_facecolor("0.9")
        if col == 0:
            cell.set_text_props(ha="left")
            cell._loc = "left"
    ax.set_title(title)


def percent(values: float | Sequence[float]) -> str:
    """``100 x`` a value, or the mean ± s.e. of per-seed values, to one decimal."""
    e = Estimate.of(np.atleast_1d(values))
    return f"{100 * e.mean:.1f}" if e.n == 1 else f"{100 * e.mean:.1f} ± {100 * e.se:.1f}"


def a1_frame(ours: dict[str, dict], paper: dict[str, tuple]) -> pd.DataFrame:
    """Rows of Table A1: the paper's mean ± s.e. beside ours (a value, or per-seed values shown as
    mean ± s.e.; "—" for a kind not trained at this profile)."""
    ours_of = lambda kind, task: percent(ours[kind][task]) if kind in ours else "—"  # noqa: E731
    rows = []
    for kind, name in PAPER_NAMES.items():
        fuzzy_paper, sraven_paper = paper[kind]
        rows.append(
            {
                "model": name,
                "fuzzy OOD R² ×100, paper": fuzzy_paper,
                "fuzzy, ours": ours_of(kind, "fuzzy"),
                "sraven OOD acc %, paper": sraven_paper,
                "sraven, ours": ours_of(kind, "sraven"),
            }
        )
    return pd.DataFrame(rows)


def draw_ambiguity(ax: plt.Axes, frame: pd.DataFrame) -> None:
    """Ambiguous share per ``F``: ours (bars with binomial s.e.) next to the paper's Table A2."""
    x = np.arange(len(frame))
    c = colors(2)
    ax.bar(x - 0.2, 100 * frame["paper"], 0.4, yerr=100 * frame["paper_se"], color=c[0], label="paper (Table A2)")
    ax.bar(x + 0.2, 100 * frame["ours"], 0.4, yerr=100 * frame["ours_se"], color=c[1], label="ours")
    ax.set(xticks=x, xticklabels=[f"F = {f}" for f in frame["f"]], ylabel="ambiguous instances (%)")
    ax.set_yscale("symlog", linthresh=0.01)
    ax.legend()


def draw_counts(axes, ks, fs) -> None:
    """App. B.1 / Fig. A9: number of tasks and of instances against ``K``."""
    axes[0].plot(ks, [sraven.count_tasks(k) for k in ks], "o-", color=colors(1)[0])
    axes[0].set(yscale="log", xlabel="features per panel K", ylabel="tasks", title="Tasks: C(R+K−1, K)·((K!)² − K)")
    for f, c in zip(fs, colors(len(fs))):
        axes[1].plot(ks, [sraven.count_instances(k, f) for k in ks], "o-", color=c, label=f"F = {f}")
    axes[1].set(yscale="log", xlabel="features per panel K", ylabel="instances (upper bound)", title="Instances")
    axes[1].legend()


def draw_embedding(ax: plt.Axes, points: np.ndarray, labels, title: str, names=None, cmap="viridis") -> None:
    """A 2-d embedding coloured by ``labels`` (categorical with ``names``, else continuous)."""
    labels = np.asarray(labels)
    if names is None:
        sc = ax.scatter(points[:, 0], points[:, 1], c=labels, s=6, cmap=cmap)
        plt.colorbar(sc, ax=ax, fraction=0.046)
    else:
        palette = colors(len(names)) if len(names) <= 10 else sns.color_palette("husl", len(names))
        for i, name in enumerate(names):
            pick = labels == i
            if pick.any():
                ax.scatter(points[pick, 0], points[pick, 1], s=6, color=palette[i], label=name)
        ax.legend(fontsize=7, markerscale=2, loc="best")
    ax.set(xticks=[], yticks=[], title=title)


def draw_similarity(ax: plt.Axes, similarity: np.ndarray, names, title: str) -> None:
    """Heatmap of the cosine similarity of per-rule mean codes."""
    sns.heatmap(
        similarity,
        ax=ax,
        vmin=-1,
        vmax=1,
        cmap="vlag",
        xticklabels=names,
        yticklabels=names,
        square=True,
        cbar_kws={"shrink": 0.7},
    )
    ax.tick_params(labelsize=7)
    ax.set_title(title)


def draw_curves(ax: plt.Axes, curves: dict[int, dict[str, list[dict]]], ylabel: str) -> None:
    """``{seed: {kind: [{"step", "loss"}, ...]}}``: per attention kind the mean over seeds, a band of ± one
    standard error around it."""
    frame = pd.DataFrame(
        [
            {"seed": seed, "model": LABELS[kind], **point}
            for seed, by_kind in curves.items()
            for kind, curve in by_kind.items()
            for point in curve
        ]
    )
    palette = {LABELS[k]: c for k, c in kind_palette().items()}
    order = [LABELS[k] for k in KIND_ORDER if LABELS[k] in set(frame["model"])]
    sns.lineplot(
        frame,
        x="step",
        y="loss",
        hue="model",
        hue_order=order,
        palette=palette,
        marker="o",
        markersize=4,
        errorbar="se",
        ax=ax,
    )
    ax.set(xlabel="training step", ylabel=ylabel)
    ax.legend(title=f"mean of {frame.seed.nunique()} seed(s) ± s.e.")


def draw_levels(ax: plt.Axes, levels: dict[str, float]) -> None:
    """Reference levels (baselines) as labelled horizontal lines, added to the legend."""
    for (label, value), style in zip(levels.items(), (":", "--", "-.")):
        ax.axhline(value, color="0.35", ls=style, lw=1, label=label)
    ax.legend(fontsize=8)
