"""Figures of Hyper-UT and its baselines on C-PVR (hut-2 … hut-5, hut-9), drawn from the experiments' data frames,
and the pieces the other figures share: one style per model, the shading beyond the training hops, a table."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ....ledger.verdicts import Estimate
from ....plots import colors


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
