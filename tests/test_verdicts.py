"""The verdict rule: its tests, its multiplicity correction, and its error rates simulated under the null."""

import math

import numpy as np
import pytest
from scipy import stats

from ponder.ledger import verdicts


@pytest.mark.parametrize(
    "d, delta, verdict",
    [
        ([0.10, 0.12, 0.11], 0.0, "holds"),  # mean 0.11, se 0.006: far above 0
        ([-0.10, -0.12, -0.11], 0.0, "does not hold"),  # far below 0
        ([0.05, -0.05, 0.02], 0.0, "inconclusive"),  # within the noise
        ([0.0, 0.0, 0.0], 0.0, "inconclusive"),  # a 0-vs-0 tie with delta 0: no effect shown, none ruled out
        ([0.0, 0.0, 0.0], 0.01, "does not hold"),  # the same tie when a difference under 0.01 does not count
        ([0.005, 0.006, 0.004], 0.01, "does not hold"),  # positive beyond the noise but smaller than delta
        ([0.3, 0.4], 0.0, "inconclusive"),  # fewer seeds than the rule needs
        ([2.0, 2.0, 2.0], 0.0, "holds"),  # no spread at all
    ],
)
def test_the_rule_on_one_part(d, delta, verdict):
    assert verdicts.judge(verdicts.Estimate.of(d), delta).verdict == verdict


def test_a_part_is_decided_at_students_quantile_not_at_two_standard_errors():
    sd = 1.0
    for n, t in ((3, 2.920), (5, 2.132), (10, 1.833)):
        assert verdicts.t_quantile(n - 1) == pytest.approx(t, abs=1e-3)
        just_above, just_below = (
            verdicts.Estimate(k * sd / math.sqrt(n), sd / math.sqrt(n), n) for k in (t + 0.01, t - 0.01)
        )
        assert verdicts.judge(just_above).verdict == "holds"
        assert verdicts.judge(just_below).verdict == "inconclusive"
    # z = 2.6 at 3 seeds held under a 2-standard-error rule and is within the noise at 5 %
    assert verdicts.judge(verdicts.Estimate(2.6, 1.0, 3)).verdict == "inconclusive"


def test_p_values_are_students():
    e = verdicts.Estimate(0.3, 0.1, 4)
    assert e.p_above(0) == pytest.approx(stats.t.sf(3.0, 3))
    assert e.p_below(0.5) == pytest.approx(stats.t.cdf(-2.0, 3))
    normal = verdicts.Estimate(0.3, 0.1, 4096, math.inf)
    assert normal.p_above(0) == pytest.approx(stats.norm.sf(3.0))
    assert verdicts.t_quantile(math.inf) == pytest.approx(stats.norm.ppf(0.95))


def test_an_undecided_part_says_how_many_seeds_would_decide_it():
    d = verdicts.Estimate.of([0.05, -0.01, 0.08])  # mean 0.04, sd 0.046
    needed = verdicts.seeds_to_decide(d)
    sd = d.se * math.sqrt(d.n)
    assert d.mean >= stats.t.ppf(0.95, needed - 1) * sd / math.sqrt(needed)
    assert d.mean < stats.t.ppf(0.95, needed - 2) * sd / math.sqrt(needed - 1)
    assert f"{needed} seeds would decide it" in verdicts.judge(d).noise
    assert verdicts.seeds_to_decide(verdicts.Estimate(0.0, 0.1, 3)) is None  # no effect and no delta: never
    assert verdicts.seeds_to_decide(verdicts.Estimate(-0.02, 0.01, 3), delta=0.05) == 3  # distance to delta counts
    assert "no number of seeds" in verdicts.judge(verdicts.Estimate(0.0, 0.1, 3)).noise


def test_greater_pairs_seeds_or_uses_welchs_test():
    a, b = [0.50, 0.60, 0.70], [0.45, 0.55, 0.65]  # a seed-to-seed spread much larger than the gap
    assert verdicts.greater(a, b).verdict == "holds"  # paired: every seed's difference is +0.05
    assert verdicts.greater(a, b, paired=False).verdict == "inconclusive"
    welch = verdicts.welch(verdicts.Estimate.of([1.0, 2.0, 4.0]), verdicts.Estimate.of([0.0, 0.5, 1.0, 0.2, 0.3]))
    expected = stats.ttest_ind([1.0, 2.0, 4.0], [0.0, 0.5, 1.0, 0.2, 0.3], equal_var=False, alternative="greater")
    assert welch.p_above(0) == pytest.approx(expected.pvalue)
    with pytest.raises(ValueError, match="as many seeds on each side"):
        verdicts.greater([1, 2, 3], [1, 2])


def test_greater_leaves_out_the_seeds_one_side_lacks():
    nan = float("nan")
    one = verdicts.greater([0.9, 0.8, 0.7], [0.1, nan, nan])  # b trained on the first seed only
    assert one.verdict == "inconclusive" and "n=1" in one.noise
    assert verdicts.greater([0.5, 0.6, 0.7, 0.8], [0.45, 0.55, nan, 0.75]).verdict == "holds"  # 3 pairs of +0.05
    with pytest.raises(ValueError, match="no seed is measured on both sides"):
        verdicts.greater([1.0, nan], [nan, 2.0])


def test_every_part_must_hold():
    yes, no, unsure = verdicts.exact(True), verdicts.exact(False), verdicts.judge(verdicts.Estimate.of([0.1]))
    assert verdicts.every([yes, yes]).verdict == "holds"
    assert verdicts.every([yes, unsure]).verdict == "inconclusive"
    assert verdicts.every([unsure, no, yes]).verdict == "does not hold"
    assert verdicts.every([yes, no]).noise.startswith("[1] holds: exact")


def test_a_part_refuted_alone_is_refuted_only_after_holms_correction():
    # one-sided p of "d >= 0" about 0.03: refuted alone at 5 %, not against 0.05 / 3 over three parts
    weak_no = verdicts.judge(verdicts.Estimate(-stats.t.ppf(0.97, 4) * 0.1, 0.1, 5))
    assert weak_no.verdict == "does not hold" and weak_no.p_refutes == pytest.approx(0.03)
    yes = verdicts.above([0.9, 0.91, 0.92], 0.5)
    assert verdicts.every([weak_no]).verdict == "does not hold"
    three = verdicts.every([weak_no, yes, yes])
    assert three.verdict == "inconclusive"
    assert "[1] inconclusive after Holm's correction over 3 parts (alone: does not hold)" in three.noise
    strong_no = verdicts.judge(verdicts.Estimate(-1.0, 0.1, 5))
    assert verdicts.every([weak_no, strong_no, yes]).verdict == "does not hold"
    # Holm steps down: with the strong refutation taken at 0.05 / 3, the weak one is compared with 0.05 / 2
    assert verdicts.holm([0.03, 0.001, 0.5]) == [False, True, False]
    assert verdicts.holm([0.02, 0.001, 0.5]) == [True, True, False]
    # nested: an every() of every()s refutes exactly when Holm over the inner parts would
    assert verdicts.every([three, yes]).verdict == "inconclusive"
    assert verdicts.every([verdicts.every([weak_no, strong_no]), yes]).verdict == "does not hold"


def test_exact_rows_and_set_aside_rows_carry_their_p_values():
    assert (verdicts.exact(True).p_holds, verdicts.exact(True).p_refutes) == (0.0, 1.0)
    assert (verdicts.exact(False).p_holds, verdicts.exact(False).p_refutes) == (1.0, 0.0)
    aside = verdicts.unconverged(verdicts.exact(False), {"phase I": "still falling"})
    assert aside.verdict == "inconclusive" and verdicts.every([aside, verdicts.exact(True)]).verdict == "inconclusive"


def test_above_and_below_compare_with_a_bound():
    assert verdicts.above([0.8, 0.82, 0.81], 0.7).verdict == "holds"
    assert verdicts.below([0.8, 0.82, 0.81], 0.7).verdict == "does not hold"
    assert verdicts.Estimate.of([1.0, 3.0]) == verdicts.Estimate(2.0, 1.0, 2)
    with pytest.raises(ValueError, match="finite numbers"):
        verdicts.Estimate.of([])


def test_a_ranking_at_chance_is_outside_the_regime():
    """survey-1's extrapolation: when no method is above chance beyond the noise, their ranking
    compares failures and reads as inconclusive, never as "does not hold"."""
    at_chance = {"ACT": [0.505, 0.527, 0.512], "PonderNet": [0.482, 0.494, 0.487]}
    why = verdicts.chance_regime(at_chance, 0.5, "accuracy beyond training")
    assert (
        why
        == "no method's accuracy beyond training is above chance (0.5) by the noise rule (ACT 0.515, PonderNet 0.488)"
    )
    ranked = verdicts.greater(at_chance["PonderNet"], at_chance["ACT"])
    assert ranked.verdict == "does not hold" and verdicts.outside_regime(ranked, why).verdict == "inconclusive"
    assert verdicts.chance_regime({**at_chance, "PonderNet": [0.9, 0.92, 0.91]}, 0.5, "accuracy") is None
    assert verdicts.chance_regime({"ACT": [0.9]}, 0.5, "accuracy") is not None  # one seed shows nothing above chance


# ---- the rule's error rates under the null, simulated with the rule's own functions ----

REPS = 1000  # claims simulated per (parts, seeds): a 5 % rate has a binomial s.e. of 0.7 points


def false_verdicts(parts: int, seeds: int, delta: float, rng: np.random.Generator) -> tuple[float, float]:
    """Share of simulated claims of ``parts`` parts, each judged by :func:`~ponder.ledger.verdicts.above` on
    ``seeds`` normal per-seed values, that are called **holds** when one part's true effect is 0 and the others'
    are far above it (the least favourable null of "holds"), and **does not hold** when every part's true effect
    is ``delta`` (the least favourable null of "does not hold")."""
    false_holds = false_refutes = 0
    for _ in range(REPS):
        x = rng.standard_normal((parts, seeds))
        at_zero = [verdicts.above(row + (10.0 if i else 0.0), 0.0, delta) for i, row in enumerate(x)]
        at_delta = [verdicts.above(row + delta, 0.0, delta) for row in x]
        false_holds += verdicts.every(at_zero).verdict == "holds"
        false_refutes += verdicts.every(at_delta).verdict == "does not hold"
    return false_holds / REPS, false_refutes / REPS


def not_above_the_level(count: int) -> bool:
    """Whether ``count`` of :data:`REPS` is consistent with a rate at most ALPHA (a one-sided binomial test at
    1e-4: the simulation's seed is fixed, so a pass is the same pass every run)."""
    return stats.binomtest(count, REPS, verdicts.ALPHA, alternative="greater").pvalue > 1e-4


@pytest.mark.parametrize("delta", [0.0, 0.5])
@pytest.mark.parametrize("parts", range(1, 7))
def test_false_verdicts_stay_at_the_level_under_the_null(parts, delta):
    rng = np.random.default_rng(1000 * parts + int(10 * delta))
    for seeds in range(3, 11):
        false_holds, false_refutes = false_verdicts(parts, seeds, delta, rng)
        assert not_above_the_level(round(false_holds * REPS)), (parts, seeds, false_holds)
        assert not_above_the_level(round(false_refutes * REPS)), (parts, seeds, false_refutes)
        # the worst case of "holds" is exact: one part at the boundary is tested at 5 %
        assert false_holds > 0.02, (parts, seeds, false_holds)


def test_the_simulation_catches_a_rule_without_the_correction():
    """The simulation has power: refuting a 5-part claim when any part is refuted alone at 5 % (the rule
    before Holm's correction) is caught at 3 seeds, as is deciding at 2 standard errors."""
    rng, refuted_alone, two_se = np.random.default_rng(7), 0, 0
    for _ in range(REPS):
        x = rng.standard_normal((5, 3))
        refuted_alone += any(verdicts.above(row, 0.0).verdict == "does not hold" for row in x)
        two_se += any(verdicts.Estimate.of(row).mean + 2 * verdicts.Estimate.of(row).se < 0 for row in x)
    assert not not_above_the_level(refuted_alone) and not not_above_the_level(two_se)
    assert 0.30 < two_se / REPS < 0.45  # about 38 %, as an audit of the old rule measured


def test_alike_holds_within_delta_and_not_beyond_it():
    base = np.array([0.80, 0.84, 0.78, 0.86, 0.82])
    assert verdicts.alike(base + [0.01, -0.01, 0.0, 0.005, -0.005], base, 0.05).verdict == "holds"
    assert verdicts.alike(base - 0.2 + [0.01, -0.01, 0.0, 0.005, -0.005], base, 0.05).verdict == "does not hold"
    assert verdicts.alike(base + [0.1, -0.1, 0.05, -0.05, 0.0], base, 0.05).verdict == "inconclusive"
    with pytest.raises(ValueError, match="delta"):
        verdicts.alike(base, base, 0.0)


@pytest.mark.parametrize("seeds", [3, 5, 10])
def test_alike_is_called_wrongly_at_most_at_the_level(seeds):
    """At a true difference of exactly delta (the edge of "alike") it holds at most 5 % of the time; at a true
    difference of 0 it does not hold at most 5 % of the time."""
    rng = np.random.default_rng(seeds)
    delta, b = 0.05, np.zeros(seeds)
    edge = [verdicts.alike(rng.normal(delta, 0.05, seeds), b, delta).verdict for _ in range(2000)]
    inside = [verdicts.alike(rng.normal(0.0, 0.05, seeds), b, delta).verdict for _ in range(2000)]
    assert edge.count("holds") / 2000 <= 0.05 + 0.015
    assert inside.count("does not hold") / 2000 <= 0.05 + 0.015
