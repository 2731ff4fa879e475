"""The survey's analysis: survey-2's early-exit sweep, its summary per threshold and the savings at matched accuracy,
survey-3's Mixture-of-Depths frame, survey-4's table beside the dense twins and its timing, the halting-bias knob
(the runs stubbed: nothing trains)."""

import math
from types import SimpleNamespace

import pandas as pd
import pytest
import torch

from ponder.models.act import HaltingUnit
from ponder.studies.survey.analysis import cpvr as survey
from ponder.studies.survey.analysis import knobs
from ponder.studies.survey.analysis.cpvr import exit_savings, sweep_summary


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


def metrics(accuracy: list[float], steps: list[float]) -> dict:
    """A run's per-hop metrics at the smoke profile's test hops 1, 2 and 3."""
    return {"accuracy": dict(zip("123", accuracy)), "steps": dict(zip("123", steps))}


class Exits(torch.nn.Module):
    """An early-exit stand-in for seed ``seed``: right on every example without an exit, else always answers 0;
    it uses ``hops + seed / 10`` layers at a finite threshold and 4 without."""

    def __init__(self, seed: int, hops: torch.Tensor):
        super().__init__()
        self.seed, self.hops, self.threshold = seed, hops, math.inf

    def forward(self, x):
        dense = self.threshold == math.inf
        logits = torch.nn.functional.one_hot(x[:, 0] if dense else torch.zeros_like(x[:, 0]), 2).float()
        return SimpleNamespace(logits=logits, steps=torch.full((len(x),), 4.0) if dense else self.hops + self.seed / 10)


def test_exit_sweep_scores_every_seed_threshold_and_hop_count(monkeypatch):
    hops, label = torch.tensor([1, 1, 2, 2, 3, 3]), torch.tensor([0, 1, 0, 1, 0, 1])
    monkeypatch.setitem(survey.hyper_ut.SIZES, "smoke", survey.hyper_ut.SIZES["smoke"] | {"seeds": (0, 1)})
    monkeypatch.setattr(survey, "test_set", lambda length, test_hops, n: (label[:, None], hops, label))
    trained = []
    monkeypatch.setattr(survey, "train_early_exit", lambda p, seed: trained.append(seed) or (Exits(seed, hops), {}))
    sweep = survey.exit_sweep("smoke", seed=5).set_index(["seed", "threshold", "hops"])
    assert trained == [5, 6] and len(sweep) == 2 * 3 * 3  # smoke: thresholds 0.5, 0.9 and none, hops 1-3
    assert sweep.loc[(6, math.inf), "accuracy"].tolist() == [1.0] * 3
    assert sweep.loc[(6, 0.9), "accuracy"].tolist() == [0.5] * 3
    assert sweep.loc[(6, 0.5), "layers"].tolist() == pytest.approx([1.6, 2.6, 3.6])
    assert sweep.loc[(5, math.inf), "layers"].tolist() == [4.0] * 3
    assert sweep.loc[(5, 0.5), "in_training"].tolist() == [True, True, False]


def test_mod_frame_holds_each_capacity_and_the_transformer_with_their_macs_relative_to_the_transformers(monkeypatch):
    capacities = []

    def train_mod(profile, capacity, seed):
        capacities.append((capacity, seed))
        return None, metrics([capacity, capacity / 2, 0.0], [3.0] * 3)

    monkeypatch.setattr(survey, "train_mod", train_mod)
    dense = lambda kind, p, seed: capacities.append((kind, seed)) or (None, metrics([1.0, 0.9, 0.5], [3.0] * 3))  # noqa: E731
    monkeypatch.setattr(survey.hyper_ut, "train_cpvr", dense)
    frame = survey.mod_frame("smoke", seed=2)
    assert capacities == [(0.25, 2), (1.0, 2), ("transformer", 2)]
    assert frame["model"].tolist() == ["MoD c=0.25"] * 3 + ["MoD c=1"] * 3 + ["Transformer"] * 3
    macs = frame.groupby("model", sort=False)["macs"].first()
    # 9 tokens, dim 16: a block costs 30,240 MACs on all of them, 9,504 on ceil(0.25 · 9) = 3; the router 9 · 16
    assert macs.tolist() == pytest.approx([(144 + 9504) / 30240, (144 + 30240) / 30240, 1.0])
    assert frame.set_index(["model", "hops"]).loc[("MoD c=0.25", 2), "accuracy"] == 0.125
    assert frame["in_training"].tolist() == [True, True, False] * 3


def test_paired_seconds_are_the_medians_of_alternating_rounds_over_batches_of_256(monkeypatch):
    seen = []

    class Net(torch.nn.Module):
        def forward(self, batch):
            seen.append((self, self.training, len(batch)))

    model, twin = Net().train(), Net().train()
    times = iter([1.0, 10.0, 3.0, 30.0, 2.0, 20.0])
    monkeypatch.setattr(survey, "time_it", lambda fn, repeats, warmup: (fn(), next(times))[1])
    assert survey.paired_seconds(model, twin, torch.zeros(600, 3), rounds=3) == (2.0, 20.0)
    assert [net for net, *_ in seen] == [model] * 3 + [twin] * 3 + [model] * 3 + [twin] * 3 + [model] * 3 + [twin] * 3
    assert [n for *_, n in seen[:3]] == [256, 256, 88] and not any(training for _, training, _ in seen)


def test_adaptive_table_sets_each_method_beside_its_dense_twin_with_its_share_of_the_compute(monkeypatch):
    net = lambda name: SimpleNamespace(name=name, depth=SimpleNamespace(compact=False))  # noqa: E731
    runs = {
        "transformer": metrics([1.0, 1.0, 0.4], [3.0] * 3),
        "ut": metrics([1.0, 0.8, 0.5], [3.0] * 3),
        "ut_act": metrics([1.0, 0.9, 0.6], [1.0, 2.0, 3.0]),
        "hyper": metrics([0.9, 0.9, 0.5], [3.0] * 3),
        "hyper_act": metrics([0.8, 1.0, 0.7], [1.0, 1.0, 1.0]),
    }
    models = {kind: net(kind) for kind in runs}
    exits, asked = net("exit"), []
    monkeypatch.setattr(survey.hyper_ut, "train_cpvr", lambda kind, p, seed: (models[kind], runs[kind]))
    monkeypatch.setattr(survey, "train_early_exit", lambda p, seed: (exits, {}))
    monkeypatch.setattr(survey, "CALMClassifier", lambda model: net("all layers"))
    monkeypatch.setattr(
        survey, "train_mod", lambda p, c, seed: asked.append(c) or (net("mod"), metrics([0.5] * 3, [3.0] * 3))
    )
    monkeypatch.setattr(survey, "train_pondernet", lambda p, seed: (net("pondernet"), metrics([0.7] * 3, [2.0] * 3)))
    monkeypatch.setattr(
        survey, "per_hop", lambda model, *a: asked.append(model.threshold) or metrics([0.6] * 3, [1.5] * 3)
    )
    monkeypatch.setattr(survey, "test_set", lambda *a: (torch.zeros(3, 9), None, None))
    seconds = {"transformer": 2.0, "ut": 4.0, "ut_act": 1.0, "hyper": 8.0, "hyper_act": 2.0}
    seconds |= {"exit": 3.0, "all layers": 6.0, "mod": 1.0, "pondernet": 3.0}
    timed = []

    def paired(model, twin, x, rounds):
        timed.append((model.name, twin.name, rounds))
        return seconds[model.name], seconds[twin.name]

    monkeypatch.setattr(survey, "paired_seconds", paired)
    table = survey.adaptive_table("smoke").set_index("method")
    assert asked == [0.25, 0.9]  # smoke: MoD at capacity 0.25, exits at threshold 0.9
    assert models["ut_act"].depth.compact and models["hyper_act"].depth.compact and not models["ut"].depth.compact
    assert [(m, t) for m, t, _ in timed] == [
        ("transformer", "transformer"),
        ("ut", "ut"),
        ("ut_act", "ut"),
        ("hyper_act", "hyper"),
        ("pondernet", "ut"),
        ("exit", "all layers"),
        ("mod", "transformer"),
    ]
    assert {r for *_, r in timed} == {1}
    assert table.index.tolist() == [
        "Transformer",
        "UT",
        "UT+ACT",
        "Hyper-UT",
        "PonderNet-UT",
        "Early exit (λ=0.9)",
        "MoD (c=0.25)",
    ]
    assert table["dense twin"].tolist()[2:4] == ["UT", "Hyper-UT w/o ACT"]
    # 3 steps at smoke; MoD's share as in survey-3 (9 tokens, dim 16, 3 of them through each block)
    shares = [1.0, 1.0, 2 / 3, 1 / 3, 2 / 3, 0.5, (144 + 9504) / 30240]
    assert table["compute (share of dense)"].tolist() == pytest.approx(shares)
    assert table["time / twin"].tolist() == pytest.approx([1.0, 1.0, 0.25, 0.25, 0.75, 0.5, 0.5])
    assert table.loc["UT+ACT", "accuracy (in training)"] == pytest.approx(0.95)
    assert table.loc["Hyper-UT", "accuracy (out of training)"] == pytest.approx(0.7)


def test_shifted_halting_bias_moves_the_bias_for_the_block_and_restores_it_even_on_an_error():
    unit, state = HaltingUnit(4, bias=-2.0), torch.randn(3, 4)
    with knobs.shifted_halting_bias(unit, -1.0) as shifted:
        assert shifted is unit and torch.allclose(unit(state), torch.sigmoid(torch.tensor(-3.0)).expand(3))
    assert unit.linear.bias.item() == -2.0
    with pytest.raises(RuntimeError), knobs.shifted_halting_bias(unit, 5.0):
        assert unit.linear.bias.item() == 3.0
        raise RuntimeError
    assert unit.linear.bias.item() == -2.0


def test_knob_settings_gives_a_row_per_setting_with_mean_accuracy_and_compute(monkeypatch):
    def knob(compute):
        return lambda profile, value, seed: pd.DataFrame(
            {"hops": [1, 2], "accuracy": [value, 0.0], compute: [2.0, 4.0]}  # mean accuracy value / 2
        )

    monkeypatch.setattr(knobs, "knob_halting_bias", knob("steps"))
    monkeypatch.setattr(knobs, "knob_exit_threshold", knob("steps"))
    monkeypatch.setattr(knobs, "knob_mod_capacity", knob("macs"))
    table = knobs.knob_settings("smoke")
    assert list(table.columns) == ["setting", "knob", "accuracy", "compute"] and len(table) == 9
    assert table.groupby("setting", sort=False).size().tolist() == [3, 3, 3]
    assert table["setting"].iloc[-1].startswith("MoD capacity (trained at ")
    assert table["accuracy"].tolist() == pytest.approx([v / 2 for v in table["knob"]])
    assert (table["compute"] == 3.0).all()
