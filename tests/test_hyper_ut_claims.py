"""Hyper-UT's ledger rows (hut-1, hut-3 … hut-6, hut-9, hut-10) stated by ``ponder.studies.hyper_ut.analysis.cpvr``
on made-up
frames: targets, texts, what we measured and the verdicts."""

import numpy as np
import pandas as pd
import pytest
import torch

from ponder.studies.hyper_ut import cpvr_targets as T
from ponder.studies.hyper_ut.analysis import configurations as HC
from ponder.studies.hyper_ut.analysis import cpvr as HA
from ponder.studies.hyper_ut.analysis import modules as HM
from ponder.studies.hyper_ut.analysis import task as TA
from ponder.tasks import cpvr_decoys

SEEDS = (0, 1, 2)
NOISE = (0.0, 0.01, -0.01)  # seed-to-seed noise, small against the effects the tests make
CHOICES = pd.DataFrame(
    {"accuracy 0.003": [1.0], "accuracy 0.006": [0.99], "loss 0.003": [0.04], "loss 0.006": [0.012], "chosen": [6e-3]},
    index=pd.Index(["UT"], name="model"),
)
DESCRIBED_CHOICES = "grid 0.003 / 0.006; UT 0.006 (1.00 / 0.99, loss 0.040 / 0.012)"


def verdicts_of(claims):
    return [c.verdict.verdict if c.verdict else None for c in claims]


def shortcut_table():
    """:func:`ponder.studies.hyper_ut.analysis.task.shortcuts`' shape: per sampler and hop count, the rules'
    accuracies."""
    values = {
        "uniform": {"best position rule": [1.0, 0.5, 0.25, 0.3], "pruning": ([1.0, 0.4, 0.6, 0.9], [1, 0.7, 0.8, 1])},
        "sorted": {"best position rule": [1.0, 0.6, 0.5, 0.8], "pruning": ([0.0] * 4, [0.0] * 4)},
    }
    return pd.concat(
        pd.DataFrame(
            {
                "sampler": sampler,
                "hops": [0, 1, 4, 8],
                "majority label": [1.0, 0.5, 0.2, 0.1],
                "best position rule": v["best position rule"],
                "pruning dead ends, 1 round": v["pruning"][0],
                "pruning dead ends, 2 rounds": v["pruning"][1],
            }
        )
        for sampler, v in values.items()
    )


def test_shortcuts_measure_the_chance_level_and_the_position_rules_per_sampler_and_hop_count():
    """Drawn samples of both chain ends: one row per sampler and hop count; the majority label and the best
    position rule are what a count over the examples gives, and the best rule is the best of every position's."""
    from ponder.tasks import cpvr

    samples = {end: cpvr.sample(400, 12, (1, 2, 3), seed=0, end=end) for end in cpvr.ENDS}
    table = TA.shortcuts(samples)
    assert list(table[["sampler", "hops"]].itertuples(index=False, name=None)) == [
        (end, h) for end in cpvr.ENDS for h in (1, 2, 3)
    ]
    x, hops, label = samples["sorted"]
    row = table[(table.sampler == "sorted") & (table.hops == 2)].iloc[0]
    two = hops == 2
    counts = torch.bincount(label[two])
    assert row["majority label"] == pytest.approx((counts.max() / two.sum()).item())
    by_position = [(x[two, j] == label[two]).float().mean().item() for j in range(12)]
    assert row["best position rule"] == pytest.approx(max(by_position))
    assert by_position[int(row["position"])] == pytest.approx(max(by_position))
    assert table.filter(like="pruning dead ends").shape[1] == 2
    assert table.drop(columns=["sampler", "hops", "position"]).stack().between(0, 1).all()


@pytest.mark.parametrize(
    "wrong, ours, verdict", [(0, "1,200 of 1,200", "holds"), (1, "1,199 of 1,200", "does not hold")]
)
def test_sampler_claims_check_every_example_and_describe_the_uniform_samplers_shortcuts(wrong, ours, verdict):
    checked = [True] * (1200 - wrong) + [False] * wrong
    claims = TA.sampler_claims(checked, shortcut_table())
    assert [c.target for c in claims] == ["hut-1"] * 4
    assert "exactly the requested hop count and label" in claims[0].text and claims[0].ours == ours
    assert verdicts_of(claims) == [verdict, None, None, None]
    assert [c.ours for c in claims[1:]] == [
        "0.50 vs 0.10",
        "uniform 0.50 / 0.25 / 0.30; sorted 0.60 / 0.50 / 0.80; majority 0.50 / 0.20 / 0.10",
        "1 round 0.40 / 0.60 / 0.90; 2 rounds 0.70 / 0.80 / 1.00",
    ]


@pytest.mark.parametrize("corrupt, verdict", [(False, "holds"), (True, "does not hold")])
def test_decoy_claims_check_hops_labels_and_the_decoys_pruning_and_describe_the_rules(corrupt, verdict):
    x, hops, label, decoy_end, decoy_value = cpvr_decoys.sample(40, 12, [1, 2, 3, 4, 5], seed=0)
    if corrupt:
        label = label.clone()
        label[0] = label[0] + 1  # an example whose label is not the one its chain leads to
    rules = ("pruning, 2 rounds", "pruning, M rounds", "one of the two ends", "real end below the decoy's")
    table = pd.DataFrame({rule: [0.1 * i, 0.2, 0.5] for i, rule in enumerate(rules)}, index=pd.Index([3, 4, 5]))
    exact, described = TA.decoy_claims((x, hops, label, decoy_end, decoy_value), table)
    assert exact.target == described.target == "hut-1"
    assert "with a decoy chain (L=12)" in exact.text and "M - 1 rounds" in exact.text
    assert exact.ours == f"40 examples: {'no' if corrupt else 'yes'}" and exact.verdict.verdict == verdict
    assert described.verdict is None and described.ours == (
        "pruning, 2 rounds 0.00 / 0.20 / 0.50; pruning, M rounds 0.10 / 0.20 / 0.50; "
        "one of the two ends 0.20 / 0.20 / 0.50; real end below the decoy's 0.30 / 0.20 / 0.50"
    )


def per_seed_rows(values: dict[str, dict[str, float]]) -> pd.DataFrame:
    """One row per model and seed (:func:`ponder.studies.hyper_ut.analysis.cpvr.per_seed`'s shape): each column's
    value of a model,
    plus :data:`NOISE` per seed for the accuracies."""
    return pd.DataFrame(
        {"model": model, "seed": seed, **{c: v + (noise if "distribution" in c else 0) for c, v in columns.items()}}
        for model, columns in values.items()
        for seed, noise in zip(SEEDS, NOISE)
    )


@pytest.mark.parametrize(
    "hyper_ood, transformer_in, verdicts, ours",
    [
        (
            0.9,
            1.0,
            ["holds", "holds"],
            ["best: Hyper-UT 0.90; Hyper-UT 0.90", "1.00 -> 0.50", "Transformer 3/3, UT 3/3, Hyper-UT 3/3"],
        ),
        (
            0.4,
            1.0,
            ["does not hold", "holds"],
            ["best: UT 0.60; Hyper-UT 0.40", "1.00 -> 0.50", "Transformer 3/3, UT 3/3, Hyper-UT 3/3"],
        ),
        (  # a Transformer that does not fit its training hops: neither row is judged
            0.4,
            0.55,
            ["inconclusive", "inconclusive"],
            ["best: UT 0.60; Hyper-UT 0.40", "0.55 -> 0.50", "Transformer 0/3, UT 3/3, Hyper-UT 3/3"],
        ),
    ],
)
def test_extrapolation_claims_judge_hyper_ut_best_beyond_the_training_hops_and_the_transformers_fall(
    hyper_ood, transformer_in, verdicts, ours
):
    """hut-3: the first two rows judged, the fits, the rules beside the models and the tuning described."""
    seeds = per_seed_rows(
        {
            "Transformer": {"in distribution": transformer_in, "out of distribution": 0.5},
            "UT": {"in distribution": 1.0, "out of distribution": 0.6},
            "Hyper-UT": {"in distribution": 1.0, "out of distribution": hyper_ood},
        }
    ).assign(fits=lambda f: f["in distribution"] >= 0.95)
    rules = pd.DataFrame(
        {"hops": [1, 2, 3, 4, 5], "pruning, 2 rounds": [1, 1, 1, 0.4, 0.6], "one of the two ends": 0.5}
    )
    claims = HA.extrapolation_claims(seeds, ["Transformer", "UT", "Hyper-UT"], 3, rules, CHOICES, seed=0)
    assert [c.target for c in claims] == ["hut-3"] * 5 and verdicts_of(claims) == [*verdicts, None, None, None]
    if transformer_in < 0.95:
        assert "Transformer, seed 0: does not fit its training hops" in claims[0].verdict.noise
    assert [c.ours for c in claims[:3]] == ours and "1..3" in claims[2].text
    models = {0.9: "Hyper-UT 0.90, UT 0.60, Transformer 0.50", 0.4: "UT 0.60, Transformer 0.50, Hyper-UT 0.40"}
    assert claims[3].ours == f"pruning, 2 rounds 0.50; one of the two ends 0.50; models {models[hyper_ood]}"
    assert "hops 1..3 (seed 0;" in claims[4].text and claims[4].ours == DESCRIBED_CHOICES


def sweep(steps: dict[str, tuple[float, float]], taus=(0.05, 0.01), unfit: str | None = None) -> pd.DataFrame:
    """The ACT models' rows at every tau: per model, ``steps = base + slope * hops`` (``(base, slope)``, plus
    :data:`NOISE` per seed) at hops 1..5; accuracy 1 but 0.5 at hop 1 of ``unfit``'s seed 0."""
    return pd.DataFrame(
        {
            "model": model,
            "seed": seed,
            "tau": tau,
            "hops": hops,
            "accuracy": 0.5 if (model, seed, hops) == (unfit, 0, 1) else 1.0,
            "steps": base + slope * hops + noise,
            "params": 100,
        }
        for tau in taus
        for model, (base, slope) in steps.items()
        for seed, noise in zip(SEEDS, NOISE)
        for hops in range(1, 6)
    )


ACT_ORDER = ["UT+ACT", "UT+FiLM+ACT", "Hyper-UT"]


GROWING = ("UT+ACT +0.10, UT+FiLM+ACT +0.50, Hyper-UT +0.50", "slope +0.50 vs +0.10; steps on hops 1-3 2.00 vs 3.20")
SHRINKING = ("UT+ACT +0.10, UT+FiLM+ACT -0.20, Hyper-UT -0.20", "slope -0.20 vs +0.10; steps on hops 1-3 3.60 vs 3.20")


@pytest.mark.parametrize(
    "others, unfit, verdicts, ours",
    [
        ((1, 0.5), None, ["holds"] * 3, GROWING),
        ((4, -0.2), None, ["does not hold"] * 3, SHRINKING),
        ((1, 0.5), "Hyper-UT", ["holds", "holds", "inconclusive"], GROWING),
    ],
)
def test_allocation_claims_judge_growth_and_fair_efficient_allocation_at_every_tau(others, unfit, verdicts, ours):
    """hut-4, at two taus: UT+ACT takes 3 + 0.1 * hops steps, the other two ACT models ``others``; a model that does
    not fit its training hops makes its fewer steps inconclusive."""
    frame = sweep({"UT+ACT": (3, 0.1), "UT+FiLM+ACT": others, "Hyper-UT": others}, unfit=unfit)
    claims = HA.allocation_claims(frame, [0.05, 0.01], ACT_ORDER, 3)
    assert [c.target for c in claims] == ["hut-4"] * 6 and verdicts_of(claims) == verdicts * 2
    assert ["tau" in c.text for c in claims] == [False] * 3 + [True] * 3
    assert claims[3].text.endswith("every ACT model) (tau = 0.01)")
    assert [c.text.split(" allocates")[0] for c in claims[1:3]] == ["UT+FiLM+ACT", "Hyper-UT"]
    assert [c.ours for c in claims[:3]] == [ours[0], ours[1], ours[1]]


@pytest.mark.parametrize(
    "ut_ood, ut_params, ut_fits, verdict",
    [
        (0.8, 1000, True, "holds"),
        (0.8, 5000, True, "does not hold"),
        (0.5, 1000, True, "does not hold"),
        (0.8, 1000, False, "inconclusive"),
    ],
)
def test_sharing_claims_judge_the_ut_against_the_transformer_with_fewer_parameters(ut_ood, ut_params, ut_fits, verdict):
    """hut-5: better beyond the training hops (per seed) and fewer parameters (exact), once both fit their training
    hops; the modularity row describes."""
    ood = {"Transformer": 0.6, "UT": ut_ood, "Hyper-UT w/o ACT": 0.7}
    params = {"Transformer": 4000, "UT": ut_params, "Hyper-UT w/o ACT": 1500}
    summary = pd.DataFrame({"out of distribution": ood, "params": params})
    seeds = per_seed_rows({m: {"out of distribution": a} for m, a in ood.items()})
    seeds["fits"] = (seeds["model"] != "UT") | ut_fits
    shared, modular = HA.sharing_claims(summary, seeds)
    assert shared.target == modular.target == "hut-5" and "(UT vs Transformer)" in shared.text
    assert (
        shared.ours == f"OOD {ut_ood:.2f} vs 0.60; params {ut_params:,} vs 4,000" and shared.verdict.verdict == verdict
    )
    assert modular.ours == f"0.70 vs {ut_ood:.2f}" and modular.verdict is None


def test_configuration_claims_describe_the_transformers_and_hyper_uts_parameters():
    table = pd.DataFrame({"model": ["Transformer", "UT", "Hyper-UT"], "parameters": [56789, 1000, 1234]})
    (row,) = HC.configuration_claims(table)
    assert row.target == "hut-9" and "configuration table" in row.text
    assert row.ours == "56,789 vs 1,234" and row.verdict is None


def test_routing_claims_describe_entropy_top_modules_and_the_change_across_hop_counts():
    """hut-6: hop 1 routes 0.9 / 0.1 at both steps, hop 2 0.3 / 0.7: entropies 0.325 and 0.611 nats."""
    weights = {1: [0.9, 0.1], 2: [0.3, 0.7]}
    routes = pd.DataFrame(
        {"step": step, "hops": hops, "module": j, "weight": w}
        for step in (1, 2)
        for hops, ws in weights.items()
        for j, w in enumerate(ws)
    )
    (row,) = HM.routing_claims(routes, pool_size=4)
    assert row.target == "hut-6" and row.verdict is None
    assert row.ours == f"entropy 0.47 of {np.log(4):.2f}; 2 top module(s); 0.60"


def runs(accuracy: list[float], **columns) -> pd.DataFrame:
    """One row per hop count 1..5 (training hops 1..3) with ``accuracy`` and the ``columns``' values."""
    return pd.DataFrame({"hops": [1, 2, 3, 4, 5], "accuracy": accuracy, **columns})


def pool_claims(by_size, generators, ut_act, variants) -> list:
    """hut-10's rows of the block generator at pool size 16, training hops 1..3, seed 0."""
    return HM.pool_ablation_claims(
        by_size, generators, ut_act, variants, CHOICES, generator="block", pool_size=16, train_max=3, seed=0
    )


@pytest.mark.parametrize(
    "block, delta, seeds, verdict",
    [
        (0.6, [0.4] * 3, "3 vs 3", "holds"),
        (0.4, [0.6] * 3, "3 vs 3", "does not hold"),
        (0.6, [0.4, np.nan, np.nan], "3 vs 1", "inconclusive"),
    ],
)
def test_pool_ablation_claims_judge_the_generators_and_describe_pool_sizes_routers_and_tuning(
    block, delta, seeds, verdict
):
    """hut-10 on seed 0: pool sizes 1 and 16 of the block generator, the router without the step on pool 16, and the
    two generators per seed (the delta on fewer seeds leaves the comparison to the seeds of both)."""
    block_runs = dict(generator="block", seed=0, router_step=True)
    by_size = pd.concat(
        [
            runs([1, 0.9, 0.8, 0.5, 0.3], pool_size=1, **block_runs),
            runs([1, 1, 1, 0.7, 0.5], pool_size=16, **block_runs),
        ]
    )
    without_step = runs([0.9, 0.9, 0.9, 0.3, 0.5], generator="block", seed=0, router_step=False, pool_size=16)
    ut_act = pd.concat([runs([1, 1, 0.95, 0.5, 0.5], seed=0), runs([0, 0, 0, 0, 0], seed=1)])  # seed 1: left out
    generators = pd.DataFrame(
        {"block": np.add(block, NOISE), "delta": np.add(delta, NOISE)}, index=pd.Index(SEEDS, name="seed")
    )
    claims = pool_claims(by_size, generators, ut_act, pd.concat([by_size, without_step]))
    assert [c.target for c in claims] == ["hut-10"] * 5 and verdicts_of(claims) == [None, verdict, None, None, None]
    assert "seed 0" in claims[0].text and claims[0].ours == "N=1: 0.40, N=16: 0.60"
    assert claims[1].ours == f"block {block:.2f} vs delta {np.nanmean(delta):.2f} (seeds: {seeds})"
    assert "hops 1..3, seed 0" in claims[2].text
    assert claims[2].ours == "N=1: 1.00 / 0.90 / 0.80; UT+ACT: 1.00 / 1.00 / 0.95"
    assert claims[3].ours == "OOD 0.40 vs 0.60; in distribution 0.90 vs 1.00 (seeds: 1)"
    assert "hops 1..3 (seed 0;" in claims[4].text and claims[4].ours == DESCRIBED_CHOICES


def test_pool_ablation_claims_leave_out_the_variants_a_profile_does_not_train():
    """quick trains neither the pool of one nor the router without the step: their rows are left out, not
    written from empty frames."""
    by_size = runs([1, 1, 1, 0.7, 0.5], pool_size=16, generator="block", seed=0, router_step=True)
    generators = pd.DataFrame({"block": [0.6], "delta": [0.5]}, index=pd.Index([0], name="seed"))
    claims = pool_claims(by_size, generators, runs([1, 1, 0.95, 0.5, 0.5], seed=0), by_size)
    assert [c.ours for c in claims] == ["N=16: 0.60", "block 0.60 vs delta 0.50 (seeds: 1 vs 1)", DESCRIBED_CHOICES]


def test_quick_leaves_the_pool_and_router_variants_and_depth_8_to_cpu():
    """The runs that only add variants to hut-10's and hut-2's figures train at cpu, not at quick."""
    quick, cpu = T.pool_configs("quick"), T.pool_configs("cpu")
    assert set(quick) == {("block", 16, True), ("delta", 16, True)}
    assert set(cpu) == set(quick) | {("block", 1, True), ("block", 4, True), ("block", 16, False)}
    assert [d for d, _ in T.depth_runs("quick")] == [1, 2, 4]
    assert [d for d, s in T.depth_runs("cpu") if s == 0] == [1, 2, 4, 8]


def test_pool_ablation_claims_leave_the_generators_unjudged_while_a_run_does_not_fit_its_training_hops():
    by_size = runs([1, 1, 1, 0.7, 0.5], pool_size=16, generator="block", seed=0, router_step=True)
    unfit_delta = runs([0.6, 1, 1, 0.3, 0.2], pool_size=16, generator="delta", seed=1, router_step=True)
    generators = pd.DataFrame(
        {"block": np.add(0.6, NOISE), "delta": np.add(0.4, NOISE)}, index=pd.Index(SEEDS, name="seed")
    )
    claims = pool_claims(by_size, generators, runs([1, 1, 0.95, 0.5, 0.5], seed=0), pd.concat([by_size, unfit_delta]))
    assert claims[1].verdict.verdict == "inconclusive"
    assert claims[1].verdict.noise.startswith("reference not converged (delta, seed 1: does not fit its training hops")
    assert "by the noise rule alone: holds" in claims[1].verdict.noise


def test_hut_3s_headline_is_judged_again_at_each_weight_of_the_ponder_cost():
    """At tau = 0.01 the ACT kinds' rows come from hut-4's sweep, the others' from hut-3's runs: Hyper-UT leads
    beyond the training hops at 0.01 though it trails at the model's tau."""

    def rows(model, tau, ood):
        return [
            {"model": model, "seed": s, "tau": tau, "hops": h, "accuracy": 1.0 if h <= 3 else ood + n, "steps": 3.0}
            | {"params": 100}
            for s, n in zip(SEEDS, NOISE)
            for h in range(1, 6)
        ]

    frame = pd.DataFrame(rows("Transformer", 0.05, 0.5) + rows("UT+ACT", 0.05, 0.7) + rows("Hyper-UT", 0.05, 0.6))
    sweep = pd.DataFrame(rows("UT+ACT", 0.01, 0.6) + rows("Hyper-UT", 0.01, 0.8))
    order = ["Transformer", "UT+ACT", "Hyper-UT"]
    row = HA.most_accurate_at(frame.drop(columns="tau"), sweep, 0.01, order, 3)
    assert row.text.endswith("(mean OOD accuracy, all models) (tau = 0.01)")
    assert row.ours == "best: Hyper-UT 0.80; Hyper-UT 0.80" and row.verdict.verdict == "holds"
    assert HA.most_accurate_claim(HA.with_fit(HA.per_seed(frame, 3), frame, 3), order).verdict.verdict == (
        "does not hold"
    )


@pytest.mark.parametrize(
    "pool_ood, pool_loss, verdict",
    [
        ([0.80, 0.83, 0.78, 0.81, 0.79], [0.003, 0.002, 0.004, 0.003, 0.002], "holds"),
        ([0.60, 0.62, 0.58, 0.61, 0.59], [0.003, 0.002, 0.004, 0.003, 0.002], "does not hold"),
        ([0.90, 0.70, 0.95, 0.65, 0.80], [0.003, 0.002, 0.004, 0.003, 0.002], "inconclusive"),
    ],
)
def test_the_pool_of_one_is_judged_alike_to_ut_act_where_it_trains_on_several_seeds(pool_ood, pool_loss, verdict):
    """Paired by seed over five seeds: UT+ACT's OOD accuracy 0.80 (hops 4 and 5 at ood ± 0.1) and validation loss
    0.003; the pool of one alike, 0.2 below it, or spread too wide to tell."""
    ut_act = pd.concat(
        runs([1, 1, 1, 0.9, 0.7], seed=s, **{"validation loss": 0.003 + 0.0005 * (s % 2)}) for s in range(5)
    )
    one = pd.concat(
        runs(
            [1, 1, 1, ood + 0.1, ood - 0.1],
            seed=s,
            pool_size=1,
            generator="block",
            router_step=True,
            **{"validation loss": loss},
        )
        for s, (ood, loss) in enumerate(zip(pool_ood, pool_loss))
    )
    (row,) = HM.pool_of_one_claims(one, ut_act, "block", train_max=3)
    assert row.target == "hut-10" and row.kind == "design check" and row.verdict.verdict == verdict
    assert "within 0.05" in row.text and "within 0.01" in row.text and row.verdict.noise.count("[") == 4
    assert row.ours.startswith(f"OOD {np.mean(pool_ood):.2f} vs 0.80;") and row.ours.endswith("(seeds: 5)")
    assert HM.pool_of_one_claims(one[one.seed == 0], ut_act, "block", train_max=3) == []  # one seed: not judged


def test_the_pool_of_one_trains_on_every_seed_at_cpu():
    seeds = {s for (g, n, step, s) in T.pool_runs("cpu") if n == 1}
    assert seeds == set(T.seeds_of("cpu", "block"))
