"""The attention kinds of the HYLA paper against their definitions, computed by plain loops."""

import math

import pytest
import torch

from ponder.models.attention import (
    KINDS,
    MultiHeadAttention,
    RelativePositionBias,
    normalise,
    recording,
    relative_bucket,
    rms_head,
)
from ponder.models.attention_transformer import CausalLM, InContextTransformer, lecun_normal_
from ponder.models.transformer import SelfAttention, attend, explicit_attention

DIM, HEADS, T, B = 12, 3, 5, 2


def make(kind: str, head_dim=None) -> MultiHeadAttention:
    torch.manual_seed(0)
    attn = MultiHeadAttention(DIM, HEADS, kind, head_dim=head_dim).double()
    for p in attn.parameters():  # non-zero biases everywhere, so they are tested too
        torch.nn.init.normal_(p, std=0.5)
    return attn


def head_slices(attn: MultiHeadAttention, x: torch.Tensor):
    """Per-head projections ``q[h], k[h], v[h]`` (``[B, T, d]``) and output matrices ``W_h^out``."""
    d = attn.head_dim
    q, k, v = attn.q_proj(x), attn.k_proj(x), attn.v_proj(x)
    cut = [slice(h * d, (h + 1) * d) for h in range(attn.heads)]
    return (
        [q[..., c] for c in cut],
        [k[..., c] for c in cut],
        [v[..., c] for c in cut],
        [attn.o_proj.weight[:, c] for c in cut],
    )


def loop_scores(attn, x, norm):
    """a[b][h][q][k] by loops: scaled dot product, then σ."""
    q, k, _, _ = head_slices(attn, x)
    d = attn.head_dim
    raw = torch.zeros(x.shape[0], attn.heads, T, T, dtype=x.dtype)
    for b in range(x.shape[0]):
        for h in range(attn.heads):
            for i in range(T):
                for j in range(T):
                    raw[b, h, i, j] = q[h][b, i] @ k[h][b, j] / math.sqrt(d)
    if norm == "softmax":
        return raw.softmax(-1)
    if norm == "rms_head":
        for b in range(x.shape[0]):
            for i in range(T):
                for j in range(T):
                    raw[b, :, i, j] = raw[b, :, i, j] / torch.sqrt((raw[b, :, i, j] ** 2).mean() + 1e-6)
    return raw


def loop_hyla(attn, x, relu=True):
    """Eq. 6–7: HYLA_q = Σ_k W'_{q,k} φ(W_{q,k} x_k), W = Σ_h a W_h^v (bias incl.), W' = Σ_h a W_h^out."""
    a = loop_scores(attn, x, KINDS[attn.kind][0])
    _, _, v, w_out = head_slices(attn, x)
    out = torch.zeros(x.shape[0], T, DIM, dtype=x.dtype)
    for b in range(x.shape[0]):
        for i in range(T):
            total = attn.o_proj.bias.clone()
            for j in range(T):
                hidden = sum(a[b, h, i, j] * v[h][b, j] for h in range(attn.heads))
                hidden = torch.relu(hidden) if relu else hidden
                total = total + sum(a[b, h, i, j] * w_out[h] @ hidden for h in range(attn.heads))
            out[b, i] = total
    return out


def loop_linear(attn, x):
    """MHA_q = Σ_k (Σ_h a_{h,q,k} W_h^out W_h^v) x_k with σ = identity (biases of v and out kept)."""
    a = loop_scores(attn, x, "none")
    _, _, v, w_out = head_slices(attn, x)
    out = torch.zeros(x.shape[0], T, DIM, dtype=x.dtype)
    for b in range(x.shape[0]):
        for i in range(T):
            out[b, i] = attn.o_proj.bias + sum(
                a[b, h, i, j] * w_out[h] @ v[h][b, j] for h in range(attn.heads) for j in range(T)
            )
    return out


@pytest.fixture
def x():
    return torch.randn(B, T, DIM, dtype=torch.double, generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("kind", ["hyla", "hyla_no_rmshead", "hyla_softmax"])
def test_hyla_equals_eq_6_7(kind, x):
    attn = make(kind)
    torch.testing.assert_close(attn(x), loop_hyla(attn, x))


@pytest.mark.parametrize("kind", ["hyla_no_relu", "hyla_no_relu_no_rmshead"])
def test_hyla_without_nonlinearity(kind, x):
    attn = make(kind)
    torch.testing.assert_close(attn(x), loop_hyla(attn, x, relu=False))


def test_hyla_with_head_dim_unlike_dim_over_heads(x):
    attn = make("hyla", head_dim=2)
    torch.testing.assert_close(attn(x), loop_hyla(attn, x))


def test_linear_attention_equals_definition(x):
    attn = make("linear")
    torch.testing.assert_close(attn(x), loop_linear(attn, x))


def test_linear_rmshead_scores(x):
    attn = make("linear_rmshead")
    torch.testing.assert_close(attn.scores(x), loop_scores(attn, x, "rms_head"))


def test_softmax_kind_equals_project_self_attention(x):
    attn = make("softmax")
    reference = SelfAttention(DIM, HEADS).double()
    shapes = {name: p.shape for name, p in reference.state_dict().items()}
    reference.load_state_dict(
        {name: p.reshape(shapes[name]) for name, p in attn.state_dict().items()}
    )  # per-head biases flat
    torch.testing.assert_close(attn(x), reference(x))
    torch.testing.assert_close(attn(x, causal=True), reference(x, causal=True))


@pytest.mark.parametrize("tokens,mask", [(13, None), (65, None), (64, "causal"), (33, "bool"), (40, "float")])
def test_explicit_attention_equals_the_fused_kernel(tokens, mask):
    """On the CPU attention takes the three-operation path: its outputs and gradients agree with
    ``F.scaled_dot_product_attention`` to float rounding (float32, unmasked, causal, a key mask, an added bias)."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(16, 4, tokens, 8, requires_grad=True) for _ in range(3))
    grad = torch.randn(16, 4, tokens, 8)
    causal = mask == "causal"
    mask = {"bool": torch.rand(16, 1, 1, tokens) > 0.2, "float": torch.randn(4, tokens, tokens)}.get(mask)
    if mask is not None and mask.dtype == torch.bool:
        mask[..., 0] = True  # every query sees a key
    results = []
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for out in (explicit_attention(q, k, v, mask, causal), sdpa(q, k, v, attn_mask=mask, is_causal=causal)):
        results.append((out, *torch.autograd.grad(out, (q, k, v), grad)))
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, atol=2e-6, rtol=1e-5)
    torch.testing.assert_close(attend(q, k, v, mask=mask, causal=causal), results[0][0], atol=0, rtol=0)


def test_hyla_has_no_more_parameters_than_softmax():
    def count(m):
        return sum(p.numel() for p in m.parameters())

    sizes = {kind: count(MultiHeadAttention(64, 16, kind)) for kind in KINDS}
    assert all(n == sizes["softmax"] for n in sizes.values()), sizes


def test_rmshead_makes_codes_unit_rms_over_heads():
    scores = torch.randn(3, 8, 6, 6, dtype=torch.double) * 5
    normed = rms_head(scores)
    torch.testing.assert_close(normed.pow(2).mean(dim=1), torch.ones(3, 6, 6, dtype=torch.double), atol=1e-6, rtol=0)
    # a positive rescaling of one pair's code leaves it unchanged
    scaled = scores.clone()
    scaled[0, :, 1, 2] *= 7
    torch.testing.assert_close(rms_head(scaled)[0, :, 1, 2], normed[0, :, 1, 2])


@pytest.mark.parametrize("kind", list(KINDS))
def test_causal_output_ignores_the_future(kind, x):
    attn = make(kind)
    changed = x.clone()
    changed[:, -1] += 1.0
    torch.testing.assert_close(attn(x, causal=True)[:, :-1], attn(changed, causal=True)[:, :-1])
    assert not torch.allclose(attn(x)[:, :-1], attn(changed)[:, :-1])


def test_causal_lm_shapes_and_masking():
    lm = CausalLM(vocab=20, length=9, dim=16, heads=4, depth=2, kind="hyla")
    tokens = torch.randint(20, (2, 9))
    logits = lm(tokens)
    assert logits.shape == (2, 9, 20)
    other = tokens.clone()
    other[:, -1] = (other[:, -1] + 1) % 20
    torch.testing.assert_close(lm(other)[:, :-1], logits[:, :-1])


def test_recording_reads_out_latent_codes_per_layer():
    model = InContextTransformer(in_dim=5, out_dim=3, length=7, dim=16, heads=4, depth=3, kind="hyla").eval()
    with recording(model) as layers:
        model(torch.randn(2, 7, 5))
        codes = [m.latent for m in layers]
    assert len(codes) == 3 and all(c.shape == (2, 4, 7, 7) for c in codes)
    torch.testing.assert_close(
        codes[0].pow(2).mean(1), torch.ones(2, 7, 7), atol=1e-2, rtol=0
    )  # ε matters for tiny codes
    assert all(m.latent is None and not m.record for m in layers)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="kind"):
        MultiHeadAttention(8, 2, "cosine")
    with pytest.raises(ValueError, match="heads=3"):
        MultiHeadAttention(8, 3)
    with pytest.raises(ValueError, match="score_dropout"):
        MultiHeadAttention(8, 2, score_dropout=1.5)


def test_score_dropout_drops_whole_codes_shared_by_batch_and_heads():
    attn = MultiHeadAttention(DIM, HEADS, "hyla", score_dropout=0.5).train()
    x = torch.randn(3, T, DIM)
    with recording(attn):
        attn(x)
        dropped = attn.latent == 0
    assert dropped.any() and not dropped.all()
    assert (dropped == dropped[:1, :1]).all()  # one (q, k) mask for every example and head
    attn.eval()
    torch.testing.assert_close(attn(x), attn(x))  # no dropout at evaluation


def test_relative_buckets_by_hand():
    """T5 unidirectional buckets, 8 buckets up to distance 16: four exact ones (0-3), then
    logarithmic ones (4-5 / 6-7 / 8-11 / 12 and beyond); keys after the query share bucket 0."""
    distance = torch.arange(-3, 21)
    expected = [0, 0, 0] + [0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6] + [7] * 9
    assert relative_bucket(distance, 8, 16).tolist() == expected


def test_relative_bias_shape_and_values():
    bias = RelativePositionBias(heads=2, buckets=3)
    with torch.no_grad():
        bias.table.copy_(torch.tensor([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]]))
    # buckets at T = 3: distance q - k = 0 or below -> 0, 1 -> 1, 2 -> 2
    expected = torch.tensor([[1.0, 1.0, 1.0], [2.0, 1.0, 1.0], [3.0, 2.0, 1.0]])
    torch.testing.assert_close(bias(3), torch.stack([expected, 10 * expected]))
    assert bias(3).shape == (2, 3, 3)


def test_relative_table_starts_as_flax_default_embedding_init():
    """Variance scaling with fan-in over the buckets of the ``[H, buckets]`` table: std 1/sqrt(buckets)."""
    torch.manual_seed(0)
    table = RelativePositionBias(heads=64, buckets=400).table
    assert abs(table.std().item() * math.sqrt(400) - 1) < 0.02 and abs(table.mean().item()) < 0.01


def test_fuzzy_logic_takes_128_buckets_at_every_length():
    """The official logic configuration: buckets = max distance = 128 whatever N; sraven: its length."""
    from ponder.models.attention_transformer import InContextTransformer
    from ponder.studies.hyla import experiments as hyla

    for length in (8, 32, 64):
        model = hyla.fuzzy_model(hyla.fuzzy_setup("cpu", length=length, relative_position=True))
        bias = model.blocks[0].attn.relative
        assert bias.table.shape[1] == 128 and bias(length).shape[-1] == length
        torch.testing.assert_close(
            bias(length),
            bias.table[:, relative_bucket(torch.arange(length)[:, None] - torch.arange(length)[None, :], 128, 128)],
        )
    s = hyla.sraven_setup("cpu", relative_position=True)
    assert hyla.sraven_model(s).blocks[0].attn.relative.table.shape[1] == 9 * s.k
    with pytest.raises(ValueError, match="at least the sequence length"):
        InContextTransformer(3, 1, length=40, relative_buckets=32)


@pytest.mark.parametrize("kind", ["hyla", "softmax"])
def test_relative_bias_is_added_before_the_normaliser(kind, x):
    attn = MultiHeadAttention(DIM, HEADS, kind, relative_buckets=T).double()
    torch.nn.init.normal_(attn.relative.table)
    q, k = attn.split(attn.q_proj(x)), attn.split(attn.k_proj(x))
    raw = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(attn.head_dim)
    torch.testing.assert_close(attn.scores(x), normalise(raw + attn.relative(T), attn.norm, False))
    assert attn.relative.table.shape == (HEADS, T)


def test_latent_code_dropout_in_training_only():
    torch.manual_seed(0)
    model = InContextTransformer(4, 3, length=T, dim=DIM, heads=HEADS, depth=2, kind="hyla")
    plain = InContextTransformer(4, 3, length=T, dim=DIM, heads=HEADS, depth=2, kind="hyla", score_dropout=0.0)
    plain.load_state_dict(model.state_dict())
    assert all(block.attn.score_dropout == 0.1 for block in model.blocks)  # the paper's default
    tokens = torch.randn(B, T, 4)
    model.eval(), plain.eval()
    torch.testing.assert_close(model(tokens), plain(tokens))
    model.train()
    assert not torch.allclose(model(tokens), plain(tokens))


def test_official_initialisation():
    torch.manual_seed(0)
    model = lecun_normal_(torch.nn.Sequential(torch.nn.Linear(400, 300), MultiHeadAttention(400, 4)))
    linear = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert all((m.bias == 0).all() for m in linear)
    weight = model[0].weight
    assert (
        abs(weight.std().item() - 400**-0.5) < 0.05 * 400**-0.5 and weight.abs().max() <= 2 * 400**-0.5 / 0.8796 + 1e-6
    )
    assert model[1].q_proj.bias.shape == (4, 100)  # per-head biases: 2-d, decayed like the official mask
