"""Survey analysis on the trained C-PVR and parity runs (:mod:`ponder.studies.survey.cpvr`): early exit's sweep of
thresholds and what it saves (survey-2), Mixture-of-Depths' accuracy against its MACs (survey-3), every adaptive
method beside its dense twin, timed (survey-4), and each target's ledger rows (the knobs the widget notebook turns on
the trained models: :mod:`ponder.studies.survey.analysis.knobs`).

Nothing here defines a run, so nothing here is part of a run's cache key
(:func:`ponder.runner.runs.import_closure`): an edit retrains no run."""

import math
import statistics
from collections.abc import Sequence

import pandas as pd
import torch

from ....ledger import verdicts
from ....ledger.verdicts import Claim
from ....models.calm import CALMClassifier
from ....models.mod import block_macs, mod_macs
from ....profiles import by_profile
from ....runner.timing import time_it
from ....runner.training import default_device, num_threads
from ...hyper_ut import cpvr as hyper_ut
from ...hyper_ut.cpvr import per_hop, test_set
from ..cpvr import train_early_exit, train_mod, train_pondernet
from ..sizes.cpvr import SURVEY


# -- survey-2: early exit -----------------------------------------------------------------
@num_threads(1)
def exit_sweep(profile: str, seed: int = 0) -> pd.DataFrame:
    """One row per seed, threshold and test hop count: ``accuracy`` and mean ``layers`` used."""
    sizes, survey = by_profile(hyper_ut.SIZES, profile), by_profile(SURVEY, profile)
    x, hops, label = test_set(sizes["length"], sizes["test_hops"], sizes["n_test"])
    rows = []
    for s in sizes["seeds"]:
        model, _ = train_early_exit(profile, seed + s)
        for threshold in survey["thresholds"]:
            model.threshold = threshold
            with torch.no_grad():
                out = model(x.to(default_device()))
            correct = (out.logits.argmax(-1).cpu() == label).float()
            layers = out.steps.cpu()
            for h in sizes["test_hops"]:
                rows.append(
                    {
                        "seed": seed + s,
                        "threshold": threshold,
                        "hops": h,
                        "accuracy": correct[hops == h].mean().item(),
                        "layers": layers[hops == h].mean().item(),
                        "in_training": h in sizes["train_hops"],
                    }
                )
    return pd.DataFrame(rows)


def sweep_summary(sweep: pd.DataFrame) -> pd.DataFrame:
    """Per threshold: in-distribution and out-of-distribution accuracy and mean layers (hop counts
    weighted equally), averaged over seeds."""
    table = sweep.groupby(["threshold", "in_training"])[["accuracy", "layers"]].mean().unstack("in_training")
    table.columns = [f"{metric} ({'in' if inside else 'out of'} training)" for metric, inside in table.columns]
    return table.reset_index()


def exit_savings(sweep: pd.DataFrame, layers: int, train_hops: Sequence[int], tolerance: float = 0.02) -> pd.DataFrame:
    """survey-2, per seed: the lowest threshold whose accuracy on the training hop counts is within
    ``tolerance`` of no exit, the share of layers it saves there, and the layers it uses on the
    fewest and on the most training hops."""
    rows = []
    for s, part in sweep.groupby("seed"):
        summary = sweep_summary(part)
        dense = summary[summary["threshold"] == math.inf].iloc[0]
        ok = summary[summary["accuracy (in training)"] >= dense["accuracy (in training)"] - tolerance]
        best = ok.sort_values("layers (in training)").iloc[0]
        at_best = part[part["threshold"] == best["threshold"]].set_index("hops")["layers"]
        rows.append(
            {
                "seed": s,
                "threshold": best["threshold"],
                "saved": 1 - best["layers (in training)"] / layers,
                "accuracy": best["accuracy (in training)"],
                "no-exit accuracy": dense["accuracy (in training)"],
                "layers (fewest hops)": at_best[min(train_hops)],
                "layers (most hops)": at_best[max(train_hops)],
            }
        )
    return pd.DataFrame(rows).set_index("seed")


def exit_claims(savings: pd.DataFrame) -> list[Claim]:
    """survey-2's row from :func:`exit_savings`' table (one row per seed; ``saved``, ``accuracy``, ``no-exit
    accuracy``, ``layers (fewest hops)``, ``layers (most hops)``): early exit saves more than 20% of the layers
    within the tolerance of no exit, and the fewest hops use fewer layers than the most, per seed."""
    fewest, most = savings["layers (fewest hops)"], savings["layers (most hops)"]
    return [
        Claim(
            "survey-2",
            "early exit saves layers on easy examples at small accuracy cost (>20% layers saved within 2 points of "
            "no-exit accuracy, 1-hop examples exit earlier; C-PVR stand-in)",
            ours=f"{savings['saved'].mean():.0%} saved, acc {savings['accuracy'].mean():.3f} vs "
            f"{savings['no-exit accuracy'].mean():.3f}; layers {fewest.mean():.2f} (1 hop) vs {most.mean():.2f}",
            verdict=verdicts.every([verdicts.above(savings["saved"], 0.2), verdicts.greater(most, fewest)]),
        )
    ]


# -- survey-3: Mixture-of-Depths ----------------------------------------------------------
@num_threads(1)
def mod_frame(profile: str, seed: int = 0) -> pd.DataFrame:
    """One row per capacity (and the Transformer) and test hop count: ``accuracy``, relative MACs."""
    sizes, survey = by_profile(hyper_ut.SIZES, profile), by_profile(SURVEY, profile)
    m, tokens = sizes["model"], sizes["length"] + 1
    dense = m["steps"] * block_macs(tokens, m["dim"], m["mlp_ratio"])
    parts = []
    for capacity in survey["capacities"]:
        _, metrics = train_mod(profile, capacity, seed)
        parts.append(
            hyper_ut.frame(
                metrics,
                model=f"MoD c={capacity:g}",
                capacity=capacity,
                macs=mod_macs(tokens, m["dim"], m["steps"], capacity, m["mlp_ratio"]) / dense,
            )
        )
    _, metrics = hyper_ut.train_cpvr("transformer", profile, seed)
    parts.append(hyper_ut.frame(metrics, model="Transformer", capacity=1.0, macs=1.0))
    frame = pd.concat(parts, ignore_index=True)
    frame["in_training"] = frame["hops"].isin(sizes["train_hops"])
    return frame


def mod_claims(table: pd.DataFrame) -> list[Claim]:
    """survey-3's row, a description: ``table`` has one row per model, indexed by ``(model, macs)`` (MACs relative
    to the Transformer), with columns ``accuracy (in training)`` and ``accuracy (out of training)``; the row lists
    every model's MACs and accuracies in increasing MACs."""
    rows = table.reset_index().sort_values("macs")
    seen = "; ".join(
        f"{r['model']}: {r['macs']:.2f}× MACs, acc {r['accuracy (in training)']:.2f} in / "
        f"{r['accuracy (out of training)']:.2f} out"
        for _, r in rows.iterrows()
    )
    return [
        Claim(
            "survey-3",
            "MoD on C-PVR (stand-in): accuracy in / out of training hops vs compute over capacities",
            ours=seen,
            verdict=None,
        )
    ]


# -- survey-4: every adaptive method against its dense twin --------------------------------
@torch.no_grad()
def paired_seconds(model: torch.nn.Module, twin: torch.nn.Module, x: torch.Tensor, rounds: int) -> tuple[float, float]:
    """Median seconds of one inference pass over ``x`` (batches of 256) for ``model`` and ``twin``,
    measured in alternation for ``rounds`` rounds, so that a busy machine slows both alike."""
    batches = x.to(default_device()).split(256)
    times = {id(model): [], id(twin): []}
    for net in (model, twin):
        net.eval()
    for _ in range(rounds):
        for net in (model, twin):
            times[id(net)].append(time_it(lambda net=net: [net(b) for b in batches], repeats=3, warmup=1))
    return statistics.median(times[id(model)]), statistics.median(times[id(twin)])


def _summary(metrics: dict, train_hops: Sequence[int]) -> dict:
    """Mean accuracy in and out of the training hop counts, and mean steps (hop counts weighted equally)."""
    frame = hyper_ut.frame(metrics)
    inside = frame["hops"].isin(train_hops)
    return {
        "accuracy (in training)": frame.loc[inside, "accuracy"].mean(),
        "accuracy (out of training)": frame.loc[~inside, "accuracy"].mean(),
        "steps": frame["steps"].mean(),
    }


@num_threads(1)
def adaptive_table(profile: str, seed: int = 0) -> pd.DataFrame:
    """survey-4: every adaptive method on C-PVR beside its dense twin.

    Columns: accuracy in and out of the training hops, mean layers or steps used, compute as a
    fraction of the dense twin's (steps / max steps; MACs for MoD), and the measured inference
    seconds of the method and its twin over the whole test set (ACT, PonderNet and early exit
    with halted examples leaving the batch), measured one after the other in this process.
    """
    sizes, survey = by_profile(hyper_ut.SIZES, profile), by_profile(SURVEY, profile)
    m = sizes["model"]
    runs = {
        kind: hyper_ut.train_cpvr(kind, profile, seed) for kind in ("transformer", "ut", "ut_act", "hyper", "hyper_act")
    }
    models = {kind: model for kind, (model, _) in runs.items()}
    for kind in ("ut_act", "hyper_act"):
        models[kind].depth.compact = True  # halted examples leave the batch at inference
    early_exit, _ = train_early_exit(profile, seed)
    dense_exit = CALMClassifier(early_exit)  # the same weights without exits: its dense twin
    early_exit.threshold = survey["table_threshold"]
    mod, mod_metrics = train_mod(profile, survey["table_capacity"], seed)
    pondernet, ponder_metrics = train_pondernet(profile, seed)
    tokens, t = sizes["length"] + 1, m["steps"]
    mod_share = mod_macs(tokens, m["dim"], t, survey["table_capacity"], m["mlp_ratio"]) / (
        t * block_macs(tokens, m["dim"], m["mlp_ratio"])
    )
    exit_metrics = per_hop(early_exit, sizes["length"], sizes["test_hops"], sizes["n_test"])
    rows = [  # (method, model, metrics, dense twin name, twin, share of the twin's compute or None for steps / T)
        ("Transformer", models["transformer"], runs["transformer"][1], "Transformer", models["transformer"], 1.0),
        ("UT", models["ut"], runs["ut"][1], "UT", models["ut"], 1.0),
        ("UT+ACT", models["ut_act"], runs["ut_act"][1], "UT", models["ut"], None),
        ("Hyper-UT", models["hyper_act"], runs["hyper_act"][1], "Hyper-UT w/o ACT", models["hyper"], None),
        ("PonderNet-UT", pondernet, ponder_metrics, "UT", models["ut"], None),
        (
            f"Early exit (λ={survey['table_threshold']:g})",
            early_exit,
            exit_metrics,
            "same net, all layers",
            dense_exit,
            None,
        ),
        (f"MoD (c={survey['table_capacity']:g})", mod, mod_metrics, "Transformer", models["transformer"], mod_share),
    ]
    x = test_set(sizes["length"], sizes["test_hops"], sizes["n_test"])[0]
    table = []
    for name, model, metrics, twin_name, twin, share in rows:
        summary = _summary(metrics, sizes["train_hops"])
        seconds, twin_seconds = paired_seconds(model, twin, x, survey["timing_rounds"])
        table.append(
            {
                "method": name,
                **summary,
                "compute (share of dense)": summary["steps"] / t if share is None else share,
                "dense twin": twin_name,
                "inference s": seconds,
                "twin inference s": twin_seconds,
                "time / twin": seconds / twin_seconds,
            }
        )
    return pd.DataFrame(table)


def adaptive_claims(table: pd.DataFrame) -> list[Claim]:
    """survey-4's rows, descriptions: one per row of :func:`adaptive_table` (one row per method; ``method``,
    ``dense twin``, ``accuracy (in training)``, ``accuracy (out of training)``, ``compute (share of dense)``,
    ``time / twin``), in its order: the method's accuracies, compute share and time relative to its twin."""
    return [
        Claim(
            "survey-4",
            f"{row['method']} on C-PVR (stand-in): accuracy in / out of training hops, compute share, inference "
            f"time vs {row['dense twin']}",
            ours=f"{row['accuracy (in training)']:.2f} / {row['accuracy (out of training)']:.2f}, compute "
            f"{row['compute (share of dense)']:.2f}, time {row['time / twin']:.2f}×",
            verdict=None,
        )
        for _, row in table.iterrows()
    ]
