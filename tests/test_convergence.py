"""The convergence rule (ponder.ledger.convergence) and the rows it makes inconclusive
(ponder.ledger.verdicts.unconverged)."""

import math

import pytest

from ponder.ledger import convergence
from ponder.ledger.verdicts import Verdict, unconverged


def history(losses):
    return [{"step": 50 * (i + 1), "loss": loss} for i, loss in enumerate(losses)]


def test_a_flat_curve_has_plateaued_and_a_falling_one_has_not():
    flat = history([2.0, 1.0, 0.6, 0.5, 0.5, 0.49, 0.5, 0.49])
    falling = history([2.0, 1.8, 1.6, 1.4, 1.2, 1.0, 0.8, 0.7])
    assert convergence.plateau(flat) is None
    assert convergence.plateau_fall(falling) == pytest.approx((1.1 - 0.75) / 1.1)
    assert "still fell 32%" in convergence.plateau(falling)
    assert "too few" in convergence.plateau(history([1.0, 0.9, 0.8]))
    assert math.isnan(convergence.plateau_fall(history([1.0])))


def test_a_classifier_that_fits_its_training_distribution_has_converged_though_its_loss_still_halves():
    annealed = history([2.0, 1.0, 0.5, 0.3, 0.12, 0.1, 0.02, 0.01])  # the last two windows: 0.11, then 0.015
    assert convergence.FIT_LOSS == pytest.approx(-math.log(0.95))
    assert convergence.plateau(annealed, fitted_below=convergence.FIT_LOSS) is None
    why = convergence.plateau(annealed, fitted_below=0.01)
    assert "fell 86% over its last 25% of training, to 0.015 (fitted: < 0.010)" in why
    assert "still fell 86%" in convergence.plateau(annealed)  # without the clause (a loss other than cross-entropy)
    unfitted = history([2.0, 1.8, 1.6, 1.4, 1.2, 1.0, 0.8, 0.7])
    assert list(convergence.unfinished({"a": annealed, "b": unfitted}, fitted_below=convergence.FIT_LOSS)) == ["b"]


def test_fit_and_the_references_that_fail():
    assert convergence.fit(0.97) is None
    assert convergence.fit(0.57, what="accuracy on hops 1-3") == "its accuracy on hops 1-3 is 0.57, below 0.95"
    assert convergence.unfit({"scratch-pad": 0.99, "answer-only": 0.57}, what="accuracy on hops 1-3") == {
        "answer-only": "its accuracy on hops 1-3 is 0.57, below 0.95"
    }
    falling = history([2.0, 1.8, 1.6, 1.4, 1.2, 1.0, 0.8, 0.7])
    assert list(convergence.unfinished({"flat": history([1.0] * 8), "falling": falling})) == ["falling"]


def test_an_unconverged_reference_makes_the_row_inconclusive_and_keeps_the_evidence():
    held = Verdict("holds", "d = +0.1 ± 0.01 (n=3)")
    assert unconverged(held, {}) is held
    row = unconverged(held, {"ViT": "its training loss still fell 12%"})
    assert row.verdict == "inconclusive"
    assert row.noise == (
        "reference not converged (ViT: its training loss still fell 12%) "
        "(by the noise rule alone: holds; d = +0.1 ± 0.01 (n=3))"
    )


def test_steps_on_training_hops_and_unfit_runs():
    import pandas as pd

    from ponder.studies.hyper_ut.analysis import cpvr as hyper_ut

    frame = pd.DataFrame(
        [
            dict(model=m, seed=s, hops=h, steps=base + h + s)
            for m, base in (("A", 0.0), ("B", 1.0))
            for s in (0, 1)
            for h in (1, 2, 3, 4)
        ]
    )
    steps = hyper_ut.steps_on_training_hops(frame, train_max=2)
    assert steps.loc[0, "A"] == 1.5 and steps.loc[1, "B"] == 3.5 and list(steps.columns) == ["A", "B"]
    fits = pd.DataFrame(dict(model=["A", "A", "B", "B"], seed=[0, 1, 0, 1], fits=[True, False, True, True]))
    assert list(hyper_ut.unfit_of(fits, ["A", "B"])) == ["A, seed 1"] and hyper_ut.unfit_of(fits, ["B"]) == {}


def test_the_two_ends_rule_scores_about_a_half_on_hut7s_test_set():
    from ponder.studies.hyper_ut.analysis import task

    rule = task.two_ends_rule(12, (1, 3, 5), 200)
    assert rule["hops"].tolist() == [1, 3, 5] and list(rule.columns) == ["hops", "one of the two ends"]
    assert ((rule["one of the two ends"] >= 0.5) & (rule["one of the two ends"] < 0.65)).all()
