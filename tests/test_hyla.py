"""HYLA experiments: tiny runs end to end, the latent-code read-out, the text corpus, the plans."""

import hashlib
from dataclasses import replace

import numpy as np
import pytest
import torch

from ponder.models.attention import PAPER_NAMES
from ponder.runner.runs import config_key
from ponder.runner.specs import Chosen, Spec
from ponder.studies.hyla import experiments as H
from ponder.studies.hyla import schedule as hyla_schedule
from ponder.studies.hyla.analysis import experiments as HA
from ponder.studies.hyla.analysis import latent as L
from ponder.tasks import fuzzy, sraven, text

PINNED_CORPUS = "38bd167709f8998348da6aaa926b3af3cf2d6e8eb525ac3026d58a256ade1b90"  # sha256 of hyla-6's corpus


@pytest.fixture(autouse=True)
def tmp_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PONDER_DATA_CACHE", str(tmp_path / "data"))


def test_sraven_run_and_latent_codes():
    s = H.sraven_setup("smoke", kind="hyla", steps=3, eval_n=16)
    model, metrics = H.train_sraven(s, "smoke")
    assert {"id_acc", "ood_acc", "ood_feature_acc", "history"} <= set(metrics)
    assert 0 <= metrics["ood_acc"] <= metrics["ood_feature_acc"] <= 1
    train, held = sraven.split(s.k)
    codes = L.sraven_codes(model, s.k, s.f, held, 20, seed=0)
    assert codes["codes"].shape == (s.depth, 20, 2 * s.heads)
    assert set(codes["rule"]) <= {r for c in held for r in c}
    acc = L.rule_decoding(L.sraven_codes(model, s.k, s.f, train, 40, seed=1), codes)
    assert len(acc) == s.depth and all(0 <= a <= 1 for a in acc)
    # the cache: a second call loads the same model
    again, metrics2 = H.train_sraven(s, "smoke")
    assert metrics2["ood_acc"] == metrics["ood_acc"]
    torch.testing.assert_close(dict(again.state_dict()), dict(model.state_dict()))


def test_a_compiled_run_trains_as_the_eager_one_and_is_cached_apart():
    eager = H.sraven_setup(
        "smoke", kind="hyla", steps=4, eval_n=16
    )  # latent-code dropout 0.1: compiled, it draws eager's masks
    runs = {c: H.train_sraven_once(replace(eager, compiled=c), "smoke") for c in (False, True)}
    losses = {c: [h["loss"] for h in metrics["history"]] for c, (_, metrics) in runs.items()}
    assert len(losses[True]) == len(losses[False]) > 1
    np.testing.assert_allclose(losses[True], losses[False], rtol=1e-4)
    torch.testing.assert_close(
        dict(runs[True][0].state_dict()), dict(runs[False][0].state_dict()), rtol=1e-4, atol=1e-5
    )


def test_fuzzy_run_and_term_codes():
    s = H.fuzzy_setup("smoke", steps=3, eval_n=16)
    model, metrics = H.train_fuzzy(s, "smoke")
    assert {"train_r2", "test_r2", "unknown_r2"} <= set(metrics)
    split = fuzzy.split(s.n_vars, s.n_terms, s.frac_test)
    codes = L.fuzzy_codes(model, s, split["test"], 12, seed=0, context=1)
    assert codes["codes"].shape == (s.depth, 12, s.heads)
    assert (codes["terms"].sum(1) == s.n_terms).all()


def test_term_decoders_train_and_test_on_codes_of_one_context(monkeypatch):
    """hyla-2 (B): the decoders' training codes (training tasks) and test codes (held-out tasks) are
    taken with the same fixed context, so a code differs only by the task and the query."""
    s = H.fuzzy_setup("smoke", steps=2, eval_n=16)
    model, _ = H.train_fuzzy(s, "smoke")
    contexts, real = [], fuzzy.sample
    monkeypatch.setattr(fuzzy, "sample", lambda *a, **k: contexts.append(k["fixed_context"]) or real(*a, **k))
    found = L.fuzzy_term_decoding(model, s, seed=3, n=24)
    assert len(contexts) == 2 and contexts[0] == contexts[1] is not None
    assert found["logistic"].shape == (s.depth, len(found["terms"]))
    assert found["ridge"]["f1"].shape == found["ridge"]["r2"].shape == (len(found["terms"]),)
    assert 0 <= found["layer"] < s.depth and 0 < found["present"] < 1


def test_the_ridge_decoder_reads_every_layer_at_once_and_scores_each_term():
    """The official protocol: one ridge regression from the concatenated layers to all the terms. A term
    written into one layer's code is found (F1 1, R² near 1), a term no layer carries is not (R² at most 0)."""
    rng = np.random.default_rng(0)
    terms = rng.integers(0, 2, (200, 3))
    codes = rng.normal(size=(2, 200, 4))
    codes[1, :, 0] = 4 * terms[:, 0] - 2  # term 0 in layer 2's first head; terms 1 and 2 nowhere
    train = {"codes": codes[:, :100], "terms": terms[:100]}
    test = {"codes": codes[:, 100:], "terms": terms[100:]}
    found = L.ridge_term_decoding(train, test, [0, 1])
    assert found["f1"][0] == 1.0 and found["f1"][1] < 0.8
    assert found["r2"][0] > 0.9 and found["r2"][1] < 0.05
    assert L.term_decoding(train, test, [0]).shape == (2, 1) and L.term_decoding(train, test, [0])[1, 0] == 1.0


def test_the_ridge_decoder_thresholds_a_rare_term_at_its_training_share():
    """A term present in about 1 of 6 codes and weakly written into them: thresholded at its training share the
    regression finds it far better than at 1/2, where it is rarely predicted present."""
    from sklearn.linear_model import Ridge
    from sklearn.metrics import f1_score
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(1)
    terms = (rng.random((600, 1)) < 1 / 6).astype(int)
    codes = rng.normal(size=(1, 600, 4))
    codes[0, :, 0] += 0.8 * terms[:, 0]
    train, test = ({"codes": codes[:, part], "terms": terms[part]} for part in (slice(0, 300), slice(300, 600)))
    found = L.ridge_term_decoding(train, test, [0])
    scaler = StandardScaler().fit(codes[0, :300])
    predicted = Ridge().fit(scaler.transform(codes[0, :300]), terms[:300]).predict(scaler.transform(codes[0, 300:]))
    at_half = f1_score(terms[300:, 0], predicted.ravel() > 0.5)
    assert found["f1"][0] == f1_score(terms[300:, 0], predicted.ravel() > terms[:300].mean())
    assert at_half == 0 and found["f1"][0] > 0.3  # at 1/2 never predicted present


def test_the_decoding_layer_is_chosen_on_the_training_tasks_alone():
    """Layer 1 carries the terms on the training tasks' codes and layer 0 on no code: the choice reads only the
    training codes, split by their combination."""
    rng = np.random.default_rng(2)
    combo = np.arange(200) % 10
    terms = rng.integers(0, 2, (200, 2))
    codes = rng.normal(size=(2, 200, 3))
    codes[1, :, :2] += 3 * terms
    train = {"codes": codes, "terms": terms, "combo": combo}
    fit, score = L.training_split(train)
    assert len(fit["terms"]) == len(score["terms"]) == 100
    assert L.chosen_layer(train, [0, 1]) == 1


def test_text_run_has_a_validation_curve():
    s = H.text_setup("smoke", kind="linear", steps=4, eval_every=2)
    _, metrics = H.train_text(s, "smoke")
    assert [p["step"] for p in metrics["valid"]] == [0, 2, 4]
    assert metrics["valid"][0]["loss"] == pytest.approx(np.log(text.VOCAB), rel=0.1)  # near uniform at the start


def compiled_language_model_trains_alike(monkeypatch) -> None:
    """``compiled`` in a Text row compiles the training loss and leaves the validation eager, between the steps:
    the same losses, validation curve and weights as the eager run (on the library's device). It is in the run's
    config only where true, so an eager run keeps the key it had before the knob existed (a gpu row that
    adopts it retrains no other profile's run)."""
    s = H.text_setup("smoke", kind="hyla", steps=4, eval_every=2)
    runs = {c: H.train_text(replace(s, compiled=c), "smoke") for c in (False, True)}
    (eager, eager_metrics), (fused, metrics) = runs[False], runs[True]
    np.testing.assert_allclose(
        [h["loss"] for h in metrics["history"]], [h["loss"] for h in eager_metrics["history"]], rtol=1e-4
    )
    np.testing.assert_allclose(
        [v["loss"] for v in metrics["valid"]], [v["loss"] for v in eager_metrics["valid"]], rtol=1e-4
    )
    torch.testing.assert_close(dict(fused.state_dict()), dict(eager.state_dict()), rtol=1e-4, atol=1e-5)
    made = {c: H.text_run(replace(s, compiled=c), "smoke") for c in (False, True)}
    assert "compiled" not in made[False].config and made[True].config["compiled"] is True
    assert made[False].config == {k: v for k, v in made[True].config.items() if k != "compiled"}
    for spec in made.values():
        assert spec.run.key == config_key(spec.config, [H.__name__])
    assert made[False].run.key != made[True].run.key


def test_a_compiled_language_model_trains_as_the_eager_one_and_alone_is_keyed_apart(monkeypatch):
    compiled_language_model_trains_alike(monkeypatch)


def test_text_corpus_is_offline_and_split():
    data = text.splits()
    assert len(data["train"]) > 300_000 and len(data["valid"]) > 30_000
    x, y = text.windows(data["valid"], 3, 10, seed=0)
    assert (x[:, 1:] == y[:, :-1]).all()


def test_text_corpus_is_pinned():
    """hyla-6's corpus is fixed bytes: :data:`PINNED_CORPUS` changes only with a reviewed change of corpus."""
    assert hashlib.sha256(text.corpus()).hexdigest() == text.SHA256 == PINNED_CORPUS


@pytest.mark.skipif(torch.__version__.split("+")[0] != "2.13.0", reason="the shipped corpus is torch 2.13.0's file")
def test_the_shipped_corpus_is_the_pinned_torchs_documentation():
    """Where the pinned torch is installed, the shipped corpus is its ``_torch_docs.py``, byte for byte."""
    from importlib import resources

    assert text.corpus() == (resources.files("torch") / "_torch_docs.py").read_bytes()


def test_a_damaged_text_corpus_is_refused(monkeypatch):
    monkeypatch.setattr(text, "SHA256", "0" * 64)
    with pytest.raises(ValueError, match="restore it from git"):
        text.corpus()


def test_plans_cover_the_main_kinds():
    rows = H.scaling_setups("quick")
    assert {r["kind"] for r in rows} == set(H.MAIN_KINDS)
    assert {r["setup"].k for r in rows} == {2}
    assert H.heads_setup("quick", "hyla", 1).head_dim == 32
    assert H.sraven_setup("paper").k == 4


def test_rule_similarity_is_cosine():
    codes = np.array([[1.0, 0], [2, 0], [0, 1]])
    sim = L.rule_similarity(codes, np.array([0, 0, 1]), n_rules=2)
    np.testing.assert_allclose(sim, [[1, 0], [0, 1]])


def test_markdown_table():
    import pandas as pd

    from ponder.plots import markdown_table

    frame = pd.DataFrame({"model": ["HYLA", "linear"], "acc": ["8.0", "8.8"]})
    assert markdown_table(frame) == "| model | acc |\n| --- | --- |\n| HYLA | 8.0 |\n| linear | 8.8 |\n"


def test_official_recipe_is_the_paper_profile():
    s, f = H.sraven_setup("paper"), H.fuzzy_setup("paper")
    for run, warmup in ((s, 1000), (f, 100)):
        cfg = H.train_config(run, seed=0)
        assert int(cfg.warmup * cfg.steps) == warmup and cfg.grad_clip == float("inf")
        assert (run.code_dropout, run.relative_position, run.init) == (0.1, True, "lecun_normal")
    grid = H.candidates(s, "paper", "sraven")
    assert sorted((c.lr, c.weight_decay) for c in grid) == [(3e-4, 0.1), (3e-4, 0.3), (1e-3, 0.1), (1e-3, 0.3)]
    assert H.candidates(H.sraven_setup("quick"), "quick", "sraven") == [H.sraven_setup("quick")]
    model = H.sraven_model(s)
    assert model.position is None and model.blocks[0].attn.relative.table.shape == (16, 36)


def test_every_run_of_a_kind_trains_at_the_point_its_base_run_scored_best_on_the_tuning_seed(monkeypatch):
    monkeypatch.setitem(H.TUNING, "smoke", {"sraven": dict(lr=(1e-3, 3e-3), weight_decay=(0.1,))})
    calls = []

    def fake(spec):
        c = H.setup_of(H.Sraven, spec.config)
        calls.append((c, spec.config["train"]["seed"]))
        return {"id_acc": c.lr if c.k == H.sraven_setup("smoke").k else -c.lr, "ood_acc": -c.lr}

    monkeypatch.setattr(Spec, "metrics", fake)
    swept = H.sraven_setup("smoke", k=3)  # a sweep's run: the rate is its kind's, chosen on the base run
    run = H.tuned("sraven", swept, "smoke", seed=2)
    base = H.sraven_setup("smoke")
    assert [H.setup_of(H.Sraven, spec.config) for spec in run.among] == [replace(base, lr=r) for r in (1e-3, 3e-3)]
    chosen = run.spec()
    assert calls == [(replace(base, lr=1e-3), H.TUNE_SEED), (replace(base, lr=3e-3), H.TUNE_SEED)]
    assert H.setup_of(H.Sraven, chosen.config) == replace(swept, lr=3e-3, weight_decay=0.1)
    assert chosen.config["train"]["seed"] == 2 and chosen.trainer == "hyla.train_sraven"
    monkeypatch.setitem(H.TUNING, "smoke", None)
    alone = H.tuned("sraven", swept, "smoke", seed=2)
    assert isinstance(alone, Spec) and H.setup_of(H.Sraven, alone.config) == swept


def test_at_cpu_and_gpu_every_kind_tries_the_same_two_rates_upstream_of_its_runs():
    for profile, sraven_rates in (("cpu", [1e-3, 3e-3]), ("gpu", [3e-4, 1e-3])):
        for kind in H.MAIN_KINDS:
            for task, setup in (("sraven", H.sraven_setup), ("fuzzy", H.fuzzy_setup)):
                s = setup(profile, kind=kind)
                rates = sorted(c.lr for c in H.candidates(s, profile, task))
                assert rates == sraven_rates if task == "sraven" else rates == [1e-3, 3e-3]
                assert {c.weight_decay for c in H.candidates(s, profile, task)} == {s.weight_decay}
        upstream = hyla_schedule.hyla_upstream(profile)["hyla_ablations"]
        assert {spec.config["train"]["seed"] for spec in upstream} == {H.TUNE_SEED}
        assert {spec.config["lr"] for spec in upstream if spec.name.startswith("hyla/sraven/")} == set(sraven_rates)
    assert hyla_schedule.hyla_upstream("quick") == {}


def test_held_out_split_follows_the_seed():
    assert sraven.split(4, seed=0) != sraven.split(4, seed=1)
    assert fuzzy.split(seed=0)["test"] != fuzzy.split(seed=1)["test"]


def test_sraven_regime():
    from ponder.ledger.verdicts import Verdict, outside_regime

    assert HA.sraven_regime(H.sraven_setup("paper")) is None
    why = HA.sraven_regime(H.sraven_setup("quick"))
    assert "K=2" in why and "instances" in why
    ranked = Verdict("does not hold", "d = -0.1 ± 0.01 (n=3)")
    assert (
        outside_regime(ranked, why).verdict == "inconclusive" and "does not hold" in outside_regime(ranked, why).noise
    )
    assert outside_regime(ranked, None) == ranked


def test_fuzzy_regime_names_the_runs_at_the_trivial_level():
    assert HA.fuzzy_regime({"hyla": 0.5, "softmax": 0.4}, {"hyla": 0.1, "softmax": 0.1}) is None
    why = HA.fuzzy_regime({"hyla": 0.5, "softmax": 0.05}, {"hyla": 0.1, "softmax": 0.1})
    assert "softmax" in why and "hyla" not in why


def test_table_a1_shows_per_seed_values_as_mean_and_standard_error():
    from ponder.studies.hyla import plots as P

    paper = {kind: ("p", "q") for kind in PAPER_NAMES}
    table = P.a1_frame(
        {"hyla": {"fuzzy": [0.40, 0.50, 0.60], "sraven": 0.088}, "softmax": {"fuzzy": [0.3], "sraven": 0.08}}, paper
    ).set_index("model")
    assert table.loc[PAPER_NAMES["hyla"], "fuzzy, ours"] == "50.0 ± 5.8"  # s.e. = 0.1 / sqrt(3)
    assert table.loc[PAPER_NAMES["hyla"], "sraven, ours"] == "8.8"
    assert table.loc[PAPER_NAMES["softmax"], "fuzzy, ours"] == "30.0"
    assert table.loc[PAPER_NAMES["linear"], "fuzzy, ours"] == "—"


def test_table_a1_judges_fuzzy_logic_on_the_runs_of_hyla_2():
    """At cpu the main kinds' base fuzzy runs are hyla-2's 70 % runs, so Table A1's fuzzy column
    trains nothing hyla-2 does not."""
    drop = {(c.kind, c.frac_test) for c in H.fuzzy_drop_setups("cpu")}
    assert all((kind, H.fuzzy_setup("cpu", kind=kind).frac_test) in drop for kind in H.MAIN_KINDS)
    assert all(H.fuzzy_setup("cpu", kind=kind).length == max(H.sweeps("cpu")["lengths"]) for kind in H.MAIN_KINDS)


def name_of(job: Spec | Chosen) -> str:
    return (job.among[0] if isinstance(job, Chosen) else job).name


def asked(job: Spec | Chosen) -> tuple:
    """``(setup, seed)`` of a declared HYLA run: a spec's config, or the setup a chosen run takes its rate for."""
    if isinstance(job, Chosen):
        _, setup, _, seed, *_ = job.declare.args
        return setup, seed
    return H.setup_of(H.Sraven if job.name.startswith("hyla/sraven/") else H.Fuzzy, job.config), job.config["train"][
        "seed"
    ]


def test_table_a1_trains_every_kind_on_every_seed_of_the_profile():
    """The paper's Table A1 is a mean over 3 seeds: the ablations notebook trains each of its kinds'
    base sraven and fuzzy runs on every seed of :func:`seeds_of` (3 at cpu, gpu and paper), so that
    hyla-a1's comparisons are judged against the seed noise."""
    for profile in ("quick", "cpu", "gpu", "paper"):
        jobs = hyla_schedule.hyla_jobs(profile)["hyla_ablations"]
        for task, setup in (("sraven", H.sraven_setup), ("fuzzy", H.fuzzy_setup)):
            kinds = H.sweeps(profile)["ablations"]
            expected = {(setup(profile, kind=kind), s) for kind in kinds for s in H.seeds_of(profile)}
            assert {asked(job) for job in jobs if name_of(job).startswith(f"hyla/{task}/")} == expected, profile
    assert len(H.seeds_of("gpu")) == len(H.seeds_of("paper")) == 3


def test_sraven_ood_reads_every_seed(monkeypatch):
    calls = []

    def fake_train(s, profile, seed):
        calls.append((s.kind, seed))
        return None, {"ood_acc": seed / 10, "ood_feature_acc": seed / 100}

    monkeypatch.setattr(HA, "train_sraven", fake_train)
    scores = HA.sraven_ood("cpu", "linear", seed=4)
    seeds = [4 + offset for offset in H.seeds_of("cpu")]  # cpu's five
    assert calls == [("linear", s) for s in seeds] and len(seeds) == 5
    assert scores == {"acc": [s / 10 for s in seeds], "feature": [s / 100 for s in seeds]}


def test_fuzzy_ood_reads_the_base_run_of_the_kind_on_every_seed(monkeypatch):
    calls = []

    def fake_train(s, profile, seed):
        calls.append((s, seed))
        return None, {"test_r2": seed / 10, "test_r2_task_average": seed / 100}

    monkeypatch.setattr(HA, "train_fuzzy", fake_train)
    scores = HA.fuzzy_ood("cpu", "softmax", seed=4)
    seeds = [4 + offset for offset in H.seeds_of("cpu")]
    assert calls == [(H.fuzzy_setup("cpu", kind="softmax"), s) for s in seeds]
    assert scores == {"r2": [s / 10 for s in seeds], "no_context": [s / 100 for s in seeds]}


def test_fuzzy_drops_are_the_r2_at_the_lowest_held_out_fraction_less_at_the_highest_per_seed_and_kind(monkeypatch):
    weight = {"softmax": 1.0, "linear": 2.0, "hyla": 0.5}
    calls = []

    def fake_train(s, profile, seed):
        calls.append((s.kind, s.frac_test, s.length, seed))
        return None, {"test_r2": seed / 100 + weight[s.kind] * (1 - s.frac_test)}

    monkeypatch.setattr(HA, "train_fuzzy", fake_train)
    drops = HA.fuzzy_drops("paper", seed=4)  # held-out fractions 0.3, 0.5, 0.7 at N = 16 … 96
    assert {(frac, length) for _, frac, length, _ in calls} == {(0.3, 96), (0.7, 96)}
    assert {seed for *_, seed in calls} == {4, 5, 6} and len(calls) == 3 * 2 * len(H.MAIN_KINDS)
    assert list(drops.index) == [4, 5, 6] and drops.index.name == "seed" and list(drops.columns) == list(H.MAIN_KINDS)
    for kind in H.MAIN_KINDS:
        assert drops[kind].tolist() == pytest.approx([0.4 * weight[kind]] * 3)


def test_language_models_keep_each_seeds_curves_and_read_the_final_loss_off_their_last_point(monkeypatch):
    calls = []

    def fake_train(s, profile, seed):
        calls.append((s, seed))
        last = seed + H.MAIN_KINDS.index(s.kind) / 10
        return None, {"valid": [{"step": 0, "loss": 9.0}, {"step": 5, "loss": last}]}

    monkeypatch.setattr(HA, "train_text", fake_train)
    curves, final = HA.language_models("cpu", seed=1)
    seeds = [1 + offset for offset in H.seeds_of("cpu")]
    assert calls == [(H.text_setup("cpu", kind=k), s) for s in seeds for k in H.MAIN_KINDS]
    assert list(curves) == seeds and all(list(c) == list(H.MAIN_KINDS) for c in curves.values())
    assert curves[2]["linear"] == [{"step": 0, "loss": 9.0}, {"step": 5, "loss": 2.1}]
    assert final.index.name == "seed" and list(final.columns) == list(H.MAIN_KINDS)
    assert final.loc[3].tolist() == pytest.approx([3.0, 3.1, 3.2])


def test_layer_codes_are_each_layers_scores_of_the_pairs_in_any_chunking():
    s = H.fuzzy_setup("smoke", kind="softmax", depth=2)
    torch.manual_seed(0)
    model = H.fuzzy_model(s).eval()
    x = torch.randn(7, s.length, s.n_vars + 1)
    last = s.length - 1
    every_key = [(last, k) for k in range(s.length)]
    codes = L.layer_codes(model, x, every_key, chunk=3)
    assert codes.shape == (2, 7, s.length * s.heads)
    np.testing.assert_allclose(codes.reshape(2, 7, s.length, s.heads).sum(2), 1.0, rtol=1e-5)  # softmax over keys
    np.testing.assert_allclose(codes, L.layer_codes(model, x, every_key), rtol=1e-6)
    np.testing.assert_allclose(L.layer_codes(model, x, [(last, 2)]), codes[..., 2 * s.heads : 3 * s.heads], rtol=1e-6)
    assert not np.allclose(codes[0], codes[1])
    attention = [m for m in model.modules() if hasattr(m, "record")]
    assert attention and all(not m.record and m.latent is None for m in attention)


def test_hyla_term_decoding_reads_each_seeds_chosen_logistic_layer_and_names_each_term_by_its_bits(monkeypatch):
    s = H.fuzzy_setup("cpu", kind="hyla")
    trained, decoded = [], []
    monkeypatch.setattr(L.hyla, "train_fuzzy", lambda c, profile, seed: trained.append((c, seed)) or (seed, {}))

    def fake_decoding(model, setup, seed, n):
        decoded.append((model, setup, seed, n))
        logistic = np.array([[0.9, 0.1, np.nan], [0.5, 0.6, 0.3 + seed / 5]])  # layer 0 best on held-out tasks
        ridge = {"f1": np.array([0.7, 0.8, 0.9]), "r2": np.array([0.1, 0.2, 0.3])}
        return {"logistic": logistic, "layer": int(seed > 0), "ridge": ridge, "terms": [0, 5, 15], "present": 0.4}

    monkeypatch.setattr(L, "fuzzy_term_decoding", fake_decoding)
    frame = L.hyla_term_decoding("cpu", seed=0, n=32)
    seeds = list(H.seeds_of("cpu"))
    assert trained == [(s, r) for r in seeds] and decoded == [(r, s, r, 32) for r in seeds]
    assert list(frame.columns) == [
        "seed",
        "term",
        "logistic, chosen layer",
        "ridge, all layers",
        "ridge R²",
        "always present",
    ]
    assert frame["seed"].tolist() == [r for r in seeds for _ in range(3)]
    assert frame["term"].tolist()[:3] == ["0000", "0101", "1111"]
    first, second = frame[frame.seed == 0], frame[frame.seed == 1]
    np.testing.assert_allclose(first["logistic, chosen layer"], [0.9, 0.1, np.nan])  # the layer chosen on seed 0
    np.testing.assert_allclose(second["logistic, chosen layer"], [0.5, 0.6, 0.5])  # not the held-out tasks' best
    assert frame["ridge R²"].tolist()[:3] == [0.1, 0.2, 0.3]
    assert frame["ridge, all layers"].tolist()[3:6] == [0.7, 0.8, 0.9] and (frame["always present"] == 0.4).all()
