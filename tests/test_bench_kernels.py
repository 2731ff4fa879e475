"""Where a step's time goes (``python -m ponder.bench kernels``): the profiler's operators, ranked."""

import pytest
import torch

from ponder.bench import kernels


def test_the_ranked_operators_are_the_steps_own_and_their_shares_add_up():
    a, b = torch.randn(256, 256), torch.randn(256, 256)
    step = lambda: (a @ b).relu_().sum()  # noqa: E731
    every = kernels.profiled(step, top=100)["top"]  # which op takes longest depends on the machine's load: not asserted
    assert [t["self_s"] for t in every] == sorted((t["self_s"] for t in every), reverse=True)
    assert sum(t["share"] for t in every) == pytest.approx(1.0)  # all the operators: their shares are the whole
    mm = next(t for t in every if t["op"] == "aten::mm")
    assert mm["calls"] == 1 and "256, 256" in mm["shapes"] and mm["self_s"] > 0
    found = kernels.profiled(step, top=2)
    assert len(found["top"]) == 2 and 0 < found["device_s"] and 0 < found["wall_s"]


def test_every_family_and_the_acm_layer_make_one_step():
    steps = kernels.training_steps("smoke")
    assert set(steps) == set(kernels.families("smoke"))
    for name, step in steps.items():
        assert torch.isfinite(step()), name
    with torch.inference_mode():
        layers = kernels.acm_layers()
        assert len(layers) == 1 + len(kernels.acm.MIXES)
        dense = layers["ACM layer: dense MLP"]()
        for name, forward in layers.items():
            out = forward()
            assert (out if torch.is_tensor(out) else out[1]).shape == dense.shape, name
