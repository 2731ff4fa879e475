"""HYLA's ledger rows stated from made-up scores: targets, texts, what we measured and the verdicts."""

import numpy as np
import pandas as pd
import pytest

from ponder.studies.hyla.analysis import experiments as HA
from ponder.studies.hyla.analysis import latent as L
from ponder.studies.hyla.analysis import sraven as HS
from ponder.studies.hyla.sizes import Fuzzy, Sraven
from ponder.tasks import sraven

IN_REGIME = Sraven(k=4, steps=20_000, batch_size=512)  # 10,240,000 instances
BELOW_REGIME = Sraven(k=2, steps=100, batch_size=16)
FUZZY = Fuzzy(length=8, frac_test=0.7, steps=100, batch_size=4)
HIGH, LOW = [0.70, 0.72, 0.74], [0.50, 0.51, 0.53]


def test_hyla_beats_both_holds_only_when_hyla_is_above_each_of_the_other_kinds():
    assert HA.hyla_beats_both({"hyla": HIGH, "softmax": LOW, "linear": LOW}).verdict == "holds"
    assert HA.hyla_beats_both({"hyla": HIGH, "softmax": LOW, "linear": [0.9, 0.91, 0.93]}).verdict == "does not hold"


def ablation_scores(hyla: list[float], kinds=("softmax", "linear")) -> tuple[dict, dict]:
    """Per-seed scores of :func:`HA.sraven_ood` and :func:`HA.fuzzy_ood` for HYLA (``hyla``) and the other
    ``kinds`` (:data:`LOW`), the R² of ignoring the context 0.1."""
    scores = {"hyla": hyla} | dict.fromkeys(kinds, LOW)
    return (
        {kind: {"acc": acc, "feature": acc} for kind, acc in scores.items()},
        {kind: {"r2": r2, "no_context": [0.1] * 3} for kind, r2 in scores.items()},
    )


@pytest.mark.parametrize("hyla, verdict", [(HIGH, "holds"), ([0.30, 0.32, 0.31], "does not hold")])
def test_ablation_claims_judge_hyla_against_softmax_and_linear_on_both_tasks(hyla, verdict):
    sraven_seeds, fuzzy_seeds = ablation_scores(hyla)
    rows = HA.ablation_claims(IN_REGIME, FUZZY, sraven_seeds, fuzzy_seeds)
    assert [r.target for r in rows] == ["hyla-a1"] * 2
    assert rows[0].text.startswith("sraven (K=4, 10,240,000 instances): HYLA > softmax and linear attention")
    assert rows[1].text.startswith("fuzzy logic (N=8, 70% held out, 400 sequences): HYLA > softmax and linear")
    assert rows[0].ours == f"{100 * np.mean(hyla):.1f} vs 51.3 / 51.3" and rows[0].paper == "69.13 vs 56.56 / 56.30"
    assert rows[1].ours == f"{100 * np.mean(hyla):.1f} vs 51.3 / 51.3 (ignoring the context: 10.0)"
    assert [r.verdict.verdict for r in rows] == [verdict] * 2


def test_ablation_claims_add_a_row_per_ablation_trained_and_set_aside_rankings_outside_the_regime():
    sraven_seeds, fuzzy_seeds = ablation_scores(HIGH, kinds=("softmax", "linear", "hyla_no_rmshead"))
    fuzzy_seeds["linear"]["r2"] = [0.05] * 3  # linear attention has not left ignoring the context
    rows = HA.ablation_claims(BELOW_REGIME, FUZZY, sraven_seeds, fuzzy_seeds)
    assert [r.text for r in rows][1] == "sraven: removing RMSHead from HYLA costs OOD accuracy"
    assert rows[1].ours == "72.0 vs 51.3" and rows[1].paper == "69.13 vs 62.53"
    assert [r.verdict.verdict for r in rows] == ["inconclusive"] * 3
    assert "K=2, not 4" in rows[1].verdict.noise and "linear 0.050 ≤ 0.100" in rows[2].verdict.noise
    assert "by the noise rule alone: holds" in rows[0].verdict.noise


def fuzzy_grid(hyla_r2: float) -> pd.DataFrame:
    """hyla-2's grid: each main kind at N 4 and 8 with 30 and 70 % held out, HYLA's OOD R² ``hyla_r2``."""
    rows = [
        {"kind": kind, "N": n, "held out": frac, "OOD R²": hyla_r2 if kind == "hyla" else 0.5}
        | {"no in-context learning R²": 0.1}
        for kind in ("softmax", "linear", "hyla")
        for n in (4, 8)
        for frac in (0.3, 0.7)
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "hyla_drop, hyla_r2, verdict",
    [(0.01, 0.6, "holds"), (0.5, 0.6, "does not hold"), (0.01, 0.05, "inconclusive")],
)
def test_held_out_drop_claims_judge_hyla_dropping_least_while_every_run_learns_from_the_context(
    hyla_drop, hyla_r2, verdict
):
    drops = pd.DataFrame(
        {"softmax": [0.2, 0.21, 0.22], "linear": [0.3, 0.31, 0.29], "hyla": [hyla_drop] * 3},
        index=pd.Index([0, 1, 2], name="seed"),
    )
    (row,) = HA.held_out_drop_claims(fuzzy_grid(hyla_r2), drops)
    assert row.target == "hyla-2" and "drops least from 30% to 70% held out (N=8)" in row.text
    assert row.ours == f"softmax +0.210, linear +0.300, hyla {hyla_drop:+.3f}"
    assert row.verdict.verdict == verdict and row.paper is None


@pytest.mark.parametrize("logistic, verdict", [([0.8, 0.85, 0.9], "holds"), ([0.1, 0.15, 0.2], "does not hold")])
def test_term_decoding_claims_judge_each_decoder_against_always_present(logistic, verdict):
    decoded = pd.DataFrame(
        [
            {
                "seed": seed,
                "term": term,
                "logistic, chosen layer": f1,
                "ridge, all layers": 0.9,
                "ridge R²": r2,
                "always present": 0.5,
            }
            for seed, (f1, r2) in enumerate(zip(logistic, [0.2, 0.25, 0.3]))
            for term in ("0001", "0110")
        ]
    )
    rows = L.term_decoding_claims(decoded)
    assert [r.target for r in rows] == ["hyla-2"] * 3
    assert rows[0].text.endswith("the paper's logistic decoder per term, its layer chosen on the training tasks)")
    assert rows[1].text.endswith("the official ridge decoder on every layer, thresholded at the training base rate)")
    assert rows[2].text.endswith(
        "(the official ridge decoder on every layer: its mean held-out R² over the terms above 0)"
    )
    assert [r.ours for r in rows] == [f"F1 {np.mean(logistic):.3f} vs 0.500", "F1 0.900 vs 0.500", "R² +0.250"]
    assert [r.verdict.verdict for r in rows] == [verdict, "holds", "holds"]


def test_rule_decoding_claims_compare_hylas_last_layer_with_the_majority_rule_and_its_first_layer():
    decoding = pd.DataFrame(
        {"kind": ["softmax", "hyla", "hyla"], "layer": [1, 1, 2], "rule decoding accuracy (OOD)": [0.9, 0.4, 0.6]}
    )
    rows = L.rule_decoding_claims(decoding, majority=0.25, k=2)
    assert [r.target for r in rows] == ["hyla-5"] * 2
    assert rows[0].text.startswith("sraven K=2: the rule can be decoded from HYLA's last-layer code")
    assert [r.ours for r in rows] == ["0.600 vs 0.250", "0.400 -> 0.600"]
    assert [r.verdict.verdict for r in rows] == ["inconclusive"] * 2  # one value: the rule needs 3 seeds


def sraven_sweep(heads: list[int]) -> pd.DataFrame:
    """hyla-5's sweep: HYLA and softmax per head count in ``heads`` and per K in 2 and 4."""
    rows = [
        {"kind": kind, "heads": h, "OOD accuracy": 0.1 * h if kind == "hyla" else 0.0}
        for kind in ("softmax", "hyla")
        for h in heads
    ]
    rows += [{"kind": kind, "K": k, "OOD accuracy": 1 / k} for kind in ("softmax", "hyla") for k in (2, 4)]
    return pd.DataFrame(rows)


def test_sweep_claims_judge_a_single_head_inside_the_regime_and_describe_the_accuracy_per_k():
    rows = HA.sweep_claims(sraven_sweep([1, 8]), IN_REGIME)
    assert [r.target for r in rows] == ["hyla-5"] * 2
    assert rows[0].text == "sraven: a single head hurts OOD accuracy (HYLA, same total width)"
    assert rows[0].ours == "1 head 0.100 vs 8 heads 0.800" and rows[0].verdict.verdict == "inconclusive"
    assert rows[1].ours == "K=2: 0.500, K=4: 0.250" and rows[1].verdict is None
    assert "outside the paper's regime" in HA.sweep_claims(sraven_sweep([1, 8]), BELOW_REGIME)[0].verdict.noise


@pytest.mark.parametrize("heads", [[8], [4, 8]])
def test_sweep_claims_state_no_heads_row_without_one_head_and_another(heads):
    assert [r.text for r in HA.sweep_claims(sraven_sweep(heads), IN_REGIME)] == [
        "sraven: all-features OOD accuracy of HYLA per K at this budget (K=4 is the paper's setting)"
    ]


def test_scaling_claims_rank_hyla_at_the_smallest_point_and_on_average():
    small = pd.Series({"softmax": 0.2, "linear": 0.1, "hyla": 0.3})
    mean = pd.Series({"softmax": 0.4, "linear": 0.5, "hyla": 0.45})
    rows = HS.scaling_claims(small, mean, BELOW_REGIME, IN_REGIME)
    assert [r.target for r in rows] == ["hyla-4"] * 2
    assert rows[0].text == (
        "sraven K=4, 1,600-10,240,000 instances: with the least data and the smallest model HYLA has the best "
        "OOD accuracy"
    )
    assert rows[1].text.endswith(": HYLA has the best OOD accuracy averaged over the width/depth/data sweep")
    assert [r.ours for r in rows] == [
        "HYLA 0.300 vs softmax 0.200 / linear 0.100",
        "HYLA 0.450 vs softmax 0.400 / linear 0.500",
    ]
    assert [r.verdict.verdict for r in rows] == ["inconclusive"] * 2
    assert all("1,600 training instances" in r.verdict.noise for r in rows)
    in_regime = HS.scaling_claims(small, mean, IN_REGIME, IN_REGIME)  # one value each: the rule needs 3 seeds
    assert [r.verdict.noise.endswith("the rule needs 3 seeds") for r in in_regime] == [True, True]


def test_holdout_claims_describe_hylas_accuracy_from_the_fewest_to_the_most_held_out():
    holdouts = pd.DataFrame(
        {"kind": ["hyla", "softmax", "hyla"], "fraction held out": [0.1, 0.1, 0.5], "OOD accuracy": [0.4, 0.9, 0.2]}
    )
    (row,) = HS.holdout_claims(holdouts, k=2)
    assert row.target == "hyla-a5" and row.text.startswith("sraven K=2: HYLA OOD accuracy from the fewest")
    assert row.ours == "0.400 -> 0.200" and row.verdict is None
    assert HS.holdout_claims(holdouts[:2], k=2) == []


@pytest.mark.parametrize(
    "share, verdict", [(0.0032, "holds"), (0.0, "does not hold"), (0.05, "does not hold"), (0.0015, "inconclusive")]
)
def test_ambiguity_claims_test_the_share_at_f8_against_a_factor_3_either_side_of_the_paper(share, verdict):
    ambiguity = pd.DataFrame({"f": [4, 8], "ours": [0.06, share], "ours_se": [0.004, 0.0009]})
    (row,) = HS.ambiguity_claims(ambiguity, n=4096)
    assert row.target == "hyla-a2" and "(K=4, F=8) are ambiguous" in row.text and row.paper == "0.32% ± 0.09"
    assert row.ours == f"{100 * share:.2f}% ± 0.09"
    assert row.verdict.verdict == verdict


def test_task_count_claims_describe_the_analytic_count():
    (row,) = HS.task_count_claims(4)
    assert (row.target, row.text, row.verdict) == ("hyla-a9", "number of sraven tasks at K=4 (analytic)", None)
    assert row.ours == f"{sraven.count_tasks(4):,}"


@pytest.mark.parametrize(
    "hyla, verdicts", [([1.48, 1.49, 1.47], ["holds", "holds"]), ([2.0, 2.1, 2.05], ["does not hold"] * 2)]
)
def test_language_model_claims_judge_hyla_against_linear_and_within_5_percent_of_softmax(hyla, verdicts):
    final = pd.DataFrame(
        {"softmax": [1.45, 1.46, 1.44], "linear": [1.8, 1.82, 1.81], "hyla": hyla},
        index=pd.Index([0, 1, 2], name="seed"),
    )
    rows = HA.language_model_claims(final)
    assert [r.target for r in rows] == ["hyla-6"] * 2
    assert "lower validation loss than linear attention" in rows[0].text and "within 5%" in rows[1].text
    assert [r.ours for r in rows] == [f"{np.mean(hyla):.3f} vs 1.810", f"{np.mean(hyla):.3f} vs 1.450"]
    assert [r.verdict.verdict for r in rows] == verdicts


def stub_runs(monkeypatch, module) -> list[Sraven]:
    """Replace ``module``'s ``train_sraven`` by a stub whose metrics are read off the setup; return the setups asked."""
    asked = []

    def train_sraven(s: Sraven, profile: str, seed: int = 0):
        asked.append(s)
        acc = s.k / 10 + s.heads / 100 + s.holdout + {"softmax": 0.001, "linear": 0.002, "hyla": 0.003}[s.kind]
        history = [{"loss": float(i)} for i in range(8)]  # the last five: 3..7, mean 5
        return None, {"ood_acc": acc, "ood_feature_acc": acc / 2, "id_acc": 1 - acc, "history": history}

    monkeypatch.setattr(module, "train_sraven", train_sraven)
    return asked


def test_sweep_scaling_and_holdouts_are_a_row_per_run_with_its_metrics(monkeypatch):
    asked = stub_runs(monkeypatch, HA)
    sweep = HA.sweep("quick")
    sweeps = HA.sweeps("quick")
    assert len(sweep) == len(HA.MAIN_KINDS) * (len(sweeps["heads"]) + len(sweeps["ks"])) == len(asked)
    per_k = sweep.dropna(subset=["K"])
    assert (per_k["OOD per-feature accuracy"] == per_k["OOD accuracy"] / 2).all()
    assert per_k["chance (all features)"].tolist() == [HA.sraven_setup("quick").f ** -k for k in per_k.K]
    heads = sweep.dropna(subset=["heads"])
    assert {(s.kind, s.heads) for s in asked} >= set(zip(heads.kind, heads.heads.astype(int), strict=True))

    stub_runs(monkeypatch, HS)
    scaling = HS.scaling("quick")
    assert len(scaling) == len(HS.scaling_setups("quick"))
    assert (scaling["final training loss"] == 5.0).all()
    assert scaling.instances.tolist() == [row["setup"].instances for row in HS.scaling_setups("quick")]

    holdouts = HS.holdouts("quick")
    assert len(holdouts) == len(HA.MAIN_KINDS) * len(sweeps["holdouts"])
    assert np.allclose(holdouts["in-distribution accuracy"], 1 - holdouts["OOD accuracy"])


def test_ambiguity_is_the_share_of_instances_another_panel_solves_with_its_binomial_se():
    frame = HS.ambiguity((4, 8), n=60, seed=0)
    assert frame.f.tolist() == [4, 8] and frame.paper.tolist() == [0.0642, 0.0032]
    grids = sraven.sample(60, sraven.combinations(4), 4, seed=100)["grid"]
    share = np.mean([sraven.is_ambiguous(g, 4) for g in grids])
    assert frame.ours[0] == share and frame.ours_se[0] == np.sqrt(share * (1 - share) / 60)
    assert (frame.ours <= frame["some other panel fits"]).all()


def test_sraven_rule_decoding_decodes_each_kinds_held_out_codes_per_layer(monkeypatch):
    asked = stub_runs(monkeypatch, L.hyla)
    drawn = []

    def codes(model, k, f, combos, n, seed):
        drawn.append((tuple(map(tuple, combos)), n, seed))
        return {"seed": seed}

    monkeypatch.setattr(L, "sraven_codes", codes)
    monkeypatch.setattr(L, "rule_decoding", lambda train, test: [train["seed"] / 10, test["seed"] / 10])
    held, frame = L.sraven_rule_decoding("quick", 3, 50)
    base = L.hyla.sraven_setup("quick")
    train_combos, held_combos = sraven.split(base.k, base.holdout, 3)
    assert [s.kind for s in asked] == list(L.hyla.MAIN_KINDS) and held == dict.fromkeys(L.hyla.MAIN_KINDS, {"seed": 5})
    assert drawn[:2] == [(tuple(map(tuple, train_combos)), 50, 4), (tuple(map(tuple, held_combos)), 50, 5)]
    assert frame.layer.tolist() == [1, 2] * 3 and frame["rule decoding accuracy (OOD)"].tolist() == [0.4, 0.5] * 3
