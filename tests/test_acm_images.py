"""The digits image task and the small ViT (shared by ACM and Hyper-UT's vision target)."""
import pytest
import torch

from ponder.models.vit import ViT
from ponder.tasks import images


def test_split_is_fixed_disjoint_and_complete():
    idx = images.split_indices()
    train, test = set(idx["train"].tolist()), set(idx["test"].tolist())
    assert not train & test and len(train) + len(test) == 1797
    assert 0.19 < len(test) / 1797 < 0.21


def test_images_shapes_range_and_determinism():
    x, y = images.images("test", size=16, canvas=32)
    assert x.shape == (359, 1, 32, 32) and y.shape == (359,)
    assert x.min() >= 0 and x.max() <= 1
    assert torch.equal(x, images.images("test")[0])
    # every digit lies inside one 16x16 window: at least half the canvas is background
    assert ((x == 0).float().mean(dim=(1, 2, 3)) >= 0.5).all()


def test_sample_is_a_function_of_the_seed():
    a, b = images.sample(8, seed=3), images.sample(8, seed=3)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], images.sample(8, seed=4)[0])


@pytest.mark.parametrize("kind", images.CORRUPTIONS)
def test_corruption_grows_with_severity(kind):
    x, _ = images.images("test")
    x = x[:32]
    errors = [(images.corrupt(x, kind, s) - x).abs().mean().item() for s in range(6)]
    assert errors[0] == 0 and all(e2 >= e1 for e1, e2 in zip(errors[1:], errors[2:])) and errors[5] > 0


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="split"):
        images.images("val")
    with pytest.raises(ValueError, match="kind"):
        images.corrupt(torch.zeros(1, 1, 8, 8), "fog", 1)
    with pytest.raises(ValueError, match="severity"):
        images.corrupt(torch.zeros(1, 1, 8, 8), "blur", 6)
    with pytest.raises(ValueError, match="patch"):
        ViT(image=32, patch=5)


def test_vit_stages_compose_to_forward():
    torch.manual_seed(0)
    vit = ViT(image=32, patch=4, dim=32, depth=2, heads=2).eval()
    x = torch.rand(3, 1, 32, 32)
    h = vit.embed(x)
    assert h.shape == (3, vit.tokens, 32) and vit.tokens == 65
    for block in vit.blocks:
        h = block(h)
    logits, hidden = vit(x, return_hidden=True)
    assert logits.shape == (3, 10) and len(hidden) == 3
    torch.testing.assert_close(vit.classify(h), logits)
