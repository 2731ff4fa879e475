"""The survey's ledger rows stated by the analysis layer, on made-up frames: survey-1's parity claims
(stability, interpolation, extrapolation, the one-step control), survey-2's early-exit savings, survey-3's
and survey-4's descriptions."""

import pandas as pd
import pytest

from ponder.studies.survey.analysis import cpvr as survey
from ponder.studies.survey.analysis import parity as pa


def runs(act: dict, pondernet: dict) -> pd.DataFrame:
    """:func:`pa.run_summary`'s grid rows on 3 seeds × 1 cell: ``trained`` and ``beyond`` per method and seed."""
    rows = [
        {"method": method, "cell": 0, "seed": s, "trained": trained, "beyond": beyond, "success": int(trained >= 0.95)}
        for method, values in (("ACT", act), ("PonderNet", pondernet))
        for s, (trained, beyond) in enumerate(zip(values["trained"], values["beyond"]))
    ]
    return pd.DataFrame(rows)


def controls(trained: list[float]) -> pd.DataFrame:
    """:func:`pa.run_summary`'s rows of the one-step control, one per seed."""
    return pd.DataFrame({"seed": range(len(trained)), "trained": trained})


def test_parity_claims_state_survey_1s_four_rows_in_order():
    grid = runs(
        {"trained": [0.90, 0.92, 0.93], "beyond": [0.60, 0.61, 0.59]},
        {"trained": [1.00, 0.99, 1.00], "beyond": [0.80, 0.82, 0.81]},
    )
    rows = pa.parity_claims(grid, controls([0.56, 0.55, 0.57]))
    assert [r.target for r in rows] == ["survey-1"] * 4
    assert [r.text.split(" (")[0] for r in rows] == [
        "PonderNet trains more stably than ACT",
        "PonderNet is more accurate than ACT on the training difficulties",
        "PonderNet extrapolates better than ACT",
        "the task needs more than one step: a GRU held to one step, trained alike, stays below 0.95 on the training "
        "difficulties",
    ]
    assert [r.ours for r in rows] == [
        "PonderNet 3/3 vs ACT 0/3",
        "PonderNet 0.997 vs ACT 0.917",
        "PonderNet 0.810 vs ACT 0.600 (chance 0.5)",
        "0.560",
    ]
    assert [r.verdict.verdict for r in rows] == ["holds"] * 4


def test_parity_claims_fail_when_act_is_ahead_and_the_control_trains():
    grid = runs(
        {"trained": [1.00, 0.99, 1.00], "beyond": [0.80, 0.82, 0.81]},
        {"trained": [0.90, 0.91, 0.92], "beyond": [0.60, 0.61, 0.59]},
    )
    rows = pa.parity_claims(grid, controls([0.99, 0.98, 0.99]))
    assert [r.verdict.verdict for r in rows] == ["does not hold", "does not hold", "does not hold", "does not hold"]


def test_parity_claims_set_aside_an_extrapolation_ranking_at_chance():
    grid = runs(
        {"trained": [1.00, 1.00, 1.00], "beyond": [0.45, 0.47, 0.46]},
        {"trained": [1.00, 1.00, 1.00], "beyond": [0.50, 0.51, 0.49]},
    )
    beyond = pa.parity_claims(grid, controls([0.5, 0.5, 0.5]))[2].verdict
    assert beyond.verdict == "inconclusive" and "outside the paper's regime" in beyond.noise


def savings(saved: list[float], fewest: list[float], most: list[float]) -> pd.DataFrame:
    """:func:`survey.exit_savings`' table, one row per seed, accuracy 0.97 against 0.98 without exits."""
    n = len(saved)
    return pd.DataFrame(
        {
            "saved": saved,
            "accuracy": [0.97] * n,
            "no-exit accuracy": [0.98] * n,
            "layers (fewest hops)": fewest,
            "layers (most hops)": most,
        },
        index=pd.Index(range(n), name="seed"),
    )


@pytest.mark.parametrize(
    "saved, fewest, most, verdict",
    [
        ([0.50, 0.52, 0.48], [2.0, 2.1, 1.9], [6.0, 6.2, 5.8], "holds"),
        ([0.10, 0.11, 0.09], [2.0, 2.1, 1.9], [6.0, 6.2, 5.8], "does not hold"),  # too few layers saved
        ([0.50, 0.52, 0.48], [6.0, 6.2, 5.8], [2.0, 2.1, 1.9], "does not hold"),  # the easy examples go deeper
    ],
)
def test_exit_claims_need_savings_above_a_fifth_and_easy_examples_exiting_earlier(saved, fewest, most, verdict):
    (row,) = survey.exit_claims(savings(saved, fewest, most))
    assert row.target == "survey-2" and row.text.startswith("early exit saves layers on easy examples")
    assert row.verdict.verdict == verdict
    assert row.ours.startswith(f"{sum(saved) / 3:.0%} saved, acc 0.970 vs 0.980; layers ")


def test_exit_claims_state_the_mean_layers_at_one_hop_and_the_most_hops():
    (row,) = survey.exit_claims(savings([0.5, 0.5, 0.5], [2.0, 2.0, 2.0], [6.0, 6.0, 6.5]))
    assert row.ours == "50% saved, acc 0.970 vs 0.980; layers 2.00 (1 hop) vs 6.17"


def test_mod_claims_describe_every_model_in_increasing_macs():
    table = pd.DataFrame(
        {
            "model": ["Transformer", "MoD c=0.25", "MoD c=0.5"],
            "macs": [1.0, 0.31, 0.56],
            "accuracy (in training)": [0.95, 0.71, 0.884],
            "accuracy (out of training)": [0.62, 0.4, 0.555],
        }
    ).set_index(["model", "macs"])
    (row,) = survey.mod_claims(table)
    assert row.target == "survey-3" and row.verdict is None
    assert row.text == "MoD on C-PVR (stand-in): accuracy in / out of training hops vs compute over capacities"
    assert row.ours == (
        "MoD c=0.25: 0.31× MACs, acc 0.71 in / 0.40 out; MoD c=0.5: 0.56× MACs, acc 0.88 in / 0.56 out; "
        "Transformer: 1.00× MACs, acc 0.95 in / 0.62 out"
    )


def test_adaptive_claims_describe_each_method_against_its_twin_in_the_tables_order():
    table = pd.DataFrame(
        {
            "method": ["UT+ACT", "MoD (c=0.5)"],
            "accuracy (in training)": [0.912, 0.8],
            "accuracy (out of training)": [0.41, 0.3],
            "steps": [3.2, 4.0],
            "compute (share of dense)": [0.8, 0.556],
            "dense twin": ["UT", "Transformer"],
            "inference s": [0.02, 0.01],
            "twin inference s": [0.025, 0.0125],
            "time / twin": [0.8, 0.8],
        }
    )
    rows = survey.adaptive_claims(table)
    assert [(r.target, r.verdict) for r in rows] == [("survey-4", None)] * 2
    assert rows[1].text == (
        "MoD (c=0.5) on C-PVR (stand-in): accuracy in / out of training hops, compute share, inference time vs "
        "Transformer"
    )
    assert [r.ours for r in rows] == [
        "0.91 / 0.41, compute 0.80, time 0.80×",
        "0.80 / 0.30, compute 0.56, time 0.80×",
    ]
