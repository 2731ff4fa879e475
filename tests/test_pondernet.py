"""PonderNet (ponder.models.pondernet): halting distribution, prior, KL direction, losses, sampling."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from ponder.models.act import HaltingUnit
from ponder.models.pondernet import (
    expected_steps,
    kl_to_prior,
    log_geometric_prior,
    log_halting_distribution,
    reconstruction_loss,
    sample_halting,
    unroll,
)
from ponder.models.recurrent import RecurrentPonderer


def test_halting_distribution_matches_the_product_formula():
    logits = torch.randn(5, 6)
    lam = torch.sigmoid(logits)
    lam[:, -1] = 1.0  # forced halt at the last step
    expected = torch.stack([lam[:, n] * torch.prod(1 - lam[:, :n], dim=1) for n in range(6)], dim=1)
    torch.testing.assert_close(log_halting_distribution(logits).exp(), expected)
    torch.testing.assert_close(expected.sum(1), torch.ones(5))


def test_halting_distribution_is_finite_when_saturated():
    log_p = log_halting_distribution(torch.tensor([[50.0, 50.0, -50.0], [-50.0, -50.0, -50.0]]))
    assert torch.isfinite(log_p).all()
    torch.testing.assert_close(log_p.exp().sum(1), torch.ones(2))
    assert log_p.exp()[1, -1] > 0.999  # never halting before: all mass on the forced last step


def test_prior_is_truncated_geometric_and_renormalised():
    lambda_p, steps = 0.2, 5
    prior = log_geometric_prior(lambda_p, steps).exp()
    raw = torch.tensor([lambda_p * (1 - lambda_p) ** n for n in range(steps)])
    torch.testing.assert_close(prior.sum(), torch.tensor(1.0))
    torch.testing.assert_close(prior, raw / raw.sum())
    assert raw.sum() < 0.7  # without renormalisation the truncated prior would lose a third


def test_kl_direction_is_p_to_prior():
    """KL(p || p_G) = sum p log(p / p_G); the reverse KL(p_G || p) is a different number here."""
    log_p = log_halting_distribution(torch.tensor([[3.0, 0.0, -1.0, 0.0]]))
    p, q = log_p.exp()[0], log_geometric_prior(0.3, 4).exp()
    forward = (p * (p / q).log()).sum()
    reverse = (q * (q / p).log()).sum()
    assert abs(forward - reverse) > 0.1
    torch.testing.assert_close(kl_to_prior(log_p, 0.3), forward)
    # what kl_div(p.log(), p_G) — the common slip — computes is the reverse
    torch.testing.assert_close(F.kl_div(p.log(), q, reduction="sum"), reverse)


def test_kl_is_zero_at_the_prior():
    lambda_p, steps = 0.25, 6
    prior = log_geometric_prior(lambda_p, steps).double().exp()
    left = 1 - torch.cumsum(prior, 0) + prior  # mass not yet halted before step n
    lam = (prior / left)[:-1]  # the conditional halting probabilities that give the prior
    logits = torch.cat([torch.log(lam / (1 - lam)), torch.zeros(1)]).float()[None]
    assert kl_to_prior(log_halting_distribution(logits), lambda_p).abs() < 1e-5
    constant = torch.full((1, steps), math.log(lambda_p / (1 - lambda_p)))  # not the renormalised prior
    assert kl_to_prior(log_halting_distribution(constant), lambda_p) > 0.01


def test_reconstruction_loss_weights_each_step_by_p():
    log_p = log_halting_distribution(torch.randn(3, 4))
    losses = torch.rand(3, 4)
    expected = sum((log_p[b].exp() * losses[b]).sum() for b in range(3)) / 3
    torch.testing.assert_close(reconstruction_loss(log_p, losses), expected)


def test_expected_steps():
    log_p = torch.tensor([[0.5, 0.5, 0.0]]).log()
    torch.testing.assert_close(expected_steps(log_p), torch.tensor([1.5]))


def test_bad_prior_parameters_are_named():
    with pytest.raises(ValueError, match="lambda_p"):
        log_geometric_prior(0.0, 4)
    with pytest.raises(ValueError, match="max_steps"):
        log_geometric_prior(0.5, 0)


def _halting(dim, seed=0):
    torch.manual_seed(seed)
    unit = HaltingUnit(dim, bias=-0.5)
    nn.init.normal_(unit.linear.weight, std=2.0)
    cell = nn.Linear(dim, dim)
    return unit, lambda s, n, index: torch.tanh(cell(s))


def test_unroll_shapes():
    unit, step = _halting(8)
    out = unroll(step, torch.randn(6, 3, 8), 5, unit)
    assert out.states.shape == (6, 5, 3, 8) and out.log_p.shape == (6, 5)
    torch.testing.assert_close(out.log_p.exp().sum(1), torch.ones(6))


def test_sampled_steps_follow_the_halting_distribution():
    unit, step = _halting(8)
    x = torch.randn(1, 8).expand(20_000, 8)  # one example, many draws
    p = unroll(step, x[:1], 6, unit).log_p.exp()[0]
    _, steps = sample_halting(step, x, 6, unit, generator=torch.Generator().manual_seed(0))
    freq = torch.bincount(steps - 1, minlength=6).float() / len(steps)
    assert (freq - p).abs().max() < 0.02


def test_sampling_compact_equals_masked():
    unit, step = _halting(8)
    x = torch.randn(128, 4, 8)
    a, steps_a = sample_halting(step, x, 8, unit, torch.Generator().manual_seed(3), compact=True)
    b, steps_b = sample_halting(step, x, 8, unit, torch.Generator().manual_seed(3), compact=False)
    assert steps_a.unique().numel() > 2
    assert torch.equal(steps_a, steps_b)
    torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)


def test_sampled_state_is_the_state_at_the_halting_step():
    unit, step = _halting(8)
    x = torch.randn(32, 8)
    state, steps = sample_halting(step, x, 6, unit, torch.Generator().manual_seed(1))
    states = unroll(step, x, 6, unit).states
    torch.testing.assert_close(state, states[torch.arange(32), steps - 1])


@pytest.mark.parametrize("halting", ["act", "pondernet"])
def test_recurrent_ponderer_runs_and_learns_a_step(halting):
    torch.manual_seed(0)
    model = RecurrentPonderer(dim=6, hidden=16, max_steps=4, halting=halting)
    x = torch.randn(10, 6)
    logits, steps = model.predict(x, generator=torch.Generator().manual_seed(0))
    assert logits.shape == (10,) and steps.shape == (10,) and steps.min() >= 1 and steps.max() <= 4
    loss = model.act(x)[0].sum() if halting == "act" else model.unroll(x)[0].sum()
    loss.backward()
    assert model.cell.weight_ih.grad.abs().sum() > 0


def test_recurrent_ponderer_rejects_unknown_halting():
    with pytest.raises(ValueError, match="halting"):
        RecurrentPonderer(dim=4, hidden=8, max_steps=3, halting="calm")


def test_ponder_classifier_on_a_universal_transformer():
    from ponder.models.classifier import Classifier, FixedDepth, SequenceEmbedding
    from ponder.models.pondernet import PonderClassifier
    from ponder.models.universal import UniversalCore

    torch.manual_seed(0)
    base = Classifier(SequenceEmbedding(10, 10, 16), UniversalCore(16, 2, 5), FixedDepth(), 16, classes=10)
    model = PonderClassifier(base, 16, halting_bias=-0.5).eval()
    nn.init.normal_(model.halting_unit.linear.weight, std=3.0)
    x = torch.randint(10, (32, 10))
    logits, log_p = model(x, all_steps=True)
    assert logits.shape == (32, 5, 10) and log_p.shape == (32, 5)
    compact = model(x)
    model.compact = False
    masked = model(x)
    assert torch.equal(compact.steps, masked.steps) and compact.steps.unique().numel() > 1
    torch.testing.assert_close(compact.logits, masked.logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(compact.logits, logits[torch.arange(32), compact.steps.long() - 1], atol=1e-5, rtol=1e-5)
