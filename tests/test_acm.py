"""Adaptive Computation Modules: learners, gate, conversion, phases, FLOPs, grouped execution."""

import math
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from ponder.ledger.tuning import describe_choices
from ponder.models import acmize as A
from ponder.models import flops
from ponder.models.acm import ACM, Learners, _gumbel_noise, hard_gumbel, softmax_choices
from ponder.models.acm_phases import (
    auxiliary_losses,
    choice_entropy,
    distances,
    distill_loss,
    finetune_loss,
    gate_labels,
)
from ponder.models.transformer import MLP
from ponder.models.vit import ViT
from ponder.runner.specs import Chosen
from ponder.studies.acm import phases, tuning
from ponder.studies.acm import schedule as acm_schedule
from ponder.studies.acm.analysis import ablations as ablation_analysis
from ponder.studies.acm.analysis import learners as learners_analysis
from ponder.studies.acm.analysis import methods as acm_analysis
from ponder.studies.acm.analysis import spending as spending_analysis
from ponder.studies.acm.analysis.learners import learners_needed
from ponder.studies.acm.analysis.methods import compared, leads, mean_points


def test_prefix_is_the_sum_of_the_first_k_learners():
    torch.manual_seed(0)
    learners = Learners(6, 5, n=4, hidden=3)
    z = torch.randn(7, 6)
    each = learners.each(z)
    for k in range(5):
        torch.testing.assert_close(learners.prefix(z, k), each[:, :k].sum(1), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(learners.cumulative(z)[:, -1], learners.prefix(z, 4), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("k_min", [0, 1])
def test_grouped_and_masked_run_exactly_k_learners(k_min):
    torch.manual_seed(1)
    acm = ACM(8, 8, n=4, hidden=4, k_min=k_min).eval()
    z = torch.randn(3, 9, 8)
    masked = acm(z)
    k = acm.k.clone()
    assert k.min() >= k_min and k.max() <= 4
    acm.set_execution("grouped")
    grouped = acm(z)
    torch.testing.assert_close(grouped, masked, atol=1e-5, rtol=1e-5)
    # every token, the ones with the batch's largest k included, runs exactly k learners (the official off-by-one fixed)
    expected = torch.stack([acm.learners.prefix(z[b, t], int(k[b, t])) for b in range(3) for t in range(9)]).view(
        3, 9, 8
    )
    torch.testing.assert_close(grouped, expected, atol=1e-5, rtol=1e-5)
    one = torch.ones(5, dtype=torch.long)  # the case where the official loop ran no learner at all
    torch.testing.assert_close(
        acm.learners.grouped(z[0, :5], one), acm.learners.prefix(z[0, :5], 1), atol=1e-6, rtol=1e-5
    )


@pytest.mark.parametrize("case", ["all 0", "all 2", "all N", "mixed", "mixed, empty groups"])
def test_grouped_equals_prefix_per_token(case):
    """Every path of :meth:`Learners.grouped`: one k for every token (no reordering) and mixed k,
    some groups empty; the output keeps the input's leading shape."""
    torch.manual_seed(2)
    learners = Learners(6, 5, n=4, hidden=3)
    z = torch.randn(2, 11, 6)
    k = {
        "all 0": torch.zeros(2, 11),
        "all 2": torch.full((2, 11), 2),
        "all N": torch.full((2, 11), 4),
        "mixed": torch.randint(0, 5, (2, 11), generator=torch.Generator().manual_seed(0)),
        "mixed, empty groups": torch.tensor([0, 3] * 11).view(2, 11),
    }[case].long()
    expected = torch.stack([learners.prefix(z[b, t], int(k[b, t])) for b in range(2) for t in range(11)]).view(2, 11, 5)
    torch.testing.assert_close(learners.grouped(z, k), expected, atol=1e-6, rtol=1e-5)


def test_hard_gumbel_forward_is_one_hot_and_gradient_is_the_soft_one():
    logits = torch.randn(6, 5, requires_grad=True)
    weights = torch.randn(6, 5)
    torch.manual_seed(3)
    hard = hard_gumbel(logits + _gumbel_noise(logits), 0.8)
    assert torch.equal(hard.detach().sum(-1), torch.ones(6)) and set(hard.detach().unique().tolist()) <= {0.0, 1.0}
    (hard * weights).sum().backward()
    grad_hard = logits.grad.clone()
    logits.grad = None
    torch.manual_seed(3)
    uniform = torch.rand_like(logits).clamp_(1e-9, 1 - 1e-9)
    soft = ((logits - torch.log(-torch.log(uniform))) / 0.8).softmax(-1)
    (soft * weights).sum().backward()
    torch.testing.assert_close(grad_hard, logits.grad)
    assert torch.equal(hard.detach().argmax(-1), soft.detach().argmax(-1))


def test_softmax_over_a_leading_dimension_is_the_softmax_over_the_choices():
    scores = torch.randn(3, 7, 5, requires_grad=True)
    weights = torch.randn(3, 7, 5)
    (softmax_choices(scores) * weights).sum().backward()
    moved = scores.grad.clone()
    scores.grad = None
    expected = scores.softmax(-1)
    (expected * weights).sum().backward()
    torch.testing.assert_close(softmax_choices(scores), expected)
    torch.testing.assert_close(moved, scores.grad)


@pytest.mark.parametrize("k_min", [0, 1])
def test_a_training_forward_samples_the_gate_once_and_reads_its_arg_max(k_min):
    """One pass gives ν̂ (the Gumbel sample), the arg-max's learners and the mask m_n = [k ≥ n]."""
    torch.manual_seed(2)
    acm = ACM(6, 6, n=4, hidden=3, k_min=k_min).train()
    z = torch.randn(5, 11, 6)
    torch.manual_seed(7)
    acm(z)
    logits = acm.gate(z).detach()
    torch.manual_seed(7)
    sample = (logits + _gumbel_noise(logits)).argmax(-1) + k_min
    assert torch.equal(acm.k, sample) and torch.equal(acm.onehot.detach().argmax(-1) + k_min, sample)
    assert torch.equal(acm.argmax_used.detach().round().long(), logits.argmax(-1) + k_min)
    mask = acm.learner_mask(acm.onehot.detach())
    assert torch.equal(mask.round(), (sample.unsqueeze(-1) >= torch.arange(1, 5)).float())


def test_task_loss_reaches_the_gate_in_training():
    torch.manual_seed(0)
    acm = ACM(8, 8, n=4, hidden=4).train()
    acm(torch.randn(4, 8)).pow(2).sum().backward()
    assert acm.gate.fc1.weight.grad.abs().sum() > 0


def test_distilled_acm_with_all_learners_matches_the_module():
    """Phase I's objective (MSE over every k) fits h(z, N) to the replaced MLP; errors fall with k."""
    torch.manual_seed(0)
    mlp = MLP(8, 32).requires_grad_(False)
    acm = ACM(8, 8, n=4, hidden=8)
    optimizer = torch.optim.Adam(acm.learners.parameters(), lr=2e-2)
    for _ in range(200):
        z = torch.randn(128, 8)
        loss = (acm.learners.cumulative(z) - mlp(z).unsqueeze(-2)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    z = torch.randn(512, 8)
    with torch.no_grad():
        target = mlp(z)
        errors = [(acm.learners.prefix(z, k) - target).pow(2).mean().item() for k in range(1, 5)]
        acm.force_k = 4
        full = acm(z)
    assert errors == sorted(errors, reverse=True)
    assert (full - target).pow(2).mean() < 0.05 * target.var()


def test_distill_loss_trains_the_learners_of_an_acmized_vit():
    torch.manual_seed(0)
    base = ViT(image=8, patch=4, dim=8, depth=1, heads=2).eval().requires_grad_(False)
    model = A.acmize(base, n=4)
    for name, p in model.named_parameters():
        p.requires_grad = ".learners." in name
    x = torch.rand(16, 1, 8, 8)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    losses = []
    for _ in range(40):
        loss = distill_loss(base, model, x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def test_acmize_replaces_every_mlp_and_projection_at_equal_cost():
    base = ViT(image=8, patch=4, dim=16, depth=2, heads=2)
    model = A.acmize(base, n=4)
    assert A.replaced(model) == [
        f"blocks.{i}.{m}" for i in range(2) for m in ("attn.q_proj", "attn.k_proj", "attn.v_proj", "attn.o_proj", "mlp")
    ]
    mlp, q = model.blocks[0].mlp, model.blocks[0].attn.q_proj
    assert (mlp.k_min, mlp.learners.activation, q.k_min, q.learners.activation) == (0, "gelu", 1, "identity")
    assert 4 * mlp.learners.macs == 2 * 16 * 64 and abs(4 * q.learners.macs - 16 * 16) <= 4 * 33
    assert A.projection_rank(768, 768, 4) == 96  # the official sizing for ViT-B


def test_gate_labels_are_the_first_learner_that_no_longer_helps_on_l2_distances():
    d = torch.tensor(
        [
            [4.0, 2.0, 1.9, 1.0],  # n=2 halves d; n=3: 1.2 * 1.9 >= 2 -> label 3
            [4.0, 2.0, 1.0, 0.5],  # every learner helps by more than 1.2 -> N
            [1.0, 1.0, 1.0, 1.0],  # n=2 does not help -> 2 (never 0 or 1)
            [1.1, 1.0, 0.5, 0.1],  # ratio 1.1 on distances stops at 2 (on squared errors, 1.21, it would go on)
            [1.2, 1.0, 0.1, 0.0],  # d(2) = d(1) / 1.2 exactly: d(n) >= tau d(n-1) holds -> 2
        ]
    )
    assert gate_labels(d, 1.2).tolist() == [3, 4, 2, 2, 2]
    # the learners a token needs are those before the one that no longer helps; all 4 when each helps
    assert learners_needed(d, 1.2).tolist() == [2, 4, 1, 1, 1]
    assert torch.equal(learners_needed(d.square().sqrt() * 0.125, 1.2), learners_needed(d, 1.2))  # a ratio: any scale


def test_distances_are_l2_norms_of_the_residual():
    acm = ACM(2, 2, n=4, hidden=1)
    with torch.no_grad():
        acm.learners.w2.zero_()
    assert distances(acm, torch.ones(1, 2), torch.tensor([[3.0, 4.0]])).tolist() == [[5.0, 5.0, 5.0, 5.0]]


def _acm_with_choices(k: torch.Tensor) -> torch.nn.Module:
    """A one-ACM model (N = 4, k_min = 0) whose last forward chose ``k [B, T]``."""
    acm = ACM(2, 2, n=4, hidden=1)
    acm.onehot = torch.nn.functional.one_hot(k, 5).float()
    acm.used = k.float()
    return torch.nn.Sequential(acm)


def test_auxiliary_losses_match_a_hand_count():
    model = _acm_with_choices(torch.tensor([[0, 2], [4, 4]]))  # beta = 2/8 = 0.25 and 8/8 = 1
    aux = auxiliary_losses(model, budget=0.25)
    # budget |mean beta - target| = |0.625 - 0.25| (the per-sample form mean |beta - target| would give 0.375 too here:
    # check it separately below); diversity -(0 + 0.75 + 0.75 + 0) / 4
    assert aux["budget"].item() == pytest.approx(0.375)
    assert aux["diversity"].item() == pytest.approx(-0.375)
    # sample 0 spreads over two choices (entropy log 2 / log 5), sample 1 uses one (0)
    assert aux["entropy"].item() == pytest.approx(
        -0.5 * torch.log(torch.tensor(2.0)).item() / torch.log(torch.tensor(5.0)).item()
    )


def test_budget_term_is_the_distance_of_the_mean_cost_from_the_target():
    model = _acm_with_choices(torch.tensor([[0, 0], [4, 4]]))  # beta 0 and 1, mean 0.5
    assert auxiliary_losses(model, budget=0.5)["budget"].item() == 0.0  # mean_i |beta_i - 0.5| would be 0.5


def test_entropy_counts_the_hard_one_hots_with_the_soft_gradient():
    torch.manual_seed(0)
    acm = ACM(4, 4, n=4, hidden=2).train()
    z = torch.randn(3, 16, 4)
    acm(z)
    histogram = acm.onehot.detach().mean(1)
    assert set(acm.onehot.detach().unique().tolist()) <= {0.0, 1.0}
    expected = -(histogram * histogram.clamp_min(1e-9).log()).sum(-1) / torch.log(torch.tensor(5.0))
    entropy = choice_entropy(acm.onehot)
    torch.testing.assert_close(entropy, expected)
    entropy.sum().backward()
    grad = acm.gate.fc2.weight.grad
    assert torch.isfinite(grad).all() and grad.abs().sum() > 0


@pytest.mark.parametrize("task_gradient", [True, False])
def test_task_gradient_option_decides_whether_the_task_loss_reaches_the_gate(task_gradient):
    torch.manual_seed(0)
    acm = ACM(4, 4, n=4, hidden=2, task_gradient=task_gradient).train()
    acm(torch.randn(2, 8, 4)).pow(2).sum().backward()
    reached = acm.gate.fc2.weight.grad is not None and acm.gate.fc2.weight.grad.abs().sum() > 0
    assert reached == task_gradient


def test_dense_flops_match_a_hand_count_and_torch():
    torch.manual_seed(0)
    vit = ViT(image=8, patch=4, channels=1, classes=3, dim=4, depth=1, heads=1, mlp_ratio=2.0).eval()
    x = torch.rand(2, 1, 8, 8)
    # embed 4 patches * 16 px * 4 + projections 5 tokens * 4 * 16 + mixing 5 * 2*5*4 + MLP 5 * 2*4*8 + head 4*3
    hand = 4 * 16 * 4 + 5 * 4 * 16 + 5 * 2 * 5 * 4 + 5 * 2 * 4 * 8 + 4 * 3
    assert hand == 1108
    with FlopCounterMode(display=False) as counter:
        vit(x)
    assert flops.vit(vit, 2).tolist() == [hand, hand]
    # torch counts 2 FLOPs per multiply-add; its counter skips the CPU attention kernel (mixing, 5 * 40 MACs)
    assert counter.get_total_flops() in (2 * 2 * hand, 2 * 2 * (hand - 5 * 2 * 5 * 4))


def test_acm_flops_count_the_gate_and_the_learners_run():
    acm = ACM(8, 8, n=4, hidden=2, gate_hidden=3, k_min=0)
    assert acm.learners.macs == 2 * (8 + 8) and acm.gate.macs == 8 * 3 + 3 * 5
    acm.k = torch.tensor([[0, 2, 4]])
    assert acm.macs().tolist() == [[39, 39 + 64, 39 + 128]]
    assert flops.module(acm, 3, 1).tolist() == [3 * 39 + 6 * 32]


def test_acm_vit_flops_fall_with_fewer_learners():
    torch.manual_seed(0)
    model = A.acmize(ViT(image=8, patch=4, dim=8, depth=2, heads=2), n=4).eval()
    x = torch.rand(3, 1, 8, 8)
    counts = []
    for k in (1, 2, 4):
        A.force_k(model, k)
        model(x)
        counts.append(flops.vit(model, 3)[0].item())
    dense = flops.vit(ViT(image=8, patch=4, dim=8, depth=2, heads=2), 3)[0].item()
    assert counts[0] < counts[1] < counts[2] and abs(counts[2] - dense) / dense < 0.1


def test_finetune_loss_terms_and_budget_gradient():
    torch.manual_seed(0)
    model = A.acmize(ViT(image=8, patch=4, dim=8, depth=1, heads=2), n=4).train()
    x, y = torch.rand(4, 1, 8, 8), torch.randint(0, 10, (4,))
    loss = finetune_loss(model, x, y, budget=0.25, weights={"budget": 1.0, "entropy": 0.0, "diversity": 0.0})
    loss.backward()
    assert model.blocks[0].mlp.gate.fc2.weight.grad.abs().sum() > 0
    beta = A.cost_fraction(model)
    assert beta.shape == (4,) and ((beta >= 0) & (beta <= 1)).all()


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="activation"):
        Learners(4, 4, 2, 2, activation="tanh")
    with pytest.raises(ValueError, match="execution"):
        ACM(4, 4).set_execution("fast")
    with pytest.raises(ValueError, match="k_min"):
        ACM(4, 4, k_min=2)
    with pytest.raises(ValueError, match="divisible"):
        A.acmize(ViT(image=8, patch=4, dim=8, depth=1, heads=2), n=3)


@pytest.mark.parametrize("budget", [1.5, -0.1, 0, 0.0, float("nan"), "0.5", True, None])
def test_acm_budget_outside_zero_one_raises_before_training(isolated_outputs, budget):

    with pytest.raises(ValueError, match=r"budget=.* must be a fraction in \(0, 1\]"):
        tuning.acm_model("smoke", budget=budget)
    assert not (isolated_outputs / "results").exists()  # nothing trained, nothing cached


def test_acm_budget_check_covers_every_entry(monkeypatch):
    """ablation, granularity, pretraining_variant and jobs all hand their budget to acm_model."""
    from ponder.studies.acm import ablations

    monkeypatch.setattr(ablations, "ABLATION_BUDGET", 1.2)
    for call in (
        lambda: ablations.ablation("smoke", "all"),
        lambda: ablations.granularity("smoke", 2),
        lambda: ablations.pretraining_variant("smoke", "none"),
    ):
        with pytest.raises(ValueError, match="budget=1.2"):
            call()


def test_acm_run_keys_hold_the_evaluation_size_and_the_base_run(monkeypatch):
    """The run keys hash what a profile's row puts into the configs, not the size tables
    (:mod:`ponder.studies.acm.sizes`): every run names its data (the evaluation size among it), and the runs built on
    a base model name its run's key (which fixes its weights: two bases of equal accuracy are different
    starts), the runs built on phase I and II theirs; each needs the runs whose models it builds on."""
    from ponder.studies.acm import phases

    monkeypatch.setitem(phases.SIZES, "smoke", dict(phases.SIZES["smoke"], eval_images=48))
    base = phases.base_run("smoke")
    phase3, router = tuning.acm_run("smoke", 0.5), tuning.moefied_run("smoke")
    phase2 = phase3.needs[0]
    phase1, relu = phase2.needs[1], router.needs[0]
    on_base = [phase1, relu, tuning.halting_run("smoke", 1.0), tuning.early_exits_run("smoke")]
    on_base.append(tuning.dense_run("smoke"))
    every = [base, phase1, phase2, phase3, router, *on_base]
    assert {spec.config["data"]["eval_images"] for spec in every} == {48}
    assert {spec.config["base"] for spec in on_base} == {base.run.key}
    assert all(spec.needs == (base,) or spec.needs[0].run.key == base.run.key for spec in on_base)
    assert phase2.config["phase1"] == phases.phase1_key("smoke") != phases.phase1_key("smoke", steps=0)
    assert phase2.needs[0].run.key == base.run.key and phase3.config["start"] == phases.gates_run("smoke").run.key
    assert router.config["relu"] == relu.run.key


def test_dense_finetuning_trains_every_weight_of_the_base_for_the_acms_steps():
    from ponder.studies.acm import baselines, phases

    base, _ = phases.base_model("smoke")
    run = tuning.dense_run("smoke")
    model = baselines.dense_recipe(run.config, base).make()
    s = phases.sizes("smoke")
    assert run.config["train"]["steps"] == s["distill_steps"] + s["gate_steps"] + s["finetune_steps"]
    assert run.config["train"]["lr"] == s["finetune_lr"] and run.config["base"] == phases.base_run("smoke").run.key
    assert all(p.requires_grad for p in model.parameters())
    for (name, p), q in zip(model.named_parameters(), base.parameters(), strict=True):
        assert torch.equal(p, q) and p is not q, name  # a copy of the base model, trained apart from it


def fake_tuning(monkeypatch, scores: dict[float, float]) -> list:
    """Each tuning run's metrics hold ``scores[lr]`` as its validation score, on a two-rate grid at smoke; the runs
    read."""
    from ponder.studies.acm import phases, tuning

    calls = []

    def tuning_run(method, profile, task, lr):
        return SimpleNamespace(metrics=lambda: calls.append((method, task, lr)) or {"validation": scores[lr]})

    monkeypatch.setitem(phases.SIZES, "smoke", dict(phases.SIZES["smoke"], lr_grid=tuple(scores)))
    monkeypatch.setattr(tuning, "tuning_run", tuning_run)
    return calls


def tuned_lr(spec) -> float:
    """The learning rate a method's run trains at (MoEfication's: its ReLU-fication's)."""
    return (spec.needs[0] if spec.name.endswith("moe-router") else spec).config["train"]["lr"]


def test_each_method_trains_at_the_rate_with_the_best_validation_score(monkeypatch):
    from ponder.studies.acm import tuning

    calls = fake_tuning(monkeypatch, {5e-4: 0.8, 2e-3: 0.9})
    assert tuning.chosen_lr("A-ViT", "smoke", "digits") == 2e-3 and set(calls) == {
        ("A-ViT", "digits", 5e-4),
        ("A-ViT", "digits", 2e-3),
    }
    chosen = tuning.acm_run("smoke", 0.5, task="speech")
    assert isinstance(chosen, Chosen) and tuned_lr(chosen.spec()) == 2e-3
    assert tuned_lr(tuning.acm_run("smoke", 0.5, task="speech", lr=1e-4)) == 1e-4
    fake_tuning(monkeypatch, {5e-4: 0.9, 2e-3: 0.9})
    assert tuning.chosen_lr("ZTW", "smoke", "digits") == 5e-4  # a tie: the first of the grid
    choices = acm_analysis.lr_choices("smoke", "speech")
    assert list(choices.index) == list(tuning.METHODS["speech"]) and set(choices["chosen"]) == {5e-4}
    described = describe_choices(choices, acm_analysis.LR_SCORES)
    assert described.startswith("grid 0.0005 / 0.002; ACM 0.0005 (0.90 / 0.90)")


def test_without_a_grid_every_method_keeps_its_own_rate_and_nothing_is_tuned():
    from ponder.studies.acm import phases, tuning

    assert tuning.tuning_jobs("smoke") == [] and tuning.grid("smoke") == ()
    own = {m: tuning.chosen_lr(m, "smoke", "digits") for m in tuning.METHODS["digits"]}
    finetune = phases.sizes("smoke")["finetune_lr"]
    assert own == {"ACM": finetune, "MoEfication": 5e-4, "A-ViT": 5e-4, "ZTW": 1e-3, "dense, fine-tuned": finetune}
    assert acm_analysis.describe_tuning("smoke", "speech") == (
        f"not tuned, each method at its own rate: ACM {finetune:g}, MoEfication 0.0005, dense, fine-tuned {finetune:g}"
    )
    jobs = tuning.tuning_jobs("cpu", "speech")
    assert len(jobs) == len(tuning.METHODS["speech"]) * len(tuning.grid("cpu")) == 6
    assert {tuned_lr(job) for job in jobs} == set(tuning.grid("cpu"))


def test_with_a_grid_of_one_rate_every_method_trains_at_it_and_nothing_is_tuned():
    from ponder.studies.acm import tuning

    for task in tuning.METHODS:
        assert tuning.grid("quick", task) == (5e-4,) and tuning.tuning_jobs("quick", task) == []
        assert {tuning.chosen_lr(m, "quick", task) for m in tuning.METHODS[task]} == {5e-4}
        assert acm_analysis.describe_tuning("quick", task) == "every method at 0.0005, not tuned"


def test_the_validation_set_is_the_training_digits_rendered_afresh():
    from ponder.studies.acm import phases
    from ponder.tasks import images

    x, y = phases.validation_inputs(phases.data("smoke"))
    n = phases.sizes("smoke")["eval_images"]
    train, _ = images.images("train", scene=phases.scene("smoke"))
    test, _ = phases.test_set("smoke")
    assert len(x) == n and not torch.equal(x, train[:n]) and not torch.equal(x[: len(test)], test)
    torch.testing.assert_close(phases.validation_inputs(phases.data("smoke"))[0], x)  # fixed


def test_acm5_reads_a_phase_one_run_to_its_plateau_from_either_start():
    from ponder.studies.acm import phases

    cold, warm = phases.settled_run("smoke", 0, warm_start=False), phases.settled_run("smoke", 0, warm_start=True)
    assert (
        cold.config["train"]["steps"] == warm.config["train"]["steps"] == phases.sizes("smoke")["phase1_plateau_steps"]
    )
    assert cold.config["warm_start"] is False and "warm_start" not in warm.config
    assert len({cold.run.key, warm.run.key, phases.phase1_key("smoke")}) == 3  # neither is phase III's phase I


def test_acm_digits_base_config_holds_its_profiles_scene(monkeypatch):
    """The digits base model's config holds the knobs of its profile's scene (a name or a Scene in the row), so
    a profile that changes its scene trains new runs; the speech base model has none. The same scene named or
    spelled out is the same config."""
    from ponder.studies.acm import phases
    from ponder.tasks import images

    configs = [phases.base_run("smoke").config, phases.base_run("smoke", task="speech").config]
    monkeypatch.setitem(
        phases.SIZES, "smoke", dict(phases.SIZES["smoke"], scene=images.Scene(jitter=0.25, texture=0.3, noise=0.03))
    )
    configs.append(phases.base_run("smoke").config)
    monkeypatch.setitem(
        phases.SIZES, "smoke", dict(phases.SIZES["smoke"], scene=images.Scene(jitter=0.25, texture=0.3, noise=0.15))
    )
    configs.append(phases.base_run("smoke").config)
    scenes = [config["data"].get("scene") for config in configs]
    assert scenes[0] == {"jitter": 0.25, "texture": 0.3, "noise": 0.03} and scenes[1] is None
    assert configs[2] == configs[0] and scenes[3]["noise"] == 0.15
    noisy = images.images("test", scene=images.Scene(**scenes[3]), copies=phases.TEST_COPIES)[0]
    assert torch.equal(
        phases.test_set("smoke")[0], noisy[: len(phases.test_set("smoke")[0])]
    )  # the test set is drawn in the scene too


def test_warm_start_bias_is_the_least_squares_solution_and_builds_are_bit_identical():
    torch.manual_seed(0)
    base = ViT(image=8, patch=4, dim=8, depth=1, heads=2).eval()
    builds = []
    for _ in range(5):
        torch.manual_seed(1)  # the gates' random init
        builds.append(A.acmize(base, n=4, warm_start=True).state_dict())
    for state in builds[1:]:
        assert all(torch.equal(state[name], builds[0][name]) for name in state)
    q = base.blocks[0].attn.q_proj
    r = builds[0]["blocks.0.attn.q_proj.learners.w1"].shape[0] // 4
    w2, b1 = builds[0]["blocks.0.attn.q_proj.learners.w2"][:, :r], builds[0]["blocks.0.attn.q_proj.learners.b1"]
    torch.testing.assert_close(b1[:r], torch.linalg.lstsq(w2, q.bias[:, None]).solution[:, 0], atol=1e-5, rtol=1e-4)
    assert not b1[r:].any()  # only learner 1 carries the bias


def test_warm_start_reproduces_the_modules_with_all_learners():
    torch.manual_seed(0)
    base = ViT(image=8, patch=4, dim=8, depth=1, heads=2).eval()
    model = A.acmize(base, n=4, warm_start=True).eval()
    z = torch.randn(5, 8)
    mlp, acm_mlp = base.blocks[0].mlp, model.blocks[0].mlp
    torch.testing.assert_close(acm_mlp.learners.prefix(z, 4), mlp(z) - mlp.fc2.bias, atol=1e-5, rtol=1e-4)
    q, acm_q = base.blocks[0].attn.q_proj, model.blocks[0].attn.q_proj  # rank 1 per learner: 4 of 8 directions
    errors = [(acm_q.learners.prefix(z, k) - q(z)).pow(2).mean().item() for k in (1, 2, 3, 4)]
    assert errors == sorted(errors, reverse=True)


def test_latency_bench_keeps_the_ratio_of_every_round():
    """acm-9 is judged on per-round ratios: time_rounds interleaves the calls and keeps each round."""
    from ponder.bench import acm as bench
    from ponder.runner.timing import time_rounds

    calls = []
    rounds = time_rounds({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeats=3, warmup=1)
    assert calls == ["a", "b"] * 4 and [len(t) for t in rounds.values()] == [3, 3]
    case = bench.measure(repeats=3, images=1, fractions=(0.25,), threads=1)["cases"][0]
    assert len(case["naive_ratios"]) == len(case["grouped_ratios"]) == 3
    assert all(r > 0 for r in case["naive_ratios"] + case["grouped_ratios"])


def test_latency_claims_are_judged_on_processes():
    """acm-9's samples are fresh processes: :func:`combine` keeps one median ratio per process for each
    execution, and the medians over the processes for the ratio and the times."""
    from ponder.bench import acm as bench

    def process(ratio, dense_s):
        case = {
            "fraction": 0.25,
            "mean_learners": 1.0,
            "dense_s": dense_s,
            "grouped_s": ratio * dense_s,
            "grouped_ratio": ratio,
            "grouped_ratios": [ratio] * 4,
        }
        return {"device": "cpu", "threads": 1, "mix": "single", "learners": 4, "label": "1", "cases": [case]}

    combined = bench.combine([process(0.31, 2.0), process(0.35, 1.0), process(0.30, 3.0)])
    (case,) = combined["cases"]
    assert combined["processes"] == 3 and combined["label"] == "1"
    assert case["grouped_ratios"] == [0.31, 0.35, 0.30] and case["grouped_ratio"] == 0.31
    assert case["dense_s"] == 2.0 and case["mean_learners"] == 1.0 and "naive_ratio" not in case


def test_latency_bench_measures_each_configuration_in_fresh_processes():
    """Every thread count and mix, in its own processes: as many samples per case as processes."""
    from ponder.bench import acm as bench

    results = bench.measure_processes(processes=2, repeats=1, images=1, fractions=(0.25, 1.0))
    assert [(r["label"], r["mix"]) for r in results] == [
        (label, mix) for label in bench.thread_counts() for mix in bench.MIXES
    ]
    for result in results:
        assert result["processes"] == 2 and [c["fraction"] for c in result["cases"]] == [0.25, 1.0]
        assert all(len(c[f"{name}_ratios"]) == 2 for c in result["cases"] for name in ("naive", "grouped"))


def test_latency_bench_rounds_time_every_case(monkeypatch):
    """Each round calls every case (fraction) once, so that a case's rounds span the whole
    measurement: its standard error then holds what a slower minute of the machine does to it."""
    from ponder.bench import acm as bench

    order = []
    real = bench.time_rounds

    def recording(fns, repeats, warmup):
        order.append(list(fns))
        return real(fns, repeats, warmup)

    monkeypatch.setattr(bench, "time_rounds", recording)
    cases = bench.measure(repeats=2, images=1, fractions=(0.25, 1.0), threads=1)["cases"]
    assert order == [[(0, "dense"), (0, "naive"), (0, "grouped"), (1, "dense"), (1, "naive"), (1, "grouped")]]
    assert [c["fraction"] for c in cases] == [0.25, 1.0] and all(len(c["grouped_ratios"]) == 2 for c in cases)
    assert (
        cases[0]["mean_learners"] == 1.0 and cases[1]["mean_learners"] == 4.0
    )  # each case keeps its own learner counts


def test_profile_sizes_scale_the_baselines_and_the_loss_weights():
    from ponder.studies.acm import baselines, phases

    assert baselines.experts("quick") == 8 and baselines.moe_top_k("quick") == (1, 2, 3, 4, 6, 8)
    assert baselines.experts("paper") == 4 * 192 // 24 and baselines.moe_top_k("paper") == (
        4,
        8,
        12,
        16,
        24,
        32,
    )  # the official 24-unit experts
    assert baselines.avit_depths("paper") == (4, 6, 8, 10) and baselines.avit_depths("cpu") == (4 / 3, 2, 8 / 3, 10 / 3)
    assert phases.loss_weights("paper") == phases.PAPER_LOSS_WEIGHTS
    assert phases.loss_weights("quick") == {"budget": 1.0, "entropy": 0.5, "diversity": 0.5}
    assert phases.seeds("paper", 5) == (5, 6, 7) and phases.seeds("quick", 5) == (5,) and phases.seeds("smoke") == (0,)
    phase_steps = ("distill_steps", "gate_steps", "finetune_steps")
    totals = {p: sum(phases.sizes(p)[k] for k in phase_steps) for p in ("quick", "cpu")}
    assert totals["quick"] == 550 and totals["cpu"] == 1350  # every baseline's total too


def test_quick_thins_cpus_grids_and_keeps_what_its_figures_draw():
    from ponder.studies.acm import ablations, baselines, phases

    assert phases.budgets("paper") == (0.25, 0.4, 0.6, 0.75)  # the paper's grid
    assert phases.budgets("cpu") == phases.budgets("cpu", "speech") == (0.1, 0.25, 0.4, 0.6, 0.75)  # and one below
    assert {0.4, 0.6} <= set(phases.budgets("quick")) < set(phases.budgets("cpu"))  # acm-1 and acm-6 draw 0.4 and 0.6
    assert 0.25 in phases.budgets("quick", "speech")  # acm-7 draws 0.25
    assert set(baselines.avit_depths("quick")) < set(baselines.avit_depths("cpu")) and baselines.avit_depths(
        "quick"
    ) == (4 / 3,)
    assert phases.sizes("quick")["learner_counts"] == (4,) and phases.sizes("cpu")["learner_counts"] == (2, 4, 8, 16)
    assert phases.seeds("quick") == (0,) and phases.seeds("cpu") == (0, 1, 2, 3, 4)  # cpu judges on five
    quick, cpu = (phases.sizes(p) for p in ("quick", "cpu"))
    own = {k for k in quick if k not in phases.GRIDS and quick[k] != cpu[k]}
    # cpu's models, trained shorter, and acm-5's warm-start count and acm-10's pre-training variants left to cpu
    assert own == {
        "seeds",
        "base_steps",
        "phase1_plateau_steps",
        "finetune_steps",
        "lr_grid",
        "warm_start_count",
        "pretraining_variants",
    }
    assert all(quick[k] < cpu[k] for k in ("base_steps", "phase1_plateau_steps", "finetune_steps"))
    assert cpu["warm_start_count"] and not quick["warm_start_count"]
    assert ablations.variants("quick") == ("full",) and ablations.variants("cpu") == ablations.PRETRAINING
    speech_base = [phases.base_run(p, 0, "speech").run.key for p in ("quick", "cpu")]
    assert speech_base[0] == speech_base[1]  # one speech base model serves both

    def runs(profile):  # how many runs of each name every notebook lists
        return Counter(
            (j.among[0] if isinstance(j, Chosen) else j).name
            for js in acm_schedule.acm_jobs(profile).values()
            for j in js
        )

    quick, cpu = runs("quick"), runs("cpu")
    assert all(quick[name] <= cpu[name] for name in quick) and quick.total() < cpu.total()


def test_mean_points_average_each_setting_over_seeds():

    points = mean_points([[(1.0, 0.5), (2.0, 0.9)], [(3.0, 0.7), (2.0, 0.7)]])
    assert [p[:2] for p in points] == [(2.0, 0.6), (2.0, 0.8)]
    assert points[0][2] == pytest.approx(1.0) and points[0][3] == pytest.approx(0.1) and points[1][2] == 0.0
    assert mean_points([[(1.0, 0.5)]]) == [(1.0, 0.5, 0.0, 0.0)]  # one seed: no error bar


def test_realised_betas_reads_every_seed_and_budget_of_the_task(monkeypatch):
    from ponder.studies.acm import phases

    calls = []
    monkeypatch.setattr(
        acm_analysis, "acm_model", lambda profile, b, s, task: calls.append(task) or (None, {"beta": b + s / 100})
    )
    frame = acm_analysis.realised_betas("cpu", 5, task="speech")
    assert set(calls) == {"speech"} and len(frame) == 5 * len(phases.budgets("cpu", "speech"))
    assert frame.groupby("target").realised.mean().round(6).to_dict() == {
        b: round(b + 0.07, 6) for b in phases.budgets("cpu", "speech")
    }  # seeds 5 to 9


def test_argmax_budget_adds_the_budget_of_the_choices_evaluation_makes():
    torch.manual_seed(0)
    model = A.acmize(ViT(image=8, patch=4, dim=8, depth=1, heads=2), n=4).train()
    x = torch.rand(4, 1, 8, 8)
    model(x)
    at_argmax = A.cost_fraction(model, argmax=True)
    paper = auxiliary_losses(model, budget=0.3)["budget"]
    both = auxiliary_losses(model, budget=0.3, argmax_budget=True)["budget"]
    torch.testing.assert_close(both, paper + (at_argmax.mean() - 0.3).abs())
    both.backward()
    assert model.blocks[0].mlp.gate.fc2.weight.grad.abs().sum() > 0
    single = torch.nn.Sequential(
        ACM(8, 8, n=4, hidden=2)
    ).train()  # one ACM: the same inputs in training and evaluation
    z = torch.randn(4, 6, 8)
    single(z)
    at_argmax = A.cost_fraction(single, argmax=True).detach()
    with torch.no_grad():
        single.eval()(z)
    torch.testing.assert_close(A.cost_fraction(single), at_argmax)  # what evaluation spends


def test_latency_bench_measures_one_thread_and_every_core_on_any_cpu(monkeypatch):
    from ponder.bench import acm as bench

    monkeypatch.setattr(bench.torch.cuda, "is_available", lambda: False)
    for cores in (1, 2, 16):  # the same two rows of the checked table whatever the machine
        monkeypatch.setattr(bench, "cores", lambda cores=cores: cores)
        assert bench.thread_counts() == {"1": 1, "every core": cores}
    monkeypatch.setattr(bench.torch.cuda, "is_available", lambda: True)
    assert bench.thread_counts() == {"every core": 16}


def test_spending_is_one_pass_of_the_maps_and_the_costs_whatever_the_batch():
    from ponder.studies.acm.analysis.spending import spending

    torch.manual_seed(0)
    model = A.acmize(ViT(image=8, patch=4, dim=8, depth=2, heads=2), n=4).eval()
    x = torch.rand(5, 1, 8, 8)
    maps, costs = spending(model, x, batch=2)
    assert maps.shape == (5, 2, 2) and costs.shape == (5,)
    with torch.no_grad():
        model(x)
    assert torch.allclose(costs, A.cost_fraction(model))
    per_token = (A.compute_map(model) / A.max_token_cost(model))[:, 1:].unflatten(1, (2, 2)).float()
    assert torch.allclose(maps, per_token)
    assert ((0 <= maps) & (maps <= 1)).all()


# The keys' learner biases of the smoke phase-III ViT: its projections' learners are linear, and with the Gumbel
def test_a_lead_is_over_the_best_other_point_at_no_more_cost_and_none_where_nothing_is_that_cheap():
    ours = [(3.0, 0.8), (1.0, 0.6), (2.0, 0.7)]
    others = [(1.5, 0.65), (2.0, 0.75), (4.0, 0.95)]
    lead = leads(ours, others)  # sorted by cost: 1.0 has nothing as cheap; 2.0 meets 0.75; 3.0 the best of 1.5 and 2.0
    assert math.isnan(lead[0]) and lead[1:] == pytest.approx([-0.05, 0.05])
    per_seed = np.array([lead, [0.1, 0.2, 0.3], [float("nan"), float("nan"), 0.1]])
    assert compared(per_seed) == [2]
    assert compared(np.array([[0.1, 0.2]])) == [0, 1]


def test_learner_shares_count_each_seeds_tokens_by_the_learners_they_need():
    from ponder.studies.acm.analysis.learners import learner_shares

    each_helps = torch.tensor([[16.0, 4.0, 1.0, 0.25]])  # MSEs: each learner halves the distance
    second_stalls = torch.tensor([[16.0, 4.0, 4.0, 4.0]])  # the third learner no longer helps
    shares = learner_shares([torch.cat([each_helps, second_stalls]), second_stalls])
    assert shares.tolist() == [[0.0, 0.0, 0.5, 0.0, 0.5], [0.0, 0.0, 1.0, 0.0, 0.0]]  # 2 needed, or all 4


def test_diversity_is_the_spread_over_patches_and_over_images():
    maps = torch.tensor([[[0.0, 1.0], [0.0, 1.0]], [[0.5, 0.5], [0.5, 0.5]]])  # [B=2, 2, 2]
    per_image = torch.tensor([0.25, 0.75])
    d = ablation_analysis.diversity(maps, per_image)
    assert d["spatial"] == pytest.approx(maps[0].flatten().std().item() / 2)  # the second image is flat
    assert d["per_sample"] == pytest.approx(per_image.std().item())


def test_diversity_margins_are_at_least_zero_only_where_both_diversities_reach_their_median():
    import pandas as pd

    stats = pd.DataFrame(
        {"spatial": [2.0, 1.0, 4.0], "per_sample": [2.0, 4.0, 1.0]}, index=["both", "spatial low", "per-sample low"]
    )
    margins = ablation_analysis.diversity_margins(stats)  # medians 2 and 2
    assert margins.to_dict() == {"both": 0.0, "spatial low": -0.5, "per-sample low": -0.5}


def test_ablation_frame_and_margins_read_each_seed_apart():
    flat, spread = torch.full((4, 2, 2), 0.5), torch.rand(4, 2, 2, generator=torch.Generator().manual_seed(0))
    ablations, spent = {}, {}
    for s in (0, 1):
        for name, maps in (("all", spread), ("neither", flat)):
            ablations[s, name] = (None, {"accuracy": 0.9 - s / 10, "beta": 0.6})
            spent[s, name] = (maps, maps.flatten(1).mean(1))
    frame = ablation_analysis.ablation_frame(ablations, spent)
    assert len(frame) == 4 and list(frame.columns) == ["seed", "setting", "spatial", "per_sample", "accuracy", "beta"]
    assert frame.set_index(["seed", "setting"]).loc[(1, "all"), "accuracy"] == pytest.approx(0.8)
    margins = ablation_analysis.margins_per_seed(frame)
    assert list(margins.index) == [0, 1] and list(margins.columns) == ["all", "neither"]
    assert (margins["all"] >= 0).all() and (margins["neither"] < 0).all()  # a flat map has no spread at all


def test_best_at_is_the_best_quality_at_no_more_cost_and_nan_where_nothing_is_that_cheap():
    points = [(1.0, 0.5), (2.0, 0.9), (3.0, 0.7), (5.0, 0.99)]
    assert acm_analysis.best_at(3.0, points) == 0.9  # the best, not the most expensive, of those within the cost
    assert acm_analysis.best_at(2.0, points) == 0.9 and acm_analysis.best_at(1.99, points) == 0.5
    assert acm_analysis.best_at(10.0, points) == 0.99
    assert math.isnan(acm_analysis.best_at(0.5, points)) and math.isnan(acm_analysis.best_at(1.0, []))


def test_tradeoff_reads_each_methods_points_in_mmacs_and_the_digits_baselines_only_on_the_digits(monkeypatch):
    from ponder.studies.acm import baselines, phases

    point = lambda macs, accuracy: {"macs": macs * 1e6, "accuracy": accuracy}  # noqa: E731
    curve_points = [(1.0, 0.1), (2.0, 0.2)]
    curve = {"curve": [point(*p) for p in curve_points]}
    monkeypatch.setattr(acm_analysis, "acm_model", lambda p, b, s, task: (None, point(b, s + b)))
    monkeypatch.setattr(acm_analysis, "moefied", lambda p, s, task: (None, curve))
    monkeypatch.setattr(acm_analysis, "halting", lambda p, d, s: (None, point(d, -d)))
    monkeypatch.setattr(acm_analysis, "early_exits", lambda p, s: (None, curve))
    monkeypatch.setattr(acm_analysis, "dense", lambda p, s, task: (None, point(3.0, 0.8)))
    monkeypatch.setattr(acm_analysis, "base_model", lambda p, s, task: (None, point(3.0, 0.7)))
    digits = acm_analysis.tradeoff("quick", seed=2)
    assert list(digits) == ["ACM", "MoEfication", "A-ViT", "ZTW", "dense, fine-tuned", "base"]
    np.testing.assert_allclose(digits["ACM"], [(b, 2 + b) for b in phases.budgets("quick")])
    np.testing.assert_allclose(digits["A-ViT"], [(d, -d) for d in baselines.avit_depths("quick")])
    for name, points in (("MoEfication", curve_points), ("ZTW", curve_points), ("dense, fine-tuned", [(3.0, 0.8)])):
        np.testing.assert_allclose(digits[name], points)
    np.testing.assert_allclose(digits["base"], [(3.0, 0.7)])
    speech = acm_analysis.tradeoff("quick", seed=2, task="speech")
    assert list(speech) == ["ACM", "MoEfication", "dense, fine-tuned", "base"]
    np.testing.assert_allclose(speech["ACM"], [(b, 2 + b) for b in phases.budgets("quick", "speech")])
    assert len(speech["ACM"]) < len(digits["ACM"])  # quick trains fewer speech budgets


def test_robustness_evaluates_each_corruption_and_severity_on_the_first_copies_and_the_clean_set_once(monkeypatch):
    from ponder.tasks import images

    x, y = torch.rand(32, 1, 8, 8, generator=torch.Generator().manual_seed(0)), torch.arange(32) % 10
    monkeypatch.setattr(ablation_analysis, "test_set", lambda profile: (x, y))
    seen = []

    def evaluate(model, images_, labels):
        seen.append(labels)
        return {"accuracy": images_.sum().item(), "macs": float(len(images_)), "beta": 0.5}

    monkeypatch.setattr(ablation_analysis, "evaluate_acm", evaluate)
    rows = ablation_analysis.robustness(None, "quick")  # quick: 2 of the 16 renderings of each digit
    count = 32 * 2 // 16
    first = x[:count]
    assert len(seen) == 1 + len(images.CORRUPTIONS) * 5 and all(torch.equal(s, y[:count]) for s in seen)
    assert [(r["corruption"], r["severity"]) for r in rows] == [(k, s) for k in images.CORRUPTIONS for s in range(6)]
    for r in rows:
        assert r["macs"] == count and r["beta"] == 0.5
        expected = images.corrupt(first, r["corruption"], r["severity"], seed=r["severity"]).sum().item()
        assert r["accuracy"] == pytest.approx(expected)
    assert len({r["accuracy"] for r in rows if r["severity"] == 0}) == 1


def test_distillation_errors_are_per_token_mses_of_every_learner_count_of_the_second_to_last_mlp(monkeypatch):
    torch.manual_seed(0)
    base = ViT(image=8, patch=4, dim=8, depth=3, heads=2).eval()
    model = A.acmize(base, n=4, warm_start=True).eval()  # all 4 learners give the MLP less its output bias
    starts = []
    monkeypatch.setattr(learners_analysis, "base_model", lambda profile, seed: (base, {}))
    settled = lambda profile, seed, warm: starts.append(warm) or (model, {})  # noqa: E731
    monkeypatch.setattr(learners_analysis, "settled_phase1", settled)
    monkeypatch.setattr(learners_analysis, "test_set", lambda profile: (torch.rand(10, 1, 8, 8), torch.zeros(10)))
    errors, labels = learners_analysis.distillation_errors("smoke", images_=6, warm_start=True)
    assert starts == [True] and errors.shape == (6 * 5, 4) and labels.shape == (6 * 5,)  # 4 patches and the class
    assert ((2 <= labels) & (labels <= 4)).all() and (errors >= 0).all()
    bias_mse = lambda block: base.blocks[block].mlp.fc2.bias.pow(2).mean().item()  # noqa: E731
    assert errors[:, -1] == pytest.approx(torch.full((30,), bias_mse(1)), abs=1e-5)
    first, _ = learners_analysis.distillation_errors("smoke", module="blocks.0.mlp", images_=6)
    assert first[:, -1] == pytest.approx(torch.full((30,), bias_mse(0)), abs=1e-5)
    assert bias_mse(0) != pytest.approx(bias_mse(1), abs=1e-3)


def test_compute_maps_are_the_learners_run_per_patch_over_the_most_a_token_can_run():
    torch.manual_seed(0)
    model = A.acmize(ViT(image=8, patch=4, dim=8, depth=2, heads=2), n=4).eval()
    x = torch.rand(3, 1, 8, 8)
    for k, share in ((4, 1.0), (2, 0.5)):
        A.force_k(model, k)
        maps = spending_analysis.compute_maps(model, x)
        assert maps.shape == (3, 2, 2) and torch.allclose(maps, torch.full((3, 2, 2), share))
    A.force_k(model, None)
    assert torch.equal(spending_analysis.compute_maps(model, x), spending_analysis.spending(model, x)[0])


def test_content_patches_are_where_the_test_images_carry_ink():
    x, _ = phases.test_set("smoke")
    pixels = spending_analysis.content_patches("smoke", 32, threshold=0.99)  # one patch a pixel: full ink
    inkless = ~spending_analysis.content_patches("smoke", 32, threshold=0.0)
    assert pixels.shape == (len(x), 32, 32) and pixels.any() and inkless.any()
    assert x[:, 0][pixels].min() > 0.9 and x[:, 0][inkless].max() < 0.5  # bright ink on a darker background
    patches = spending_analysis.content_patches("smoke", 8)
    assert patches.shape == (len(x), 8, 8) and patches.dtype == torch.bool
    assert patches.flatten(1).any(1).all() and (~patches).flatten(1).any(1).all()  # every image: digit and background
    assert (spending_analysis.content_patches("smoke", 8, threshold=0.3) <= patches).all()
