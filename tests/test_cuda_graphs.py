"""The captured training step's CPU side (:mod:`ponder.runner.gpu.cuda_graphs`): ``capture=True`` changes
nothing off the GPU (also where parameters are held), learning rates as tensors. The capture itself
is tested on CUDA (tests/test_gpu.py)."""

import pytest
import torch
from test_runs import CONFIG, batches, loss_fn, make_model

from ponder.runner.gpu.cuda_graphs import lr_on_device, set_lr
from ponder.runner.training import TrainConfig, make_optimizer, train


def trained(capture: bool, cfg: TrainConfig = CONFIG):
    torch.manual_seed(0)
    model = make_model()
    history = train(model, loss_fn, batches, cfg, capture=capture)
    return model, history


@pytest.mark.parametrize("hold", ["", "0."])
def test_capture_changes_nothing_on_the_cpu(hold):
    """Also for a run whose first layer is held for half of its steps (on a GPU, two captures)."""
    cfg = TrainConfig(**{**CONFIG.as_dict(), "hold": hold, "hold_for": 0.5 if hold else 0.0})
    (plain, plain_history), (captured, captured_history) = trained(False, cfg), trained(True, cfg)
    assert captured_history == plain_history
    for a, b in zip(plain.state_dict().values(), captured.state_dict().values()):
        assert torch.equal(a, b)


def test_learning_rates_on_the_device_are_set_in_place():
    optimizer = make_optimizer(make_model(), CONFIG)
    set_lr(optimizer, 0.5)
    assert [g["lr"] for g in optimizer.param_groups] == [0.5, 0.5]
    lr_on_device(optimizer)
    tensors = [g["lr"] for g in optimizer.param_groups]
    assert all(torch.is_tensor(t) and t.item() == 0.5 for t in tensors)
    set_lr(optimizer, 0.25)
    assert all(g["lr"] is t and t.item() == 0.25 for g, t in zip(optimizer.param_groups, tensors))
