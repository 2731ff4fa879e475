"""survey-2's reading of an early-exit sweep: the summary per threshold and the savings at matched accuracy."""

import math

import pandas as pd
import pytest

from ponder.analysis.survey import exit_savings, sweep_summary


def sweep() -> pd.DataFrame:
    """One seed, training hops 1-2 and hop 3 beyond: exits at 0.5 keep the accuracy within 0.02 of no exit,
    at 0.1 they lose 0.1 of it."""
    rows = [  # threshold, hops, accuracy, layers
        (math.inf, 1, 1.00, 8.0),
        (math.inf, 2, 0.96, 8.0),
        (math.inf, 3, 0.50, 8.0),
        (0.5, 1, 1.00, 2.0),
        (0.5, 2, 0.94, 6.0),
        (0.5, 3, 0.40, 7.0),
        (0.1, 1, 0.90, 1.0),
        (0.1, 2, 0.86, 1.0),
        (0.1, 3, 0.30, 1.0),
    ]
    return pd.DataFrame(
        [
            {"seed": 0, "threshold": t, "hops": h, "accuracy": a, "layers": n, "in_training": h <= 2}
            for t, h, a, n in rows
        ]
    )


def test_the_summary_weighs_hop_counts_alike_in_and_out_of_training():
    summary = sweep_summary(sweep()).set_index("threshold")
    assert summary.loc[0.5, "accuracy (in training)"] == pytest.approx(0.97)
    assert summary.loc[0.5, "layers (in training)"] == pytest.approx(4.0)
    assert summary.loc[0.5, "accuracy (out of training)"] == pytest.approx(0.40)


def test_savings_are_read_at_the_cheapest_threshold_within_the_tolerance_of_no_exit():
    saved = exit_savings(sweep(), layers=8, train_hops=(1, 2)).loc[0]
    assert saved["threshold"] == 0.5  # 0.1 is cheaper but 0.88 < 0.98 - 0.02
    assert saved["saved"] == pytest.approx(0.5) and saved["no-exit accuracy"] == pytest.approx(0.98)
    assert (saved["layers (fewest hops)"], saved["layers (most hops)"]) == (2.0, 6.0)
    assert exit_savings(sweep(), layers=8, train_hops=(1, 2), tolerance=0.2).loc[0, "threshold"] == 0.1
