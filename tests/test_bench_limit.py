"""``python -m ponder.bench.limit``: a step's phases timed, its forward and backward split by a profile."""

import torch

from ponder.bench import limit


def tiny():
    """A two-layer network, its batches and its loss: products, an elementwise activation, a reduction."""
    make = lambda: torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 8))  # noqa: E731
    batches = lambda step: (torch.randn(128, 64, generator=torch.Generator().manual_seed(step)),)  # noqa: E731
    return make, batches, lambda model, batch: model(batch[0]).square().mean()


def test_every_phase_of_a_step_is_timed_and_the_model_trained():
    seconds, (model, loss_fn, batch) = limit.phases(*tiny(), steps=3, warmup=1)
    assert set(seconds) == {"data", "forward", "backward", "optimizer"} and all(s > 0 for s in seconds.values())
    torch.manual_seed(0)
    assert not torch.equal(model[0].weight, tiny()[0]()[0].weight)  # four AdamW steps moved it


def test_the_profile_splits_the_passes_into_products_other_kernels_and_the_rest():
    make, batches, loss_fn = tiny()
    shares, top = limit.split(make(), loss_fn, batches(0), steps=3)
    assert list(shares) == ["products", "other kernels", "Python and dispatch"]
    assert abs(sum(shares.values()) - 1) < 1e-9 and shares["products"] > 0 and shares["other kernels"] > 0
    assert {"aten::addmm", "aten::mm"} & set(top) and len(top) <= limit.TOP
    assert not any(op in limit.PRODUCTS for op in top if op not in ("aten::addmm", "aten::mm", "aten::bmm"))


def test_an_operator_inside_a_product_is_counted_with_it():
    class Event:
        def __init__(self, name, parent=None):
            self.name, self.cpu_parent = name, parent

    product = Event("aten::addmm")
    assert limit.under_products(Event("aten::copy_", Event("aten::empty", product)))
    assert not limit.under_products(Event("aten::copy_", Event("aten::gelu")))
