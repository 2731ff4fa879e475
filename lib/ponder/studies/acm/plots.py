"""Figures of the ACM reproduction (targets acm-1 … acm-10).

The paper's numbers (digitised from its Figures 3 and 4, research/acm.md §4.2) are always drawn
on their own axes, labelled as the paper's: their scale (GFLOPs of ViT-B on ImageNet) is not ours.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch

from ...plots import colors

# digitised from the paper (research/acm.md §4.2): (GFLOPs, top-1) on ImageNet-1k with ViT-B
PAPER_FIG3 = {
    "ACM": [(5.05, 0.650), (8.3, 0.753), (12.9, 0.795), (15.1, 0.799)],
    "A-ViT": [(5.6, 0.663), (8.75, 0.703), (11.5, 0.736), (14.5, 0.745)],
    "MoEfication": [
        (6.8, 0.015),
        (7.2, 0.035),
        (7.4, 0.11),
        (7.8, 0.28),
        (8.2, 0.48),
        (8.9, 0.67),
        (9.6, 0.72),
        (11.0, 0.76),
        (12.4, 0.78),
        (18.0, 0.80),
    ],
    "ZTW": [
        (1.6, 0.08),
        (3.1, 0.16),
        (5.1, 0.29),
        (6.6, 0.41),
        (8.1, 0.53),
        (9.1, 0.60),
        (10.1, 0.67),
        (11.1, 0.72),
        (12.2, 0.76),
        (12.8, 0.78),
        (16.0, 0.80),
    ],
    "base": [(17.6, 0.805)],
}
# (FLOPs ×1e10, 1 − WER) on CommonVoice-es with XLS-R-300M
PAPER_FIG4 = {
    "ACM": [(5.31, 0.750), (6.37, 0.786), (7.28, 0.809), (8.27, 0.822)],
    "MoEfication": [(4.92, 0.480), (5.60, 0.680), (6.96, 0.778), (9.67, 0.822)],
    "base": [(9.03, 0.845)],
}
STYLE = {"ACM": ("o", 0), "MoEfication": ("s", 1), "A-ViT": ("^", 2), "ZTW": ("", 3), "dense, fine-tuned": ("*", 4)}


def draw_tradeoff(ax: plt.Axes, series: dict, base: tuple | None, xlabel: str, ylabel: str, title: str) -> None:
    """Cost-vs-quality curves: ``series = {method: [(cost, quality), ...]}`` or, with error bars,
    ``[(cost, quality, cost s.e., quality s.e.), ...]``; ``base`` a dashed reference ``(cost, quality)``."""
    palette = colors(len(STYLE))
    for name, points in series.items():
        marker, c = STYLE.get(name, ("o", 0))
        points = sorted(points)
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        ax.plot(xs, ys, marker=marker or None, color=palette[c], label=name, lw=1.5, ms=6)
        if len(points[0]) == 4 and marker:
            ax.errorbar(
                xs,
                ys,
                xerr=[p[2] for p in points],
                yerr=[p[3] for p in points],
                fmt="none",
                ecolor=palette[c],
                elinewidth=1,
                capsize=2,
            )
    if base is not None:
        ax.axhline(base[1], color="0.3", ls="--", lw=1, label="base model")
        ax.axvline(base[0], color="0.3", ls="--", lw=1)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=8, loc="lower right")


def draw_paper_tradeoff(ax: plt.Axes, paper: dict, xlabel: str, ylabel: str, title: str) -> None:
    """The paper's digitised points, on their own axes."""
    series = {k: v for k, v in paper.items() if k != "base"}
    draw_tradeoff(ax, series, paper["base"][0], xlabel, ylabel, title)
    ax.text(
        0.02,
        0.97,
        "digitised from the paper",
        transform=ax.transAxes,
        va="top",
        fontsize=8,
        style="italic",
        color="0.3",
    )


def draw_compute_maps(
    fig: plt.Figure, pictures: torch.Tensor, maps: torch.Tensor, titles: list[str] | None = None
) -> None:
    """Row 1: the images; row 2: their per-patch compute (fraction of the most a token can cost, inferno 0–1)."""
    n = len(pictures)
    axes = fig.subplots(2, n, squeeze=False)
    for i in range(n):
        axes[0, i].imshow(pictures[i, 0], cmap="gray", vmin=0, vmax=1)
        im = axes[1, i].imshow(maps[i], cmap="inferno", vmin=0, vmax=1)
        if titles:
            axes[0, i].set_title(titles[i], fontsize=9)
        for ax in axes[:, i]:
            ax.set_xticks([]), ax.set_yticks([])
            ax.grid(False)
    axes[0, 0].set_ylabel("image")
    axes[1, 0].set_ylabel("compute")
    fig.colorbar(im, ax=axes[1, :].tolist(), fraction=0.02, pad=0.01, label="compute / max")


def draw_distillation_errors(ax: plt.Axes, errors: np.ndarray, title: str) -> None:
    """``errors [tokens, N]``: MSE per token (rows sorted by their median) × learners used, log colour."""
    order = np.argsort(np.median(errors, axis=1))
    im = ax.imshow(np.log10(errors[order] + 1e-8), aspect="auto", cmap="gist_rainbow_r", interpolation="nearest")
    ax.set_xticks(range(errors.shape[1]), [str(k + 1) for k in range(errors.shape[1])])
    ax.set(xlabel="learners used k", ylabel="tokens (sorted by median error)", title=title)
    ax.set_yticks([])
    ax.grid(False)
    plt.colorbar(im, ax=ax, label="log10 MSE to the replaced module")


def draw_latency(ax: plt.Axes, result: dict) -> None:
    """Wall time relative to the dense MLP vs MACs relative to it: naive, grouped, fused and fused
    replayed from a CUDA graph against the MLP replayed (where they were timed: a GPU with Triton),
    the linear ideal and acm-9's two bounds. A line joins the medians; the dots are the samples the
    claims are judged on (each process's median ratio, after :func:`ponder.bench.acm.combine`; each
    round's, for one process's result)."""
    from .analysis.latency import OVERHEAD_BOUND, quarter_bound

    palette = colors(4)
    cases = result["cases"]
    fractions = [c["mean_learners"] / result["learners"] for c in cases]
    samples = f"{result['processes']} processes" if "processes" in result else "rounds"
    ax.plot([0, 1], [0, 1], color="0.5", ls=":", label="linear scaling")
    ax.plot(
        [0, 1],
        [OVERHEAD_BOUND, 1 + OVERHEAD_BOUND],
        color="0.5",
        ls="-.",
        lw=0.8,
        label=f"claim: at most linear + {OVERHEAD_BOUND}",
    )
    quarter = quarter_bound(result)
    ax.plot([0.25], [quarter], "_", color="0.2", ms=16, mew=2, label=f"claim at 1 of 4 learners: at most {quarter}x")
    ax.axhline(1.0, color="0.3", ls="--", lw=1, label="dense MLP")
    executions = [
        ("naive", "s-", palette[1], "ACM, naive (masked)"),
        ("grouped", "o-", palette[0], "ACM, grouped (sorted by k)"),
        ("fused", "^-", palette[2], "ACM, fused (two Triton kernels)"),
        ("replayed", "v--", palette[3], "ACM, fused, replayed (CUDA graph; / the MLP replayed)"),
    ]
    timed = [(name, style, color, label) for name, style, color, label in executions if name + "_ratio" in cases[0]]
    for name, style, color, label in timed:
        ax.plot(fractions, [c[name + "_ratio"] for c in cases], style, color=color, label=label)
        each = [(x, r) for x, c in zip(fractions, cases) for r in c[name + "_ratios"]]
        ax.scatter(*zip(*each), s=9, color=color, alpha=0.45, lw=0)
    ax.plot([], [], "o", color="0.4", alpha=0.45, ms=3, label=f"dots: {samples}; lines: their medians")
    highest = max(r for c in cases for name, *_ in timed for r in (c[name + "_ratio"], *c[name + "_ratios"]))
    ax.set(
        xlabel="learner MACs / dense MLP MACs",
        ylabel="wall time / dense MLP",
        xlim=(0, 1.05),
        ylim=(0, 1.1 * max(1.3, highest)),
    )
    ax.set_title(
        f"one ACM layer, {result['tokens']} tokens × {result['width']}, {result['mix']} k per token\n"
        f"{result['device']}, {result['dtype']}, {result['threads']} thread(s)",
        fontsize=10,
    )
    ax.legend(fontsize=7, loc="lower right")  # below the linear ideal: no point is there


def draw_frames(
    ax_bars: plt.Axes,
    ax_wave: plt.Axes,
    wave: np.ndarray,
    rate: int,
    learners: np.ndarray,
    frame_seconds: float,
    text: str,
    n: int,
) -> None:
    """Top: mean learners per audio token; bottom: the waveform with its transcription (acm-7)."""
    t = np.arange(len(learners)) * frame_seconds
    ax_bars.bar(t, learners, width=frame_seconds * 0.9, align="edge", color=colors(1)[0])
    ax_bars.set(ylabel="learners / ACM", ylim=(0, n), xlim=(0, len(wave) / rate))
    ax_wave.plot(np.arange(len(wave)) / rate, wave, lw=0.5, color="0.2")
    ax_wave.set(xlabel="seconds", ylabel="waveform", xlim=(0, len(wave) / rate))
    ax_wave.set_title(f'"{text}"', fontsize=10)
