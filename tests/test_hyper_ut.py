"""Hyper-UT's models: shapes, equivalences and ACT invariants (hut-2 … hut-10)."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from ponder.ledger.tuning import describe_choices
from ponder.models.classifier import ACTDepth, FixedDepth, LayerStack
from ponder.models.film import FiLMCore
from ponder.models.hyper import HyperCore, Router
from ponder.models.transformer import Block
from ponder.models.universal import UniversalCore
from ponder.profiles import PROFILES, by_profile
from ponder.runner.specs import Chosen, Spec, declared
from ponder.runner.training import TrainConfig, make_optimizer, optimizer_step, train
from ponder.studies.hyper_ut import cpvr as H
from ponder.studies.hyper_ut import cpvr_targets as T
from ponder.studies.hyper_ut import schedule as hyper_ut_schedule
from ponder.studies.hyper_ut.analysis import configurations as HC
from ponder.studies.hyper_ut.analysis import cpvr as HA
from ponder.studies.hyper_ut.analysis import depth as HD
from ponder.studies.hyper_ut.analysis import modules as HM
from ponder.studies.hyper_ut.analysis import task as TA
from ponder.studies.hyper_ut.analysis import trace as HT
from ponder.studies.hyper_ut.sizes.cpvr import MODEL
from ponder.tasks import cpvr, cpvr_decoys

DIM, HEADS, STEPS, LENGTH = 16, 2, 4, 8
SMALL = dict(MODEL, dim=DIM, heads=HEADS, steps=STEPS, pool_size=4, code_dim=8, rank=2)


def states(batch=5, tokens=LENGTH + 1, seed=0):
    return torch.randn(batch, tokens, DIM, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("kind", H.KINDS)
def test_every_kind_classifies_and_counts_its_steps(kind):
    torch.manual_seed(0)
    model = H.build(kind, LENGTH, SMALL)
    x = torch.randint(LENGTH, (6, LENGTH))
    out = model(x)
    assert out.logits.shape == (6, LENGTH)
    assert out.steps.shape == out.ponder.shape == (6,)
    assert ((out.steps >= 1) & (out.steps <= STEPS)).all()
    if kind in H.ACT_KINDS:
        assert (out.ponder > out.steps).all()  # N + R with R > 0
    else:
        assert (out.steps == STEPS).all() and (out.ponder == 0).all()
    H.loss_fn(0.01)(model, (x, None, torch.randint(LENGTH, (6,)))).backward()


@pytest.mark.parametrize("kind", H.ACT_KINDS)
def test_act_kinds_run_compacted(kind):
    """Halted examples leave the batch in training too (same outputs as masked: tests/test_act.py)."""
    assert H.build(kind, LENGTH, SMALL).depth.compact


def test_act_kinds_hold_the_halting_unit_for_part_of_training_and_every_kind_captures():
    act, ut = (H.cpvr_spec(kind, "smoke", 0, lr=3e-3) for kind in ("ut_act", "ut"))  # a rate given: no grid
    act_cfg, ut_cfg = (H.cpvr_recipe(spec.config).cfg for spec in (act, ut))
    assert (act_cfg.hold, act_cfg.hold_for) == ("depth.halting", MODEL["act_hold"]) and ut_cfg.hold == ""
    assert act.capture and ut.capture
    assert any(name.startswith("depth.halting") for name, _ in H.build("ut_act", LENGTH, SMALL).named_parameters())


def test_ut_equals_transformer_whose_layers_share_weights():
    torch.manual_seed(0)
    ut = UniversalCore(DIM, HEADS, STEPS)
    stack = LayerStack(DIM, HEADS, STEPS)
    for block in stack.blocks:
        block.load_state_dict(ut.block.state_dict())
    h = states()
    # with the step embedding switched off, T shared steps are T identical layers
    torch.nn.init.zeros_(ut.step_embedding.weight)
    torch.testing.assert_close(FixedDepth()(ut, h).state, FixedDepth()(stack, h).state)
    # the step embedding is what tells the steps apart
    torch.nn.init.normal_(ut.step_embedding.weight)
    assert not torch.allclose(FixedDepth()(ut, h).state, FixedDepth()(stack, h).state)


def test_film_at_initialization_is_the_ut():
    torch.manual_seed(0)
    film = FiLMCore(DIM, HEADS, STEPS)
    ut = UniversalCore(DIM, HEADS, STEPS)
    ut.load_state_dict(film.state_dict(), strict=False)
    h = states()
    torch.testing.assert_close(FixedDepth()(film, h).state, FixedDepth()(ut, h).state)
    torch.nn.init.normal_(film.film.weight)
    assert not torch.allclose(FixedDepth()(film, h).state, FixedDepth()(ut, h).state)


@pytest.mark.parametrize("core_cls", [UniversalCore, HyperCore])
@pytest.mark.parametrize("level", ["example", "token"])
@pytest.mark.parametrize("bias", [-3.0, -1.0, 0.0, 1.0])
def test_halting_weights_sum_to_one_and_remainder_is_never_negative(core_cls, level, bias):
    torch.manual_seed(0)
    core = core_cls(DIM, HEADS, STEPS)
    depth = ACTDepth(DIM, bias=bias, level=level)
    torch.nn.init.normal_(depth.halting.linear.weight, std=1.0)  # examples halt at different steps
    out = depth(core, states(batch=32))
    torch.testing.assert_close(out.halting.sum(-1), torch.ones(32))
    assert (out.halting >= 0).all()
    if level == "example":
        remainder = out.ponder - out.steps
        assert (remainder > 0).all() and (remainder <= 1 + 1e-6).all()
    else:  # the mean over tokens of N + R, each token's R in (0, 1]
        assert (out.ponder > 1).all() and (out.ponder <= STEPS + 1).all()
    assert ((out.steps >= 1) & (out.steps <= STEPS)).all()


@pytest.mark.parametrize("core_cls", [UniversalCore, FiLMCore, HyperCore])
def test_act_saturated_at_halt_uses_one_step(core_cls):
    torch.manual_seed(0)
    core = core_cls(DIM, HEADS, STEPS)
    depth = ACTDepth(DIM, bias=30.0)
    h = states()
    out = depth(core, h)
    assert (out.steps == 1).all()
    torch.testing.assert_close(out.ponder, torch.full((5,), 2.0))  # N = 1, R = 1 - 0
    torch.testing.assert_close(out.state, core.step(h, 0))


def test_act_never_halting_runs_every_step_and_forces_the_last():
    torch.manual_seed(0)
    core = UniversalCore(DIM, HEADS, STEPS)
    out = ACTDepth(DIM, bias=-30.0)(core, states())
    assert (out.steps == STEPS).all()
    torch.testing.assert_close(out.halting[:, -1], torch.ones(5), atol=1e-6, rtol=0)


def test_compacted_act_equals_masked_act_for_per_example_weights():
    torch.manual_seed(0)
    core = HyperCore(DIM, HEADS, STEPS, pool_size=4, code_dim=8, rank=2)
    masked, compact = ACTDepth(DIM, bias=-1.0), ACTDepth(DIM, bias=-1.0, compact=True)
    torch.nn.init.normal_(masked.halting.linear.weight, std=1.0)
    compact.load_state_dict(masked.state_dict())
    h = states(batch=16)
    a, b = masked(core, h), compact(core, h)
    assert a.steps.unique().numel() > 1  # the examples really halt at different steps
    torch.testing.assert_close(a.state, b.state)
    torch.testing.assert_close(a.steps, b.steps)


def randomize_hypernetwork(core: HyperCore) -> None:
    """The low-rank heads start at zero; give them values so the generated weights differ from the base."""
    for head in (core.hyper.delta1, core.hyper.delta2):
        torch.nn.init.normal_(head.right.weight, std=0.3)
        torch.nn.init.normal_(head.right.bias, std=0.3)


def test_pool_of_one_equals_a_shared_block_with_the_generated_weights():
    torch.manual_seed(0)
    core = HyperCore(DIM, HEADS, STEPS, pool_size=1, code_dim=8, rank=2)
    randomize_hypernetwork(core)
    w1, w2 = core.hyper.weights(core.block.mlp, core.router.pool / core.router.code_norm)  # the only code there is
    plain = Block(DIM, HEADS)
    plain.load_state_dict(core.block.state_dict())
    with torch.no_grad():
        plain.mlp.fc1.weight.copy_(w1[0])
        plain.mlp.fc2.weight.copy_(w2[0])
    h = states()
    for t in range(STEPS):
        torch.testing.assert_close(core.step(h, t), plain(h + core.step_embedding.weight[t]))
        torch.testing.assert_close(core.last_routing, torch.ones(5, 1))


def test_hyper_weights_are_per_example_and_routing_is_a_distribution():
    torch.manual_seed(0)
    core = HyperCore(DIM, HEADS, STEPS, pool_size=8, code_dim=8, rank=2)
    randomize_hypernetwork(core)
    h = states(batch=6)
    alpha, z = core.code(h, 0)
    assert alpha.shape == (6, 8) and z.shape == (6, 8)
    torch.testing.assert_close(alpha.sum(-1), torch.ones(6))
    w1, w2 = core.hyper.weights(core.block.mlp, z)
    assert w1.shape == (6, 4 * DIM, DIM)
    assert not torch.allclose(w1[0], w1[1])
    # the generated weights are exactly what the step applies to each example
    u = torch.randn(6, 3, DIM)
    hidden = torch.nn.functional.gelu(torch.einsum("btd,bmd->btm", u, w1) + core.block.mlp.fc1.bias)
    expected = torch.einsum("btm,bdm->btd", hidden, w2) + core.block.mlp.fc2.bias
    torch.testing.assert_close(core.hyper(core.block.mlp, u, z), expected)


def test_router_is_single_head_attention_over_the_pool():
    torch.manual_seed(0)
    router = Router(DIM, pool_size=3, code_dim=4)
    h, step = torch.randn(2, 5, DIM), torch.randn(DIM)
    alpha, z = router(h, step)
    summary = (h + step).mean(1)
    q = router.query(torch.cat([summary, step.expand(2, -1)], -1))
    k = router.key(router.pool)
    torch.testing.assert_close(alpha, torch.softmax(q @ k.T / 2.0, -1))
    torch.testing.assert_close(z, alpha @ router.pool / (math.sqrt(2 / math.pi) * 4))


def test_router_without_the_step_reads_only_the_state():
    torch.manual_seed(0)
    router = Router(DIM, pool_size=3, code_dim=4, reads_step=False)
    h = torch.randn(2, 5, DIM)
    a, _ = router(h, torch.randn(DIM))
    b, _ = router(h, torch.randn(DIM))
    torch.testing.assert_close(a, b)  # the step changes nothing
    q = router.query(h.mean(1))
    torch.testing.assert_close(a, torch.softmax(q @ router.key(router.pool).T / 2.0, -1))


def test_the_code_norm_is_the_mean_l1_norm_of_a_pool_entry_at_init():
    torch.manual_seed(0)
    router = Router(DIM, pool_size=4096, code_dim=16)
    mean_l1 = router.pool.detach().abs().sum(-1).mean().item()
    assert abs(mean_l1 / router.code_norm - 1) < 0.01


def test_bad_parameters_raise_naming_them():
    with pytest.raises(ValueError, match="kind"):
        H.build("lstm", LENGTH, SMALL)
    with pytest.raises(ValueError, match="summary"):
        HyperCore(DIM, HEADS, STEPS, summary="max")
    with pytest.raises(ValueError, match="pool_size"):
        HyperCore(DIM, HEADS, STEPS, pool_size=0)
    with pytest.raises(ValueError, match="rank"):
        HyperCore(DIM, HEADS, STEPS, rank=0)
    with pytest.raises(ValueError, match="level"):
        ACTDepth(DIM, level="layer")


def test_every_kind_saves_and_loads_its_state():
    from safetensors.torch import load_file, save_file

    for kind in H.KINDS:
        model = H.build(kind, LENGTH, SMALL)
        path = f"/tmp/test_hyper_ut_{kind}.safetensors"
        save_file(model.state_dict(), path)  # fails if two names share one tensor
        H.build(kind, LENGTH, SMALL).load_state_dict(load_file(path))


def test_smoke_run_reports_accuracy_and_steps_per_hop():
    _, metrics = H.train_cpvr("hyper_act", "smoke", 0)
    hops = [str(h) for h in H.SIZES["smoke"]["test_hops"]]
    assert sorted(metrics["accuracy"]) == hops and sorted(metrics["steps"]) == hops == sorted(metrics["loss"])
    assert all(0 <= a <= 1 for a in metrics["accuracy"].values()) and all(v > 0 for v in metrics["loss"].values())
    assert 0 <= metrics["validation"] <= 1 and metrics["validation loss"] > 0
    table = HC.configurations("smoke")
    assert list(table["model"]) == [H.LABELS[k] for k in H.KINDS]
    assert table.set_index("model").loc["Transformer", "parameters"] > table.set_index("model").loc["UT", "parameters"]


# -- hut-7: the seq2seq stand-in ----------------------------------------------------------
def test_scratchpad_targets_of_the_worked_example():
    from ponder.studies.hyper_ut.scratchpad import encode

    x = torch.tensor([[3, 9, 4, 6, 0, 2, 8, 1, 5, 7]])  # 0 -> 3 -> 6 -> 8, label 5; SEP = 10, EOS = 11
    tokens, mask = encode(x, "scratchpad")
    assert tokens[0, 10:].tolist() == [10, 3, 6, 8, 5, 11]  # as long as the longest target: no more padding
    assert tokens[0, 1:][mask[0]].tolist() == [3, 6, 8, 5, 11]
    tokens, mask = encode(x, "answer")
    assert tokens[0, 1:][mask[0]].tolist() == [5, 11]
    with pytest.raises(ValueError, match="target"):
        encode(x, "chain")


def test_greedy_decode_stops_at_eos_and_reads_the_answer():
    from ponder.models.seq2seq import greedy_decode
    from ponder.studies.hyper_ut.scratchpad import SIZES, answers, build

    torch.manual_seed(0)
    sizes = SIZES["smoke"]
    model = build(sizes)
    eos = sizes["length"] + 1
    with torch.no_grad():  # make EOS the only token the model ever emits
        model.head.bias.fill_(-10.0)
        model.head.bias[eos] = 10.0
    x = torch.randint(sizes["length"], (3, sizes["length"]))
    out = greedy_decode(model, x, max_new=5, eos=eos)
    assert out.tolist() == [[eos]] * 3
    assert answers(model, x).tolist() == [-1, -1, -1]  # no answer before EOS


# -- hut-8: the image models --------------------------------------------------------------
def test_patch_embedding_is_the_vits_and_every_image_model_runs():
    from ponder.models.vit import ViT
    from ponder.studies.hyper_ut.vision import KINDS, PatchEmbedding

    torch.manual_seed(0)
    embedding = PatchEmbedding(image=16, patch=4, dim=DIM)
    vit = ViT(image=16, patch=4, dim=DIM, depth=1, heads=HEADS)
    vit.load_state_dict(embedding.state_dict(), strict=False)
    images = torch.rand(2, 1, 16, 16)
    torch.testing.assert_close(embedding(images), vit.embed(images))
    for kind in KINDS:
        model = H.build(kind, 0, SMALL, embedding=PatchEmbedding(16, 4, DIM), classes=10)
        assert model(images).logits.shape == (2, 10)


def test_the_image_runs_keys_do_not_cover_the_cpvr_experiment():
    """hut-8 builds its models from ``ponder.models.kinds``: an edit of the C-PVR experiment retrains no image run."""
    from ponder.runner import runs

    closure = runs.import_closure(("ponder.studies.hyper_ut.vision",))
    assert "ponder.models.kinds" in closure and "ponder.studies.hyper_ut.cpvr" not in closure


def test_image_act_kinds_hold_the_halting_unit_as_on_cpvr():
    from ponder.studies.hyper_ut import vision as V

    cfg = {kind: V.vision_recipe(V.vision_run(kind, "smoke", 0).config).cfg for kind in V.KINDS}
    for kind in ("ut_act", "hyper_act"):
        assert (cfg[kind].hold, cfg[kind].hold_for) == ("depth.halting", MODEL["act_hold"])
    assert cfg["transformer"].hold == ""


def test_the_shallow_vit_is_a_transformer_of_the_matched_depth_and_its_own_run():
    from ponder.studies.hyper_ut import vision as V

    matched = V.SIZES["smoke"]["matched_depth"]
    assert V.models("smoke") == {
        "ViT": ("transformer", None),
        f"{matched}-block ViT": ("transformer", matched),
        "U-ViT+ACT": ("ut_act", None),
        "HyperU-ViT": ("hyper_act", None),
    }
    deep, shallow = V.vision_run("transformer", "smoke", 0), V.vision_run("transformer", "smoke", 0, matched)
    deep_model, shallow_model = (V.vision_recipe(run.config).make() for run in (deep, shallow))
    assert deep.run.key != shallow.run.key
    assert "depth" not in deep.config and shallow.config["depth"] == matched
    assert deep_model.core.max_steps == V.SIZES["smoke"]["model"]["steps"] and shallow_model.core.max_steps == matched


def test_image_runs_draw_their_profiles_scene_and_are_keyed_by_it(monkeypatch):
    from dataclasses import asdict

    from ponder.studies.hyper_ut import vision as V
    from ponder.tasks import images

    plain = V.vision_run("ut_act", "smoke", 0)
    harder = images.Scene(noise=0.5)
    monkeypatch.setitem(V.SIZES, "smoke", dict(V.SIZES["smoke"], scene=harder))
    noisy = V.vision_run("ut_act", "smoke", 0)
    assert plain.config["sizes"]["scene"] == asdict(images.SCENES["plain"])
    assert noisy.config["sizes"]["scene"] == asdict(harder)
    plain_batches, noisy_batches = (V.vision_recipe(run.config).batches for run in (plain, noisy))
    assert plain.run.key != noisy.run.key and not torch.equal(plain_batches(0)[0], noisy_batches(0)[0])


# -- the explorer ---------------------------------------------------------------------------
def test_ponder_trace_and_explorer_controls():
    import matplotlib.pyplot as plt

    from ponder.studies.hyper_ut.widgets import ponder_explorer

    torch.manual_seed(0)
    models = {kind: H.build(kind, LENGTH, SMALL) for kind in ("ut", "hyper_act")}
    x, _, _ = cpvr.sample(1, LENGTH, 2, seed=0)
    trace = HT.ponder_trace(models["hyper_act"], x[0])
    assert len(trace["halting_probability"]) == STEPS and len(trace["routing"]) == STEPS
    assert abs(sum(trace["weights"]) - 1) < 1e-5 and 1 <= trace["steps"] <= STEPS
    assert HT.ponder_trace(models["ut"], x[0])["halting_probability"] == []
    plt.close("all")
    box = ponder_explorer(models, LENGTH, max_hops=3, hops=2, train_hops=(1, 2))  # L = 8 holds 3 hops beside a decoy
    menu, slider, button = box.children[0].children
    assert slider.continuous_update is False and slider.min == 1
    slider.value = 3
    menu.value = "hyper_act"
    button.click()
    titles = [plt.figure(n)._suptitle.get_text() for n in plt.get_fignums()]
    assert len(titles) == 4  # drawn at start, then once per control change
    assert titles[0].startswith("ut: answers") and titles[-1].startswith("hyper_act: answers")
    assert titles[0].endswith("2 hops: within the training hops 1–2") and titles[-1].endswith("(out of distribution)")
    chains = [plt.figure(n).axes[0].get_title() for n in plt.get_fignums()]
    assert chains[0].startswith("2 hops") and chains[1].startswith("3 hops")
    plt.close("all")


def test_results_table_is_mean_and_standard_error_over_seeds():
    import pandas as pd

    from ponder.studies.hyper_ut.plots.cpvr import results_table

    seeds = pd.DataFrame(
        [
            {
                "model": "UT+ACT",
                "seed": s,
                "in distribution": a,
                "out of distribution": b,
                "steps": n,
                "steps slope": k,
                "params": 10,
                "fits": f,
            }
            for s, a, b, n, k, f in [(0, 0.9, 0.5, 4.0, 0.1, False), (1, 1.0, 0.7, 5.0, 0.3, True)]
        ]
        + [
            {
                "model": "UT",
                "seed": 0,
                "in distribution": 1.0,
                "out of distribution": 0.4,
                "steps": 8.0,
                "steps slope": 0.0,
                "params": 1234,
                "fits": True,
            }
        ]
    )
    table = results_table(seeds, ["UT", "UT+ACT"], ["UT+ACT"], 3, 8).set_index("model")
    assert list(table.columns) == [
        "hops 1–3",
        "hops 4–8",
        "mean steps",
        "steps per extra hop",
        "parameters",
        "seeds",
        "fit hops 1–3",
    ]
    assert table.loc["UT+ACT"].tolist() == [
        "0.95 ± 0.05",
        "0.60 ± 0.10",
        "4.50 ± 0.50",
        "+0.20 ± 0.10",
        "10",
        2,
        "1 of 2",
    ]
    assert table.loc["UT"].tolist() == [
        "1.00",
        "0.40",
        "8",
        "—",
        "1,234",
        1,
        "1 of 1",
    ]  # one seed: no error; fixed depth: no slope


def test_a_run_fits_its_training_hops_only_if_every_one_reaches_the_level():
    import pandas as pd

    from ponder.studies.hyper_ut.analysis.cpvr import fit_counts, with_fit

    accuracy = {
        ("UT", 0): [1.0, 0.96, 0.95, 0.2],
        ("UT", 1): [1.0, 0.99, 0.94, 0.9],
        ("UT+ACT", 0): [0.9, 1.0, 1.0, 1.0],
    }
    frame = pd.DataFrame(
        [
            {"model": m, "seed": s, "hops": h, "accuracy": a}
            for (m, s), accs in accuracy.items()
            for h, a in zip((1, 2, 3, 4), accs)
        ]
    )
    seeds = pd.DataFrame([{"model": m, "seed": s} for m, s in accuracy])
    fitted = with_fit(seeds, frame, train_max=3)
    assert fitted["fits"].tolist() == [
        True,
        False,
        False,
    ]  # hop 4 is beyond training and does not count; 0.94 < 0.95 does
    assert fit_counts(fitted, ["UT+ACT", "UT"]) == "UT+ACT 0/1, UT 1/2"


def test_per_seed_weighs_hop_counts_alike_and_summarize_means_the_seeds():
    import pandas as pd

    rows = [  # (seed, hops, accuracy, steps): hops 1-2 trained, 3-4 beyond
        (0, 1, 1.0, 2.0),
        (0, 2, 0.8, 3.0),
        (0, 3, 0.6, 4.0),
        (0, 4, 0.2, 5.0),
        (1, 1, 1.0, 2.0),
        (1, 2, 1.0, 2.0),
        (1, 3, 0.4, 2.0),
        (1, 4, 0.4, 2.0),
    ]
    frame = pd.DataFrame(
        [{"model": "UT+ACT", "seed": s, "hops": h, "accuracy": a, "steps": n, "params": 10} for s, h, a, n in rows]
    )
    seeds = HA.per_seed(frame, train_max=2).set_index("seed")
    assert seeds["in distribution"].tolist() == [0.9, 1.0] and seeds["out of distribution"].round(6).tolist() == [
        0.4,
        0.4,
    ]
    assert seeds["steps slope"].round(6).tolist() == [1.0, 0.0] and seeds["steps"].tolist() == [3.5, 2.0]
    summary = HA.summarize(frame, train_max=2).loc["UT+ACT"]
    assert summary["in distribution"] == pytest.approx(0.95) and summary["in distribution se"] == pytest.approx(0.05)
    assert summary["out of distribution se"] == pytest.approx(0.0) and summary["params"] == 10


def test_depth_needed_is_the_smallest_depth_within_the_tolerance_of_the_best():
    import pandas as pd

    accuracy = {1: [0.50, 0.40], 2: [1.00, 0.90], 4: [1.00, 0.97], 8: [0.99, 1.00]}  # depth: accuracy at hops 1, 2
    frame = pd.DataFrame(
        [
            {"seed": 0, "depth": d, "hops": h, "accuracy": a}
            for d, accs in accuracy.items()
            for h, a in zip((1, 2), accs)
        ]
    )
    needed = HD.depth_needed_per_hop(frame)
    assert needed.loc[0].tolist() == [
        2,
        4,
    ]  # hop 1: 1.00 is the best, depth 2 has it; hop 2: 0.90 < 1.00 - 0.05 <= 0.97
    assert HD.depth_needed_per_hop(frame, tolerance=0.1).loc[0].tolist() == [2, 2]


@pytest.mark.parametrize(
    "deep, verdict", [([4, 4, 5], "holds"), ([2, 2, 2], "does not hold"), ([2, 4, 3], "inconclusive")]
)
def test_depth_claims_judge_the_depth_at_the_most_hops_against_one_hop(deep, verdict):
    """hut-2: per seed, the depth needed at the most hops minus at one hop (here 3 at one hop on every seed)."""
    needed = pd.DataFrame({1: [3, 3, 3], 4: deep}, index=pd.Index([0, 1, 2], name="seed"))
    (row,) = HD.depth_claims(needed)
    assert row.target == "hut-2" and row.verdict.verdict == verdict
    assert row.ours == f"1:3.0 4:{np.mean(deep):.1f} (hops:mean depth needed)"


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profiles_hop_counts_fit_a_decoy_chain(profile):
    """Every hop count a profile trains or tests on (main runs and depth grid) can be drawn with a
    decoy chain at its length."""
    sizes = by_profile(H.SIZES, profile)
    most = max(*sizes["train_hops"], *sizes["test_hops"], *sizes["depth_grid"]["hops"])
    assert most <= cpvr_decoys.max_hops(sizes["length"])
    _, hops, _ = H.test_set(sizes["length"], sizes["test_hops"], 2)
    assert sorted(set(hops.tolist())) == list(sizes["test_hops"])


@pytest.mark.parametrize("generator", ["block", "delta"])
def test_module_apply_reaches_every_submodule_of_a_hyper_ut_model(generator):
    """``nn.Module.apply`` (an init function over every submodule) works on Hyper-UT with either
    generator: no submodule shadows it (the low-rank heads compute in ``forward``)."""
    model = H.build("hyper_act", LENGTH, dict(SMALL, generator=generator))
    seen = []
    assert model.apply(seen.append) is model
    assert any(type(m).__name__ == "LowRankHead" for m in seen) == (generator == "delta")


# -- Hyper-UT trains at the learning rate of the other kinds (the normalised code) -------------
def generated_fc1(model, x: torch.Tensor) -> torch.Tensor:
    """The fc1 weights ``[B, in, out]`` (``W^T``) the first step applies to ``x``; the UT's shared ``[1, in, out]``."""
    core = model.core
    if not hasattr(core, "generators"):
        return core.block.mlp.fc1.weight.T[None]
    _, z = core.router(model.embedding(x), core.step_embedding.weight[0])
    return core.generators["fc1"](z)[0]


def fc1_movement(kind: str, model: dict, steps: int = 5) -> float:
    """Relative change of the applied fc1 after ``steps`` AdamW updates at lr 6e-3 on one batch."""
    torch.manual_seed(0)
    net = H.build(kind, 12, model)
    optimizer = make_optimizer(net, TrainConfig(steps=100, batch_size=64, lr=6e-3))
    x, _, y = H.sample(64, 12, (1, 2, 3), seed=1)
    before = generated_fc1(net, x).detach().clone()
    for _ in range(steps):
        optimizer_step(H.loss_fn(0.05)(net, (x, None, y)), net, optimizer, 1.0)
    return ((generated_fc1(net, x).detach() - before).norm() / before.norm()).item()


@pytest.mark.parametrize("pool_size", [1, 16])
def test_generated_weights_move_about_as_fast_as_a_shared_weight(pool_size):
    # With the raw code (c = 1) the generated fc1 moved 8.7x (pool of one) and 3.1x (pool of 16)
    # as far as UT+ACT's shared fc1; with the normalised code 1.8x and 1.1x (two parameters behind
    # each weight, W^0 and G E_0); with each applied at STEP = 1/2 (ponder.models.hyper_block's
    # "Step size") 0.97x and 0.64x (a mix of 16 entries has a code of L1 norm below 1).
    model = dict(H.SIZES["cpu"]["model"], pool_size=pool_size)
    ratio = fc1_movement("hyper_act", model) / fc1_movement("ut_act", model)
    assert 0.5 < ratio < 2.0, ratio


def test_the_pool_of_one_trains_like_ut_act():
    # Hyper-UT with one pool entry is UT+ACT with its block reparametrised (W^0 + G E_0): its loss
    # should follow UT+ACT's. Over steps 150-300 (cpu's model, hops 1-3, seed 0) the means are 1.993
    # (UT+ACT) and 2.001 (pool of one); with the raw code 2.39. The full-length runs are hut-10's
    # pool-of-one row at cpu.
    def late_loss(kind):
        torch.manual_seed(0)
        net = H.build(kind, 12, dict(H.SIZES["cpu"]["model"], pool_size=1))
        cfg = TrainConfig(
            steps=300, batch_size=64, lr=6e-3, warmup=0.2, log_every=25, hold="depth.halting", hold_for=0.4
        )
        history = train(net, H.loss_fn(0.05), lambda s: H.sample(64, 12, (1, 2, 3), seed=s), cfg)
        return sum(h["loss"] for h in history if h["step"] >= 150) / sum(h["step"] >= 150 for h in history)

    assert abs(late_loss("hyper_act") - late_loss("ut_act")) < 0.1


# -- the learning rate of every kind, chosen on in-distribution validation ----------------------
def test_validation_set_is_the_training_hops_drawn_apart_from_the_test_set():
    x, hops, _ = H.validation_set(LENGTH, (1, 2), 30)
    test_x, _, _ = H.test_set(LENGTH, (1, 2), 30)
    assert sorted(hops.unique().tolist()) == [1, 2] and len(x) == 60
    assert not torch.equal(x, test_x)
    torch.testing.assert_close(H.validation_set(LENGTH, (1, 2), 30)[0], x)  # fixed


def fake_grid(monkeypatch, scores: dict, warmups: tuple[float, ...] = ()) -> list:
    """Every C-PVR run's metrics ``scores[lr]`` (or ``scores[(lr, warmup)]`` with ``warmups``, the smoke grid's
    warmups) as the validation accuracy and loss, and the OOD accuracy 0.5; the runs read, as
    ``(kind, seed, lr, warmup)``."""
    calls = []

    def metrics(spec):
        train = spec.config["train"]
        lr, warmup = train["lr"], train["warmup"]
        calls.append((spec.config["kind"], train["seed"], lr, warmup))
        accuracy, loss = scores[(lr, warmup) if warmups else lr]
        return {"validation": accuracy, "validation loss": loss, "accuracy": {"1": accuracy, "3": 0.5}}

    monkeypatch.setattr(Spec, "metrics", metrics)
    rates = sorted({key[0] for key in scores}) if warmups else tuple(scores)
    grid = dict(lr_grid=tuple(rates), **({"warmup_grid": warmups} if warmups else {}))
    monkeypatch.setitem(H.SIZES, "smoke", dict(H.SIZES["smoke"], **grid))
    return calls


def chosen_rate(kind: str, profile: str, seed: int) -> tuple[float, float]:
    """The learning rate and warmup of the run ``cpvr_run`` declares for ``kind`` on ``seed``."""
    run = H.cpvr_run(kind, profile, seed)
    train = (run.spec() if isinstance(run, Chosen) else run).config["train"]
    return train["lr"], train["warmup"]


WARMUP = H.SIZES["smoke"]["warmup"]


def test_the_chosen_rate_has_the_lowest_validation_loss_on_the_tuning_seed(monkeypatch):
    calls = fake_grid(monkeypatch, {1e-3: (0.7, 0.9), 3e-3: (0.9, 0.3), 1e-2: (0.8, 0.5)})
    assert chosen_rate("ut", "smoke", 4) == (3e-3, WARMUP)
    assert {(kind, seed) for kind, seed, _, _ in calls} == {("ut", 4)}


def test_the_grid_crosses_every_rate_with_every_warmup_and_chooses_a_pair(monkeypatch):
    scores = {(3e-3, 0.1): (1.0, 0.05), (3e-3, 0.2): (1.0, 0.04), (6e-3, 0.1): (1.0, 0.01), (6e-3, 0.2): (1.0, 0.02)}
    calls = fake_grid(monkeypatch, scores, warmups=(0.1, 0.2))
    assert chosen_rate("ut", "smoke", 0) == (6e-3, 0.1)
    assert sorted((lr, w) for _, _, lr, w in calls) == sorted(scores)
    choices = H.lr_choices("smoke", 0, {"UT": ("ut", None)})
    assert choices.loc["UT", "chosen"] == "0.006 w0.1" and choices.loc["UT", "ood 0.003 w0.2"] == 0.5
    assert describe_choices(choices, HA.LR_SCORES).startswith("grid 0.003 w0.1 / 0.003 w0.2 / 0.006 w0.1 / 0.006 w0.2;")
    assert len(H.tuning_jobs("smoke", 0, [("ut", None)])) == 4


def test_rates_that_both_fit_are_told_apart_by_the_loss_and_an_exact_tie_goes_to_the_first(monkeypatch):
    fake_grid(monkeypatch, {3e-3: (1.0, 0.04), 6e-3: (1.0, 0.01)})
    assert chosen_rate("ut", "smoke", 0) == (6e-3, WARMUP)
    fake_grid(monkeypatch, {6e-3: (0.95, 0.1), 3e-3: (0.95, 0.1)})
    assert chosen_rate("ut", "smoke", 0) == (6e-3, WARMUP)


def test_the_choices_evidence_names_each_rates_accuracy_and_loss(monkeypatch):
    fake_grid(monkeypatch, {3e-3: (1.0, 0.04), 6e-3: (0.99, 0.012)})
    choices = H.lr_choices("smoke", 0, {"UT": ("ut", None)})
    assert describe_choices(choices, HA.LR_SCORES) == "grid 0.003 / 0.006; UT 0.006 (1.00 / 0.99, loss 0.040 / 0.012)"
    assert describe_choices(choices, {"accuracy": 3}) == "grid 0.003 / 0.006; UT 0.006 (1.000 / 0.990)"


def test_a_one_rate_grid_trains_nothing_to_choose(monkeypatch):
    calls = fake_grid(monkeypatch, {6e-3: (0.5, 1.0)})
    assert chosen_rate("ut", "smoke", 0) == (6e-3, WARMUP) and calls == []
    assert H.tuning_jobs("smoke", 0, [("ut", None)]) == []


def test_the_cpu_grid_tries_three_rates_and_two_warmups_and_quick_one_point():
    assert H.rates("cpu") == [(lr, w) for lr in (3e-3, 6e-3, 1.2e-2) for w in (0.1, 0.2)]
    assert H.rates("quick") == [(6e-3, H.SIZES["quick"]["warmup"])]


def test_every_seed_trains_at_the_rate_chosen_on_the_notebooks_seed(monkeypatch):
    runs = T.generalization_runs("cpu", seed=10)
    assert {spec.config["train"]["seed"] for run in runs.values() for spec in run.among} == {10}
    depths = T.depth_runs("cpu").values()
    assert {run.config["train"]["lr"] for run in depths} == {H.SIZES["cpu"]["lr"]}  # depths: one rate


def test_hut4_sweeps_tau_over_the_act_kinds_each_tuned_at_its_tau(monkeypatch):
    runs = T.halting_runs("cpu", seed=10)
    taus = H.SIZES["cpu"]["tau_sweep"]
    assert set(runs) == {(k, t, 10 + s) for t in taus for k in H.ACT_KINDS for s in H.SIZES["cpu"]["seeds"]}
    assert {spec.config["train"]["seed"] for run in runs.values() for spec in run.among} == {10}
    assert {run.among[0].config["model"]["tau"] for run in runs.values()} == set(taus) and MODEL["tau"] not in taus
    tuned = [j for j in hyper_ut_schedule.hyper_ut_upstream("cpu")["hyper_ut"] if declared(j)]
    assert {
        (j.config["kind"], j.config["model"]["tau"]) for j in tuned if j.config["model"]["tau"] != MODEL["tau"]
    } == {(k, t) for k in H.ACT_KINDS for t in taus}
    assert T.halting_runs("quick") == {}

    monkeypatch.setattr(Spec, "metrics", lambda spec: fake_metrics(spec.config["model"]))
    sweep = T.halting_sweep("smoke")
    assert set(sweep.tau) == {H.SIZES["smoke"]["model"]["tau"], *H.SIZES["smoke"]["tau_sweep"]}
    assert set(sweep.model) == {H.LABELS[k] for k in H.ACT_KINDS}


def fake_metrics(model: dict | None) -> dict:
    """The metrics of a C-PVR run at smoke: accuracy and steps per test hop count (steps = 1 / tau)."""
    hops = H.SIZES["smoke"]["test_hops"]
    tau = (model or {}).get("tau", H.SIZES["smoke"]["model"]["tau"])
    return {
        "accuracy": dict.fromkeys(map(str, hops), 1.0),
        "steps": dict.fromkeys(map(str, hops), 1 / tau),
        "params": 1,
        "validation": 1.0,
        "validation loss": 0.0,
    }


def test_hut10_variants_are_the_default_model_but_one_setting(monkeypatch):
    configs = T.pool_configs("cpu")
    assert configs[("block", 16, True)] is None  # hut-3's Hyper-UT runs
    assert configs[("block", 16, False)] == {"router_step": False}
    assert configs[("delta", 16, True)] == {"generator": "delta"}
    assert {model["pool_size"] for key, model in configs.items() if model and "pool_size" in model} == {1, 4}
    names = T.tuned_configs("cpu")
    assert len(names) == len(H.KINDS) + len(configs) - 1


def test_by_router_means_each_seeds_accuracy_on_and_beyond_the_training_hops():
    rows = [
        {"generator": g, "pool_size": n, "router_step": step, "seed": seed, "hops": h, "accuracy": acc}
        for g, n, step, seed, h, acc in [
            ("block", 16, True, 0, 1, 1.0),
            ("block", 16, True, 0, 4, 0.6),
            ("block", 16, True, 0, 5, 0.4),
            ("block", 16, False, 0, 1, 0.8),
            ("block", 16, False, 0, 4, 0.2),
            ("block", 16, False, 0, 5, 0.2),
            ("delta", 16, True, 0, 4, 0.9),  # another generator: left out
            ("block", 4, True, 0, 4, 0.9),  # another pool size: left out
        ]
    ]
    split = HM.by_router(pd.DataFrame(rows), "block", 16, train_max=3)
    assert split["in"].loc[0].to_dict() == {False: 0.8, True: 1.0}
    assert split["out"].loc[0].round(6).to_dict() == {False: 0.2, True: 0.5}


def test_ood_per_seed_means_each_seeds_accuracy_beyond_the_training_hops():
    rows = [
        {"generator": g, "seed": seed, "hops": h, "accuracy": acc}
        for g, seed, h, acc in [
            ("block", 0, 3, 1.0),  # a training hop count: left out
            ("block", 0, 4, 0.6),
            ("block", 0, 5, 0.4),
            ("block", 1, 4, 0.8),
            ("delta", 0, 4, 0.3),
        ]
    ]
    ood = HM.ood_per_seed(pd.DataFrame(rows), train_max=3, column="generator")
    assert ood["block"].round(6).to_dict() == {0: 0.5, 1: 0.8}
    assert ood.loc[0, "delta"] == 0.3 and math.isnan(ood.loc[1, "delta"])  # delta trained on seed 0 only


def test_routing_entropy_is_ln_n_for_uniform_and_zero_for_one_hot():
    weights = {(1, 1): [0.25] * 4, (1, 2): [0.0, 1.0, 0.0, 0.0], (2, 1): [0.5, 0.0, 0.5, 0.0]}
    frame = pd.DataFrame(
        [
            {"step": step, "hops": hops, "module": j, "weight": w}
            for (hops, step), ws in weights.items()
            for j, w in enumerate(ws)
        ]
    )
    entropy = HM.routing_entropy(frame)
    assert list(entropy.columns) == ["hops", "step", "entropy"]
    assert entropy.set_index(["hops", "step"])["entropy"].to_dict() == pytest.approx(
        {(1, 1): math.log(4), (1, 2): 0.0, (2, 1): math.log(2)}
    )


def test_decoy_rules_score_the_shortcuts_per_hop_count_on_the_fixed_decoy_test_set():
    n = 100
    table = TA.decoy_rules(12, [1, 2, 3, 4], n)
    assert list(table.columns) == ["hops", *TA.BASELINES] and table["hops"].tolist() == [1, 2, 3, 4]
    assert table[list(TA.BASELINES)].stack().between(0, 1).all()
    counts = table["majority label"] * n  # a share of the n examples of each hop count
    assert (counts - counts.round()).abs().max() < 1e-4 and (counts >= n / 12).all()  # labels 0..11
    assert (table["one of the two ends"] >= 0.5).all()  # right whenever it picks the real end
    pruned = table.set_index("hops")["pruning, 2 rounds"]
    assert min(pruned[[1, 2]]) > max(pruned[[3, 4]])  # two rounds remove a decoy of at most two hops
    assert table.iloc[[0, 2]].reset_index(drop=True).equals(TA.decoy_rules(12, [3, 1], n))  # fixed per hop count
    assert TA.two_ends_rule(12, [1, 2, 3, 4], n).equals(table[["hops", "one of the two ends"]])
