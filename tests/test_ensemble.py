"""Seeds trained together (:mod:`ponder.runner.gpu.ensemble`) against the same runs trained one by one: the
vmap-ed gradients, the per-member clipping, the training, checkpoints a member can resume from
alone, and an interrupted group that resumes to the same bits."""

import copy
from functools import partial

import pytest
import torch

from ponder.runner.gpu import ensemble
from ponder.runner.runs import Run
from ponder.runner.specs import Spec
from ponder.runner.training import TrainConfig, seed_everything, train, train_run
from ponder.studies.hyper_ut import cpvr as hyper_ut
from ponder.studies.hyper_ut import cpvr_targets as T

SMOKE = hyper_ut.SIZES["smoke"]["model"]
LENGTH, SEEDS = 8, (0, 1, 2)
HOLD = {"hold": "depth.halting", "hold_for": 0.3}


def make(kind: str):
    return partial(hyper_ut.build, kind, LENGTH, SMOKE)


def batches(seed: int):
    return lambda step: hyper_ut.sample(16, LENGTH, [1, 2, 3], seed=seed * 1000 + step)


def members(cfg: TrainConfig, runs=None) -> list[ensemble.Member]:
    runs = runs or [None] * len(SEEDS)
    return [
        ensemble.Member(run, TrainConfig(**{**cfg.as_dict(), "seed": s}), batches(s)) for run, s in zip(runs, SEEDS)
    ]


def built(kind: str) -> list[torch.nn.Module]:
    models = []
    for s in SEEDS:
        seed_everything(s)
        models.append(make(kind)())
    return models


@pytest.mark.parametrize("kind", hyper_ut.KINDS)
def test_vmapped_gradients_equal_each_models_own(kind):
    """One vmap-ed call gives every seed the gradients its model alone gets (ACT's loop, which
    reads nothing back inside vmap, included), to float32 rounding of the whole gradient's norm."""
    models = built(kind)
    loss = hyper_ut.loss_fn(SMOKE["tau"])
    group = members(TrainConfig(steps=1, batch_size=16))
    batch = ensemble.stacked_batch(group, 0, torch.device("cpu"))
    grads, losses = ensemble.Stacked(copy.deepcopy(models), group[0].cfg).gradient_function(loss)(batch)
    for s, model in enumerate(models):
        own = loss(model, tuple(t[s] for t in batch))
        own.backward()
        assert losses[s].item() == pytest.approx(own.item(), rel=1e-6)
        norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        for name, p in model.named_parameters():
            assert torch.allclose(grads[name][s], p.grad, atol=1e-5 * norm.item(), rtol=0), name


def test_stacked_gradients_hold_no_graph_and_steps_do_not_accumulate_memory():
    """The gradients are plain tensors: no autograd graph hangs on them, so a step frees what the
    last one built (the stacked weights require grad; given to ``grad`` as they are, every step's
    gradients held a graph, and eager steps grew by its size until the GPU ran out, 136 GB at the
    gpu bench's sizes)."""
    group = members(TrainConfig(steps=1, batch_size=16))
    stacked = ensemble.Stacked(built("hyper_act"), group[0].cfg)
    batch = ensemble.stacked_batch(group, 0, torch.device("cpu"))
    grads, losses = stacked.gradient_function(hyper_ut.loss_fn(SMOKE["tau"]))(batch)
    assert grads and all(g.grad_fn is None and not g.requires_grad for g in grads.values())
    assert losses.grad_fn is None
    update = stacked.update_function(hyper_ut.loss_fn(SMOKE["tau"]))
    update(batch)
    assert all(p.grad.grad_fn is None for p in stacked.params.values() if p.grad is not None)


def test_clipping_is_per_member():
    torch.manual_seed(0)
    grads = {"a": torch.randn(3, 4, 5) * 0.1, "b": torch.randn(3, 7) * torch.tensor([[0.01], [1.0], [10.0]])}
    alone = []
    for s in range(3):
        params = [torch.zeros_like(g[s], requires_grad=True) for g in grads.values()]
        for p, g in zip(params, grads.values()):
            p.grad = g[s].clone()
        norm = torch.nn.utils.clip_grad_norm_(params, 1.0)
        alone.append((norm, [p.grad for p in params]))
    norms = ensemble.clip_members(grads, 1.0)
    for s, (norm, clipped) in enumerate(alone):
        assert norms[s].item() == pytest.approx(norm.item(), rel=1e-6)
        for g, expected in zip(grads.values(), clipped):
            assert torch.allclose(g[s], expected, rtol=1e-6, atol=0)
    assert norms.min() < 1.0 < norms.max()  # one member left alone, the others scaled


@pytest.mark.parametrize("kind", ["ut_act", "hyper_act", "transformer"])
def test_training_together_follows_training_alone(kind):
    """Every member's loss history is the one its run alone has (the halting unit held for the first
    30 % of the steps, then trained), to float32 rounding."""
    cfg = TrainConfig(steps=24, batch_size=16, lr=3e-3, log_every=4, **(HOLD if kind.endswith("_act") else {}))
    group = members(cfg)
    models = built(kind)
    alone = [
        train(copy.deepcopy(model), hyper_ut.loss_fn(SMOKE["tau"]), m.batches, m.cfg) for model, m in zip(models, group)
    ]
    together = ensemble.train_together(models, hyper_ut.loss_fn(SMOKE["tau"]), group)
    for a, t in zip(alone, together):
        assert [h["step"] for h in t] == [h["step"] for h in a]
        assert [h["loss"] for h in t] == pytest.approx([h["loss"] for h in a], rel=1e-4)
    assert len({t[-1]["loss"] for t in together}) == len(SEEDS)  # three different runs, not one three times


def group_runs(tag: str) -> list[Run]:
    return [Run(f"ens/{tag}/{s}", {"seed": s}, "smoke") for s in SEEDS]


@pytest.mark.parametrize("stop, hold_for", [(25, 0.3), (13, 0.5)])
def test_interrupted_group_resumes_to_the_same_bits_and_a_member_can_resume_alone(
    tmp_path, monkeypatch, stop, hold_for
):
    """Interrupted at ``stop``: after the hold of ACT's halting unit, or during it (the checkpoint at
    step 10 then lists the held parameters as a run alone does)."""
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    cfg = TrainConfig(
        steps=30, batch_size=16, lr=3e-3, checkpoint_every=10, log_every=5, hold="depth.halting", hold_for=hold_for
    )
    loss = hyper_ut.loss_fn(SMOKE["tau"])
    whole = ensemble.train_runs(members(cfg, group_runs("whole")), make("hyper_act"), loss)

    interrupted = members(cfg, group_runs("resumed"))

    def failing(step, inner=interrupted[1].batches):
        if step == stop:
            raise KeyboardInterrupt
        return inner(step)

    with pytest.raises(KeyboardInterrupt):
        ensemble.train_runs(
            [interrupted[0], ensemble.Member(interrupted[1].run, interrupted[1].cfg, failing), interrupted[2]],
            make("hyper_act"),
            loss,
        )
    assert not any(m.run.done for m in interrupted)
    # member 0 alone, from the group's last checkpoint: training.train_run reads its format
    alone, alone_metrics = train_run(
        interrupted[0].run, make("hyper_act"), loss, interrupted[0].batches, interrupted[0].cfg
    )
    assert [h["step"] for h in alone_metrics["history"]] == list(range(5, 31, 5))
    resumed = ensemble.train_runs(interrupted, make("hyper_act"), loss)  # members 1 and 2 together; 0 from the cache
    for (model, metrics), (expected, expected_metrics) in zip(resumed[1:], whole[1:]):
        assert metrics == expected_metrics
        for a, b in zip(model.state_dict().values(), expected.state_dict().values()):
            assert torch.equal(a, b)
    assert alone_metrics["history"][-1]["loss"] == pytest.approx(whole[0][1]["history"][-1]["loss"], rel=1e-4)


def test_a_group_must_differ_only_in_its_seeds():
    cfg = TrainConfig(steps=10, batch_size=16)
    with pytest.raises(ValueError, match="only in their seed"):
        ensemble.check_group(
            [
                *members(cfg)[:2],
                ensemble.Member(None, TrainConfig(steps=10, batch_size=16, lr=1e-2, seed=5), batches(5)),
            ]
        )
    with pytest.raises(ValueError, match="different seeds"):
        ensemble.check_group(members(cfg)[:1] * 2)
    with pytest.raises(ValueError, match="at least one"):
        ensemble.check_group([])


def test_cpvr_seeds_trained_together_are_each_their_own_run(tmp_path, monkeypatch):
    """Where a profile trains seeds together, one call trains the group: every seed's run is then
    cached (and marked so in its config), and only the group's first job is prefetched."""
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    smoke = hyper_ut.SIZES["smoke"]
    one_rate = dict(seeds_together=True, lr_grid=(smoke["lr"],))  # the rate cpvr_spec defaults to
    monkeypatch.setitem(hyper_ut.SIZES, "smoke", dict(smoke, seeds=SEEDS, steps=12, **one_rate))
    runs = T.generalization_runs("smoke", kinds=("ut_act",))
    assert hyper_ut.leading(runs) == [runs["ut_act", 0]]
    model, metrics = runs["ut_act", 1]()
    members = [hyper_ut.cpvr_spec("ut_act", "smoke", s) for s in SEEDS]
    assert all(m.run.done and m.run.config["seeds_together"] for m in members)
    assert metrics == members[1].run.metrics() and metrics["accuracy"].keys() == {"1", "2", "3"}
    assert len({m.run.key for m in members}) == len(SEEDS)
    with pytest.raises(ValueError, match="not one of the seeds"):
        hyper_ut.train_cpvr("ut_act", "smoke", 5, together=SEEDS)
    frame = T.generalization(
        "smoke", kinds=("ut_act", "transformer")
    )  # what hut-3/4/5 read: the cached group, one group more
    assert sorted({(k, s) for k, s in zip(frame["kind"], frame["seed"])}) == [
        (k, s) for k in ("transformer", "ut_act") for s in SEEDS
    ]
    assert frame.loc[frame["kind"] == "ut_act", "accuracy"].tolist() == [
        a for m in members for a in m.run.metrics()["accuracy"].values()
    ]
    monkeypatch.setitem(hyper_ut.SIZES, "smoke", smoke)
    assert "seeds_together" not in hyper_ut.cpvr_spec("ut_act", "smoke", 0).config


def test_hyper_ut_seeds_train_alone_where_a_profile_trains_seeds_together(tmp_path, monkeypatch):
    """On CUDA, Hyper-UT+ACT's seeds trained together part from each trained alone (9.7e-4 of the loss;
    docs/gpu.md), so a profile with ``seeds_together`` trains the other kinds' seeds in groups and
    Hyper-UT's one by one: each its own prefetched job, its run not marked as trained together."""
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    smoke = hyper_ut.SIZES["smoke"]
    monkeypatch.setitem(hyper_ut.SIZES, "smoke", dict(smoke, seeds=SEEDS, seeds_together=True))
    assert [k for k in hyper_ut.KINDS if not hyper_ut.trains_together("smoke", k)] == ["hyper", "hyper_act"]
    runs = T.generalization_runs("smoke", kinds=("hyper_act", "ut_act"))
    assert hyper_ut.leading(runs) == [runs["hyper_act", s] for s in SEEDS] + [runs["ut_act", 0]]
    assert not any(isinstance(runs["hyper_act", s], Spec) and runs["hyper_act", s].together for s in SEEDS)
    assert "seeds_together" not in hyper_ut.cpvr_spec("hyper_act", "smoke", 1).config
    assert hyper_ut.cpvr_spec("ut_act", "smoke", 1).config["seeds_together"]
    pools = T.pool_runs("smoke")
    assert hyper_ut.leading(pools) == list(pools.values())
