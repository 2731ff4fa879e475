"""``ponder.models.dropout``: a mask drawn the same way on every CPU vendor, equal to ATen's own
dropout where ATen does not take MKL (every non-Intel CPU)."""

import pathlib

import pytest
import torch
import torch.nn.functional as F

from ponder.models.dropout import Dropout, dropout
from ponder.models.transformer import attend

INTEL = "GenuineIntel" in pathlib.Path("/proc/cpuinfo").read_text() if pathlib.Path("/proc/cpuinfo").exists() else None


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_the_mask_is_a_float64_uniform_draw_below_the_keep_probability(p):
    x = torch.randn(3, 5, 7)
    torch.manual_seed(1)
    y = dropout(x, p)
    torch.manual_seed(1)
    keep = torch.rand(x.shape, dtype=torch.float64) < 1 - p
    assert torch.equal(y == 0, ~keep | (x == 0))
    torch.testing.assert_close(y[keep], x[keep] / (1 - p), rtol=1e-6, atol=0)


@pytest.mark.skipif(
    INTEL is not False, reason="ATen takes MKL's generator for dropout on Intel CPUs (or the vendor is unknown)"
)
@pytest.mark.parametrize("p", [0.1, 0.3])
def test_equals_atens_dropout_and_its_generator_state_off_intel(p):
    x = torch.randn(7, 33, 65)
    torch.manual_seed(0)
    ours, ours_state = dropout(x, p), torch.get_rng_state()
    torch.manual_seed(0)
    atens, atens_state = F.dropout(x, p, training=True), torch.get_rng_state()
    assert torch.equal(ours, atens) and torch.equal(ours_state, atens_state)


@pytest.mark.pinned_bits
def test_the_same_bits_on_every_vendor():
    """The mask of seed 0 hashed: recorded on AMD, and ``torch.rand``'s CPU kernel has no vendor path."""
    import hashlib

    torch.manual_seed(0)
    y = dropout(torch.ones(64, 64), 0.25)
    assert hashlib.sha256(y.numpy().tobytes()).hexdigest()[:16] == "646ec32b44b18214"


def test_off_in_evaluation_and_refuses_a_bad_p():
    x = torch.randn(4, 4)
    module = Dropout(0.5).eval()
    assert module(x) is x and dropout(x, 0.0) is x
    for p in (-0.1, 1.0):
        with pytest.raises(ValueError, match="must lie in"):
            dropout(x, p)
        with pytest.raises(ValueError, match="must lie in"):
            Dropout(p)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_with_dropout_on_the_cpu_draws_its_mask_with_ponders_dropout(causal):
    """With dropout, ``attend`` is ``explicit_attention``: the softmax of the masked scores, dropped by
    :func:`dropout`; without dropout it equals the fused kernel with the same mask."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 2, 20, 8, generator=g) for _ in range(3))
    mask = None if causal else torch.rand(20, 20, generator=g) > 0.3
    torch.manual_seed(3)
    out = attend(q, k, v, mask, causal, dropout=0.2)
    scores = q @ k.transpose(-2, -1) / 8**0.5
    allowed = torch.ones(20, 20, dtype=torch.bool).tril() if causal else mask
    torch.manual_seed(3)
    expected = dropout(scores.masked_fill(~allowed, float("-inf")).softmax(-1), 0.2) @ v
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
    fused = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    torch.testing.assert_close(attend(q, k, v, mask, causal), fused, rtol=1e-5, atol=1e-6)
