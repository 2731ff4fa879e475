"""Where a step's time goes (``python -m ponder.bench kernels``): the profiler's operators, ranked."""
import torch

from ponder.bench import kernels


def test_the_ranked_operators_are_the_steps_own_and_their_shares_add_up():
    a, b = torch.randn(256, 256), torch.randn(256, 256)
    found = kernels.profiled(lambda: (a @ b).relu_().sum(), top=2)
    top = found["top"]
    assert [t["op"] for t in top][0] == "aten::mm" and len(top) == 2 and top[0]["self_s"] >= top[1]["self_s"]
    assert top[0]["calls"] == 1 and "256, 256" in top[0]["shapes"]
    assert 0 < sum(t["share"] for t in top) <= 1 + 1e-9 and 0 < found["device_s"] and 0 < found["wall_s"]


def test_every_family_and_the_acm_layer_make_one_step():
    steps = kernels.training_steps("smoke")
    assert set(steps) == set(kernels.train.families("smoke"))
    for name, step in steps.items():
        assert torch.isfinite(step()), name
    with torch.inference_mode():
        layers = kernels.acm_layers()
        assert len(layers) == 1 + len(kernels.acm.MIXES)
        dense = layers["ACM layer: dense MLP"]()
        for name, forward in layers.items():
            out = forward()
            assert (out if torch.is_tensor(out) else out[1]).shape == dense.shape, name
