"""Figures of the Hyper-UT reproduction (hut-2 … hut-10), drawn from the experiments' data frames."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ...ledger.verdicts import Estimate
from ...plots import colors


def styles(order: list[str]) -> tuple[dict, dict]:
    """One colour and one marker per model, the same in every figure."""
    return dict(zip(order, colors(len(order)))), dict(zip(order, ["o", "X", "s", "P", "D", "*", "^", "v"]))


def shade_out_of_distribution(ax: plt.Axes, train_max: int, hops_max: int) -> None:
    """Grey band over the hop counts above the training range."""
    ax.axvspan(train_max + 0.5, hops_max + 0.5, color="0.92", zorder=0)
    ax.text(train_max + 0.6, 0.02, "out of distribution", transform=ax.get_xaxis_transform(), color="0.4", fontsize=9)


def draw_rate_grid(axes: tuple[plt.Axes, plt.Axes], choices: pd.DataFrame, order: list[str]) -> None:
    """Each model's tuning grid (``experiments.hyper_ut.lr_choices``): its validation cross-entropy on the
    training hops (``axes[0]``, log scale; what the rate is chosen on) and its accuracy beyond them (``axes[1]``;
    shown, never chosen on) at every point of the grid, the chosen point ringed."""
    points = [c.removeprefix("loss ") for c in choices.columns if c.startswith("loss ")]
    palette, markers = styles(order)
    for model in order:
        row = choices.loc[model]
        for ax, what in zip(axes, ("loss", "ood")):
            values = [row[f"{what} {p}"] for p in points]
            ax.plot(range(len(points)), values, label=model, marker=markers[model], color=palette[model])
            ax.scatter(
                [points.index(row["chosen"])],
                [row[f"{what} {row['chosen']}"]],
                s=160,
                facecolors="none",
                edgecolors="black",
                zorder=3,
            )
    for ax, label in zip(
        axes, ("validation loss, training hops (chosen on)", "accuracy beyond training (never chosen on)")
    ):
        ax.set_xticks(range(len(points)), points, rotation=30, ha="right")
        ax.set_xlabel("learning rate, warmup")
        ax.set_ylabel(label)
    axes[0].set_yscale("log")
    axes[1].legend(fontsize=8, loc="best")


def draw_depth_heatmap(ax: plt.Axes, frame: pd.DataFrame, baselines: pd.DataFrame | None = None) -> None:
    """hut-2: accuracy of each depth of Transformer (trained on every hop count) per hop count, mean over seeds;
    ``baselines`` (``hops`` and one column per baseline, as ``ponder.studies.hyper_ut.analysis.task.baselines``) as
    rows below, set
    apart by a line."""
    table = frame.pivot_table(index="depth", columns="hops", values="accuracy").sort_index(ascending=False)
    table.index = [f"depth {d}" for d in table.index]
    if baselines is not None:
        below = baselines.set_index("hops").loc[table.columns].T
        table = pd.concat([table, below])
        ax.axhline(len(table) - len(below), color="white", lw=3)
    sns.heatmap(table, annot=True, fmt=".2f", vmin=0, vmax=1, cmap="viridis", cbar_kws={"label": "accuracy"}, ax=ax)
    ax.set(xlabel="hops (tested; all trained on)", ylabel="Transformer")


def draw_accuracy_vs_hops(
    ax: plt.Axes,
    frame: pd.DataFrame,
    order: list[str],
    train_max: int,
    baselines: pd.DataFrame | None = None,
    legend_beside: bool = False,
) -> None:
    """hut-3: mean accuracy per test hop count with the standard error over seeds; ``baselines``
    (``hops`` and one column per baseline, e.g. chance) drawn as grey lines; ``legend_beside``: the
    legend right of the axes instead of inside them."""
    palette, markers = styles(order)
    sns.lineplot(
        frame,
        x="hops",
        y="accuracy",
        hue="model",
        hue_order=order,
        style="model",
        style_order=order,
        markers=markers,
        dashes=False,
        errorbar="se",
        err_style="bars",
        ax=ax,
        palette=palette,
    )
    draw_baselines(ax, baselines)
    shade_out_of_distribution(ax, train_max, int(frame["hops"].max()))
    ax.set(xlabel="test hop count", ylabel="accuracy", ylim=(0, 1.02), xticks=sorted(frame["hops"].unique()))
    ax.legend(title=None, fontsize=9, **(dict(loc="upper left", bbox_to_anchor=(1.01, 1)) if legend_beside else {}))


def draw_baselines(ax: plt.Axes, baselines: pd.DataFrame | None) -> None:
    """``baselines`` (``hops`` and one column per rule, e.g. chance) as grey lines, each its own dash."""
    for (name, line), style in zip(
        (baselines if baselines is not None else pd.DataFrame()).drop(columns="hops", errors="ignore").items(),
        (":", "-.", "--", (0, (5, 1, 1, 1, 1, 1))),
    ):
        ax.plot(baselines["hops"], line, color="0.45", ls=style, lw=1.5, label=name)


def draw_steps_vs_hops(
    ax: plt.Axes, frame: pd.DataFrame, order: list[str], act_order: list[str], fixed_steps: int, train_max: int
) -> None:
    """hut-4: mean ponder steps per test hop count for the ACT models (coloured as in hut-3); the fixed
    depth as a line."""
    act = frame[frame["model"].isin(act_order)]
    palette, markers = styles(order)
    sns.lineplot(
        act,
        x="hops",
        y="steps",
        hue="model",
        hue_order=act_order,
        style="model",
        style_order=act_order,
        markers={m: markers[m] for m in act_order},
        dashes=False,
        errorbar="se",
        err_style="bars",
        ax=ax,
        palette={m: palette[m] for m in act_order},
    )
    ax.axhline(
        fixed_steps, color="0.3", ls="--", label=f"fixed depth ({fixed_steps}): Transformer, UT, Hyper-UT w/o ACT"
    )
    shade_out_of_distribution(ax, train_max, int(frame["hops"].max()))
    ax.set(
        xlabel="test hop count",
        ylabel="average ponder steps N",
        ylim=(0, fixed_steps + 0.5),
        xticks=sorted(frame["hops"].unique()),
    )
    ax.legend(title=None, fontsize=9)


def mean_se(values: pd.Series, digits: int = 2, sign: bool = False) -> str:
    """``"0.64 ± 0.04"``: the mean and standard error over seeds (the mean alone for one seed)."""
    estimate = Estimate.of(values)
    return f"{estimate.mean:{'+' if sign else ''}.{digits}f}" + (
        f" ± {estimate.se:.{digits}f}" if estimate.n > 1 else ""
    )


def results_table(
    seeds: pd.DataFrame, order: list[str], act_order: list[str], train_max: int, test_max: int
) -> pd.DataFrame:
    """hut-3/4/5 in one table (docs/hyper-ut.md shows it): per model, accuracy in and out of the training hops,
    mean steps and steps per extra hop (ACT models), parameters, as mean ± s.e. over the seeds, and
    how many seeds fit the training hops.

    ``seeds``: one row per model and seed (:func:`ponder.studies.hyper_ut.analysis.cpvr.per_seed`, with
    ``with_fit``'s ``fits``).
    """
    rows = []
    for model in order:
        part = seeds[seeds["model"] == model]
        act = model in act_order
        rows.append(
            {
                "model": model,
                f"hops 1–{train_max}": mean_se(part["in distribution"]),
                f"hops {train_max + 1}–{test_max}": mean_se(part["out of distribution"]),
                "mean steps": mean_se(part["steps"]) if act else f"{part['steps'].mean():g}",
                "steps per extra hop": mean_se(part["steps slope"], sign=True) if act else "—",
                "parameters": f"{int(part['params'].iloc[0]):,}",
                "seeds": len(part),
                f"fit hops 1–{train_max}": f"{int(part['fits'].sum())} of {len(part)}",
            }
        )
    return pd.DataFrame(rows)


def draw_sharing(ax: plt.Axes, summary: pd.DataFrame) -> None:
    """hut-5: in- and out-of-distribution accuracy per model (bars, seed s.e.), parameters in the labels."""
    long = summary.melt(
        id_vars=["label"], value_vars=["in distribution", "out of distribution"], var_name="test", value_name="accuracy"
    )
    sns.barplot(long, x="label", y="accuracy", hue="test", ax=ax, errorbar=None, palette=colors(2))
    errors = summary.melt(
        id_vars=["label"], value_vars=["in distribution se", "out of distribution se"], value_name="se"
    )["se"].to_numpy()
    for bar, err in zip(ax.patches, errors):
        ax.errorbar(bar.get_x() + bar.get_width() / 2, bar.get_height(), yerr=err, color="0.2", capsize=3)
    ax.set(xlabel=None, ylabel="accuracy", ylim=(0, 1.02))
    ax.legend(title=None, fontsize=9)


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
    ``baselines`` as in :func:`draw_accuracy_vs_hops`."""
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


def draw_table(ax: plt.Axes, table: pd.DataFrame, font_size: int = 9) -> None:
    """A data frame as a matplotlib table (hut-9, hut-8)."""
    ax.axis("off")
    cells = ax.table(
        cellText=table.astype(str).to_numpy(), colLabels=list(table.columns), loc="center", cellLoc="center"
    )
    cells.auto_set_font_size(False)
    cells.set_fontsize(font_size)
    cells.auto_set_column_width(list(range(len(table.columns))))
    cells.scale(1, 1.5)
    for (row, _), cell in cells.get_celld().items():
        if row == 0:
            cell.set_text_props(weight="bold")
            cell.set_facecolor("0.9")


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


def draw_scratchpad(fig: plt.Figure, frame: pd.DataFrame, chance: pd.DataFrame, train_max: int) -> None:
    """hut-7: one panel per decoding rule, answer-only and scratch-pad accuracy per test hop count
    (s.e. over seeds), ``chance`` (``hops`` and one column per baseline) in grey."""
    decodings, order = list(dict.fromkeys(frame["decoding"])), list(dict.fromkeys(frame["target"]))
    axes = fig.subplots(1, len(decodings), sharey=True, squeeze=False)[0]
    for ax, decoding in zip(axes, decodings):
        part = frame[frame["decoding"] == decoding].rename(columns={"target": "model"})
        draw_accuracy_vs_hops(ax, part, order, train_max, baselines=chance)
        ax.set_title(decoding)


def draw_ponder_trace(ax: plt.Axes, trace: dict, max_steps: int) -> None:
    """The halting probability ``p^n`` and the halting weight ``w^n`` of each step of one example."""
    steps = np.arange(1, max_steps + 1)
    if trace["halting_probability"]:
        ax.bar(
            steps - 0.2, trace["halting_probability"], width=0.4, color=colors(2)[0], label="halting probability $p^n$"
        )
        ax.bar(steps + 0.2, trace["weights"], width=0.4, color=colors(2)[1], label="halting weight $w^n$")
        ax.legend(fontsize=8, loc="upper right")
    else:
        ax.text(0.5, 0.5, f"fixed depth: all {max_steps} steps", transform=ax.transAxes, ha="center", va="center")
    ax.axvline(trace["steps"] + 0.5, color="0.3", ls=":")
    ax.set(
        xlabel="step",
        ylabel="probability",
        ylim=(0, 1.05),
        xticks=steps,
        title=f"pondered {trace['steps']:.0f} step(s)",
    )
