"""The digits image task and the small ViT (shared by ACM and Hyper-UT's vision target)."""

import hashlib

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


def patches(x: torch.Tensor, side: int = 4) -> torch.Tensor:
    """``[n, 1, H, W] -> [n, H/side, W/side, side²]``: the ViT's patches."""
    return x[:, 0].unfold(1, side, side).unfold(2, side, side).flatten(-2)


def constant_share(x: torch.Tensor) -> float:
    """Fraction of 4×4 patches whose pixels are all equal (free to skip for token halting)."""
    p = patches(x)
    return ((p.amax(-1) - p.amin(-1)) == 0).float().mean().item()


def test_textured_scene_has_no_constant_patch_and_its_ink_is_the_digit():
    x, y = images.images("test", scene="textured")
    plain, plain_y = images.images("test")
    ink = images.content("test", scene="textured")
    assert torch.equal(y, plain_y) and x.shape == plain.shape == ink.shape
    assert constant_share(plain) > 0.6 and constant_share(x) == 0
    assert x.min() >= 0 and x.max() <= 1 and ink.min() >= 0 and ink.max() <= 1
    # the digit is brighter than the texture around it: where the ink is solid, the image is bright
    solid = ink > 0.9
    assert x[solid].mean() > 0.9 and x[ink == 0].mean() < 0.4
    assert torch.equal(images.content("test"), plain)  # plain scene: the image is its ink


def test_copies_render_each_test_digit_again_differently():
    x, y = images.images("test", scene="textured", copies=3)
    n = len(images.split_indices()["test"])
    assert x.shape[0] == 3 * n and torch.equal(y, images.images("test")[1].repeat(3))
    assert not torch.equal(x[:n], x[n : 2 * n]) and torch.equal(images.images("test", scene="textured", copies=3)[0], x)
    with pytest.raises(ValueError, match="copies"):
        images.images("test", copies=0)
    with pytest.raises(ValueError, match="scene"):
        images.sample(2, seed=0, scene="snow")


# sha256 of images("test", size=8, canvas=16, scene="textured", copies=2) and of sample(16, seed=3, ...):
# the bytes pinned
PINNED_TEXTURED = {
    "test": "342c79dc6cd7e3b1d10cf55790f35adbb73bee01a2232a63d7bf9b13aaec708e",
    "sample": "1b8d9b72073fb57d74bcabf5ac8adbad23796444b45fad0f3966eba60d568b4c",
}


@pytest.mark.pinned_bits
def test_textured_data_are_byte_identical():
    x, y = images.images("test", size=8, canvas=16, scene="textured", copies=2)
    xs, ys = images.sample(16, seed=3, size=8, canvas=16, scene="textured")
    digest = lambda *ts: hashlib.sha256(b"".join(t.numpy().tobytes() for t in ts)).hexdigest()  # noqa: E731
    assert {"test": digest(x, y), "sample": digest(xs, ys)} == PINNED_TEXTURED


def test_a_scene_of_ones_own_draws_as_its_named_twin_and_each_knob_counts():
    """A :class:`images.Scene` with the textured knobs gives the textured bytes; with none, the plain ones;
    changing one knob changes the images; knobs outside [0, 1] are refused."""
    own = images.Scene(jitter=0.25, texture=0.3, noise=0.03)
    assert torch.equal(
        images.images("test", size=8, canvas=16, scene=own, copies=2)[0],
        images.images("test", size=8, canvas=16, scene="textured", copies=2)[0],
    )
    assert torch.equal(images.sample(16, seed=3, scene=own)[0], images.sample(16, seed=3, scene="textured")[0])
    assert torch.equal(images.images("test", scene=images.Scene())[0], images.images("test")[0])
    for knob in ("jitter", "texture", "noise"):
        changed = images.Scene(**{**vars(own), knob: 0.6})
        assert not torch.equal(images.sample(16, seed=3, scene=changed)[0], images.sample(16, seed=3, scene=own)[0])
    for bad in (dict(noise=-0.1), dict(texture=1.5), dict(jitter=True)):
        with pytest.raises(ValueError, match=next(iter(bad))):
            images.Scene(**bad)


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
