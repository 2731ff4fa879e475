"""The ACM notebooks' ledger rows (acm-1, acm-3 to acm-10), stated by ponder.studies.acm.analysis from made-up
measurements."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from ponder.studies.acm.analysis import ablations as ablation_analysis
from ponder.studies.acm.analysis import latency
from ponder.studies.acm.analysis import learners as learners_analysis
from ponder.studies.acm.analysis import methods as acm_analysis
from ponder.studies.acm.analysis import spending as spending_analysis

NAN = math.nan
UNFINISHED = {"base ViT, seed 1": "loss still falling"}


def verdicts(rows):
    return [None if row.verdict is None else row.verdict.verdict for row in rows]


LEADS = [[NAN, 0.2, 0.1], [0.1, 0.22, 0.12], [0.1, 0.18, 0.08]]  # [seed, budget]


@pytest.mark.parametrize(
    "sign, base, judged, least, low_high",
    [
        (1, {}, "holds", "+0.100", "+0.200 at beta=0.6 vs +0.100"),
        (-1, {}, "does not hold", "-0.200", "-0.200 at beta=0.6 vs -0.100"),
        (1, UNFINISHED, "inconclusive", "+0.100", "+0.200 at beta=0.6 vs +0.100"),
    ],
)
def test_pareto_claims_judge_the_leads_at_the_budgets_compared_on_every_seed(sign, base, judged, least, low_high):
    """acm-3: the cheapest budget has no other point as cheap on seed 0, so only 0.6 and 0.8 are compared."""
    realised = pd.Series([0.412, 0.6, 0.79], index=[0.4, 0.6, 0.8])
    lead = sign * np.array(LEADS)
    rows = acm_analysis.pareto_claims(lead, [0.4, 0.6, 0.8], base, "every method at 0.001", realised)
    assert [row.target for row in rows] == ["acm-3"] * 4
    assert verdicts(rows) == [judged, judged, None, None]
    assert rows[0].ours == f"min mean lead {least} over beta=0.6, 0.8"
    assert rows[1].ours == f"lead {low_high} at 0.8"
    assert (rows[0].paper, rows[1].paper) == ("on the front", "largest below 12.5 GFLOPs")
    assert "training digits (seed 0; ACM at beta=0.4;" in rows[2].text and rows[2].ours == "every method at 0.001"
    assert rows[3].ours == "0.4: 0.41, 0.6: 0.60, 0.8: 0.79"
    assert all(f"{name}: {why}" in rows[0].verdict.noise for name, why in base.items())


def test_pareto_claims_do_not_hold_when_the_lead_is_not_largest_at_the_lowest_budget():
    lead = np.array([[0.1, 0.2], [0.1, 0.2], [0.1, 0.2]])
    front, largest_low, *_ = acm_analysis.pareto_claims(lead, [0.4, 0.6], {}, "", pd.Series(dtype=float))
    assert front.verdict.verdict == "holds" and largest_low.verdict.verdict == "does not hold"


def test_the_lead_largest_at_the_lowest_budget_is_judged_on_its_own_comparison():
    """Behind the others at every budget but least behind at the lowest: not on the front, yet its lead is largest
    at the lowest budget, per seed, against each other budget compared."""
    lead = np.array([[-0.01, -0.1, -0.2], [-0.02, -0.11, -0.19], [-0.01, -0.12, -0.21]])
    front, largest_low, *_ = acm_analysis.pareto_claims(lead, [0.4, 0.6, 0.8], {}, "", pd.Series(dtype=float))
    assert front.verdict.verdict == "does not hold" and largest_low.verdict.verdict == "holds"
    assert largest_low.verdict.noise.count("holds") == 2  # two parts: the lowest against 0.6 and against 0.8


@pytest.mark.parametrize("ratios, judged", [([1.5, 1.6, 1.4], "holds"), ([0.8, 0.9, 0.7], "does not hold")])
def test_content_claims_judge_the_content_over_background_ratio_above_one(ratios, judged):
    content, maps = spending_analysis.content_claims(ratios, 2.0)
    assert (content.target, content.ours, content.verdict.verdict, content.paper) == (
        "acm-1",
        f"{np.mean(ratios):.2f}x",
        judged,
        "qualitative",
    )
    assert "beta=0.4" in content.text
    assert (maps.target, maps.ours, maps.verdict) == ("acm-6", "2.00x", None)


@pytest.mark.parametrize(
    "shares, settled, judged, ours",
    [
        ([0.0, 0.1, 0.5, 0.2, 0.2], {}, "holds", "70% need 2-3; 80% need <4"),
        ([0.0, 0.6, 0.1, 0.1, 0.2], {}, "does not hold", "20% need 2-3; 80% need <4"),
        ([0.0, 0.1, 0.5, 0.2, 0.2], {"phase I, seed 2": "loss still falling"}, "inconclusive", None),
    ],
)
def test_learners_needed_claims_judge_the_share_needing_two_or_three_learners_from_random_learners(
    shares, settled, judged, ours
):
    """acm-5: ``[seed, 0..4 learners]`` shares, on three seeds from random learners and one from the warm start."""
    random = torch.tensor([shares] * 3) + torch.tensor([[0.0, 0.0, 0.01, 0.0, -0.01], [0.0] * 5, [0.0] * 5])
    warm = torch.tensor([[0.0, 0.0, 0.25, 0.25, 0.5]])
    paper_start, warm_start = learners_analysis.learners_needed_claims(random, warm, settled, seed=0)
    assert (paper_start.target, paper_start.verdict.verdict, paper_start.paper) == ("acm-5", judged, "most tokens")
    assert ours is None or paper_start.ours == ours
    assert "random learners" in paper_start.text
    assert (warm_start.target, warm_start.ours, warm_start.verdict) == ("acm-5", "50% need 2-3; 50% need <4", None)
    assert "warm start" in warm_start.text and "seed 0" in warm_start.text
    (alone,) = learners_analysis.learners_needed_claims(
        random, None, settled, seed=0
    )  # a profile without the warm start
    assert alone == paper_start


@pytest.mark.parametrize("sign, judged", [(1, "holds"), (-1, "does not hold")])
def test_moefication_claims_judge_acms_lead_at_every_budget_compared(sign, judged):
    lead = sign * np.array([[0.05, NAN], [0.06, 0.1], [0.04, 0.12]])  # the costliest budget is not compared
    better, tuning = acm_analysis.moefication_claims(lead, [0.25, 0.5], {}, "every method at 0.001, not tuned")
    assert (better.target, better.verdict.verdict, better.paper) == ("acm-4", judged, "lower WER at every budget")
    assert better.ours == f"min mean lead {sign * 0.05:+.3f} over beta=0.25"
    assert (tuning.target, tuning.ours, tuning.verdict) == ("acm-4", "every method at 0.001, not tuned", None)
    assert "training utterances (seed 0; ACM at beta=0.4;" in tuning.text


def test_moefication_claims_are_inconclusive_against_an_unfinished_base():
    lead = np.array([[0.05], [0.06], [0.04]])
    better, _ = acm_analysis.moefication_claims(lead, [0.25], UNFINISHED, "")
    assert better.verdict.verdict == "inconclusive" and "holds" in better.verdict.noise


@pytest.mark.parametrize("more_on", ["speech", "silence"])
def test_speech_frame_claims_judge_more_learners_on_speech_than_on_silence(more_on):
    high, low = [2.0, 2.1, 2.2], [1.0, 1.1, 1.0]
    on_speech, on_silence = (high, low) if more_on == "speech" else (low, high)
    (row,) = spending_analysis.speech_frame_claims(on_speech, on_silence)
    assert (row.target, row.paper) == ("acm-7", "qualitative")
    assert row.ours == ("2.10 vs 1.03" if more_on == "speech" else "1.03 vs 2.10")
    assert row.verdict.verdict == ("holds" if more_on == "speech" else "does not hold")


@pytest.mark.parametrize(
    "entropy, diverse, judged",
    [
        ([-0.2, -0.3, -0.25], ["all"], "holds"),
        ([0.2, 0.3, 0.25], ["all", "entropy"], "does not hold"),
    ],
)
def test_diversity_claims_judge_only_all_three_losses_above_the_median(entropy, diverse, judged):
    """acm-8 from ``[seed, setting]`` margins: ``all`` above 0 on every seed, ``none`` below."""
    margins = pd.DataFrame({"all": [0.1, 0.2, 0.15], "entropy": entropy, "none": [-0.5, -0.4, -0.6]})
    assert ablation_analysis.diverse_settings(margins) == diverse
    (row,) = ablation_analysis.diversity_claims(margins)
    assert (row.target, row.ours, row.verdict.verdict, row.paper) == (
        "acm-8",
        ", ".join(diverse),
        judged,
        "only all three",
    )


def test_diversity_claims_name_none_when_no_setting_reaches_the_median():
    margins = pd.DataFrame({"all": [-0.1, -0.2, -0.15], "none": [-0.5, -0.4, -0.6]})
    (row,) = ablation_analysis.diversity_claims(margins)
    assert row.ours == "none" and row.verdict.verdict == "does not hold"


def test_appendix_claims_describe_the_learner_count_pretraining_and_corruptions():
    granular = {n: (None, {"accuracy": a}) for n, a in ((2, 0.8), (4, 0.9), (8, 0.85))}
    variants = {v: (None, {"accuracy": a}) for v, a in (("full", 0.91), ("no_phase1", 0.88), ("none", 0.7))}
    robust = pd.DataFrame(
        {"corruption": ["noise", "noise", "blur", "blur"], "severity": [0, 5, 0, 5], "accuracy": [0.9, 0.5, 0.9, 0.6]}
    )
    rows = ablation_analysis.appendix_claims(granular, variants, robust, 0.6)
    assert [row.target for row in rows] == ["acm-10"] * 3 and verdicts(rows) == [None] * 3
    assert [row.ours for row in rows] == ["N=4", "0.910 / 0.880 / 0.700", "0.900 -> 0.550"]
    assert "beta=0.6 model" in rows[2].text


def test_appendix_claims_leave_out_a_comparison_the_profile_trains_one_side_of():
    """quick trains N = 4 and both pre-training phases only: acm-10 then describes its robustness alone."""
    robust = pd.DataFrame({"corruption": ["noise", "noise"], "severity": [0, 5], "accuracy": [0.9, 0.5]})
    (row,) = ablation_analysis.appendix_claims(
        {4: (None, {"accuracy": 0.9})}, {"full": (None, {"accuracy": 0.9})}, robust, 0.6
    )
    assert row.ours == "0.900 -> 0.500" and row.text.startswith("robustness")


def latency_result(device, overhead, executions=("grouped",)):
    """A measured result of 4 learners whose executions take the linear ideal plus ``overhead`` on each process."""
    cases = []
    for mean_learners in (1.0, 2.0, 4.0):
        case = {"mean_learners": mean_learners}
        for name in executions:
            ratios = [mean_learners / 4 + overhead + d for d in (-0.01, 0.0, 0.01)]
            case |= {name + "_ratio": ratios[1], name + "_ratios": ratios}
        cases.append(case)
    return {"device": device, "dtype": "float32", "threads": 2, "mix": "single", "learners": 4, "cases": cases}


@pytest.mark.parametrize(
    "overhead, linear, quarter", [(0.05, "holds", "holds"), (0.3, "does not hold", "does not hold")]
)
def test_latency_claims_judge_the_overhead_above_linear_and_the_time_at_a_quarter(overhead, linear, quarter):
    """acm-9 on the CPU: overhead bound 0.15 of the MLP, 1 of 4 learners within 0.4 of its time."""
    linear_row, quarter_row = latency.latency_claims([latency_result("cpu", overhead)])
    assert (linear_row.target, quarter_row.target) == ("acm-9", "acm-9")
    assert linear_row.text == (
        "grouped ACM time scales linearly with the learners run: overhead above linear <= 0.15 of the MLP "
        "(cpu, float32, 2 thread(s), single k per token)"
    )
    assert (
        linear_row.ours == f"max overhead {overhead:+.2f}" and linear_row.paper == "negligible overhead (A100, Triton)"
    )
    assert quarter_row.text.startswith("grouped ACM at 1 of 4 learners takes <= 0.4x the dense MLP's time (cpu,")
    assert quarter_row.ours == f"{0.25 + overhead:.2f}x" and quarter_row.paper is None
    assert (linear_row.verdict.verdict, quarter_row.verdict.verdict) == (linear, quarter)


def test_latency_claims_state_every_execution_timed_on_every_result():
    results = [latency_result("cpu", 0.05), latency_result("cuda", 0.05, ("grouped", "fused", "replayed"))]
    rows = latency.latency_claims(results)
    assert len(rows) == 2 + 6
    assert [row.text.split(" time scales")[0] for row in rows[2::2]] == [
        "grouped ACM",
        "fused ACM (Triton)",
        "fused ACM (Triton), it and the MLP replayed from CUDA graphs,",
    ]
    assert "<= 0.325x the dense MLP's time (cuda," in rows[3].text


def test_content_ratio_is_mean_compute_on_content_over_background(monkeypatch):
    maps = torch.tensor([[[4.0, 1.0], [1.0, 1.0]], [[2.0, 0.5], [0.5, 0.5]]])  # [B, 2, 2]
    content = torch.tensor([[[True, False], [False, False]]] * 2)
    monkeypatch.setattr(spending_analysis, "compute_maps", lambda model, x: maps)
    monkeypatch.setattr(spending_analysis, "content_patches", lambda profile, grid: content)
    assert spending_analysis.content_ratio(None, None, "smoke") == pytest.approx(3.0 / 0.75)
