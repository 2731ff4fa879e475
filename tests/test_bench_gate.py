"""The gate benchmark times two ways of computing the same thing."""

import torch

from ponder.bench import gate
from ponder.models import acm
from ponder.models.acmize import acmize
from ponder.models.vit import ViT


def test_both_softmaxes_give_the_same_phase3_gradients():
    torch.manual_seed(0)
    model = acmize(ViT(image=32, patch=4, dim=16, depth=1, heads=2), 4, 4).train()
    x, y = torch.rand(4, 1, 32, 32), torch.randint(0, 10, (4,))
    grads = []
    for softmax in (gate.last_dim_softmax, acm.softmax_choices):
        model.zero_grad()
        torch.manual_seed(1)  # the same Gumbel noise
        gate.phase3_step(model, x, y, softmax)
        grads.append([p.grad.clone() for p in model.parameters()])
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)
    assert acm.softmax_choices is not gate.last_dim_softmax  # the patch is undone


def test_measure_reports_both_ratios_per_round():
    result = gate.measure(repeats=2)
    for case in ("softmax", "phase-III step"):
        assert result[f"{case}: leading / last"] > 0 and len(result[f"{case}: per-round ratios"]) == 2
