"""Hyper-UT with the whole block generated (``ponder.models.hyper_block``): equivalences, shapes, gradients, ACT."""

import pytest
import torch

from ponder.models.classifier import ACTDepth, FixedDepth
from ponder.models.hyper_block import ATTENTION, STEP, GeneratedLinear, HyperBlockCore
from ponder.models.transformer import Block

DIM, HEADS, STEPS, POOL, CODE = 16, 2, 4, 4, 8
TOLERANCE = dict(atol=1e-6, rtol=1e-6)


def states(batch=5, tokens=9, seed=0):
    return torch.randn(batch, tokens, DIM, generator=torch.Generator().manual_seed(seed))


def block_of_entry(core: HyperBlockCore, entry: int) -> Block:
    """A plain ``Block`` with the core's norms and pool entry ``entry``'s generated weights."""
    plain = Block(DIM, HEADS)
    plain.norm1.load_state_dict(core.norm1.state_dict())
    plain.norm2.load_state_dict(core.norm2.state_dict())
    linears = {name: getattr(plain.attn, name) for name in ATTENTION} | {"fc1": plain.mlp.fc1, "fc2": plain.mlp.fc2}
    with torch.no_grad():
        for name, (weight, bias) in core.weights(core.router.pool / core.router.code_norm).items():
            linears[name].weight.copy_(weight[entry].T)  # the core keeps W^T
            linears[name].bias.copy_(bias[entry])
    return plain


def test_pool_of_one_equals_a_shared_block_carrying_its_weights():
    torch.manual_seed(0)
    core = HyperBlockCore(DIM, HEADS, STEPS, pool_size=1, code_dim=CODE)
    plain = block_of_entry(core, 0)
    h = states()
    for t in range(STEPS):
        torch.testing.assert_close(core.step(h, t), plain(h + core.step_embedding.weight[t]), **TOLERANCE)
        torch.testing.assert_close(core.last_routing, torch.ones(5, 1))


@pytest.mark.parametrize("entry", range(POOL))
def test_one_hot_routing_runs_the_block_of_that_entry(entry, monkeypatch):
    torch.manual_seed(0)
    core = HyperBlockCore(DIM, HEADS, STEPS, pool_size=POOL, code_dim=CODE)
    one_hot = torch.eye(POOL)[entry].expand(5, -1)
    monkeypatch.setattr(
        core.router, "forward", lambda h, step_vector: (one_hot, one_hot @ core.router.pool / core.router.code_norm)
    )
    h = states()
    torch.testing.assert_close(
        core.step(h, 1), block_of_entry(core, entry)(h + core.step_embedding.weight[1]), **TOLERANCE
    )
    torch.testing.assert_close(core.last_routing, one_hot)


def test_generated_weights_are_the_routing_mix_of_the_entries_weights():
    torch.manual_seed(0)
    core = HyperBlockCore(DIM, HEADS, STEPS, pool_size=POOL, code_dim=CODE)
    alpha = torch.softmax(torch.randn(6, POOL), dim=-1)
    mixed, entries = core.weights(alpha @ core.router.pool), core.weights(core.router.pool)
    for name, (weight, bias) in mixed.items():
        entry_weight, entry_bias = entries[name]
        torch.testing.assert_close(weight, torch.einsum("bn,n...->b...", alpha, entry_weight))
        torch.testing.assert_close(bias, alpha @ entry_bias)
    assert mixed["fc1"][0].shape == (6, DIM, 4 * DIM) and mixed["fc2"][1].shape == (6, DIM)
    assert not torch.allclose(entries["q_proj"][0][0], entries["q_proj"][0][1])  # the entries differ from the start


@pytest.mark.parametrize("summary", ["mean", "cls"])
def test_step_keeps_shapes_and_routing_is_a_distribution_per_example(summary):
    torch.manual_seed(0)
    core = HyperBlockCore(DIM, HEADS, STEPS, pool_size=POOL, code_dim=CODE, summary=summary)
    for batch in (1, 3, 7):
        h = states(batch=batch)
        assert core.step(h, 0).shape == h.shape
        assert core.last_routing.shape == (batch, POOL)
        torch.testing.assert_close(core.last_routing.sum(-1), torch.ones(batch))
    assert not torch.allclose(core.last_routing[0], core.last_routing[1])


def test_gradients_reach_every_pool_entry_generator_and_the_router():
    torch.manual_seed(0)
    core = HyperBlockCore(DIM, HEADS, STEPS, pool_size=POOL, code_dim=CODE)
    FixedDepth()(core, states()).state.square().mean().backward()
    for name, parameter in core.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name
    assert (core.router.pool.grad.abs().sum(-1) > 0).all()  # every entry's embedding


def test_act_runs_it_compacted_on_subsets_as_it_does_masked():
    torch.manual_seed(0)
    core = HyperBlockCore(DIM, HEADS, STEPS, pool_size=POOL, code_dim=CODE, spread=1.0)  # entries far apart
    h = states(batch=16)
    subset = torch.tensor([11, 0, 3])  # what compaction runs a step on
    torch.testing.assert_close(core.step(h[subset], 2), core.step(h, 2)[subset], **TOLERANCE)
    runs = {}
    for compact in (False, True):
        torch.manual_seed(1)  # the same halting unit for both
        depth = ACTDepth(DIM, bias=1.0, compact=compact)
        torch.nn.init.normal_(depth.halting.linear.weight, std=0.5)
        runs[compact] = depth(core, h)
    assert runs[True].steps.unique().numel() > 1  # the examples really halt at different steps
    for field in ("state", "steps", "ponder", "halting"):
        torch.testing.assert_close(getattr(runs[True], field), getattr(runs[False], field))
    torch.testing.assert_close(runs[True].halting.sum(-1), torch.ones(16))


def test_parameter_count_of_the_docstring():
    core = HyperBlockCore(32, 4, STEPS, pool_size=16, code_dim=16)
    assert sum(p.numel() for p in core.generators.parameters()) == 17 * 12_576
    assert sum(p.numel() for p in core.router.parameters()) == 16 * 16 + (64 * 16 + 16) + 16 * 16


def test_bad_parameters_raise_naming_them():
    with pytest.raises(ValueError, match="summary"):
        HyperBlockCore(DIM, HEADS, STEPS, summary="max")
    with pytest.raises(ValueError, match="pool_size"):
        HyperBlockCore(DIM, HEADS, STEPS, pool_size=0)
    with pytest.raises(ValueError, match="heads"):
        HyperBlockCore(DIM, 3, STEPS)
    with pytest.raises(ValueError, match="spread"):
        HyperBlockCore(DIM, HEADS, STEPS, spread=-0.1)


def shared_block(core: HyperBlockCore) -> Block:
    """A plain ``Block`` with the core's norms and its shared base weights ``W^0, b^0``."""
    plain = Block(DIM, HEADS)
    plain.norm1.load_state_dict(core.norm1.state_dict())
    plain.norm2.load_state_dict(core.norm2.state_dict())
    linears = {name: getattr(plain.attn, name) for name in ATTENTION} | {"fc1": plain.mlp.fc1, "fc2": plain.mlp.fc2}
    with torch.no_grad():
        for name, generator in core.generators.items():
            weight, bias = generator.shared()
            linears[name].weight.copy_(weight)
            linears[name].bias.copy_(bias)
    return plain


def test_at_spread_zero_it_starts_as_the_ut_whatever_the_routing():
    torch.manual_seed(0)
    core = HyperBlockCore(DIM, HEADS, STEPS, pool_size=POOL, code_dim=CODE, spread=0.0)
    plain, h = shared_block(core), states()
    for t in range(STEPS):
        torch.testing.assert_close(core.step(h, t), plain(h + core.step_embedding.weight[t]), **TOLERANCE)
    assert not torch.allclose(core.last_routing[0], core.last_routing[1])  # the routing differs, the block does not


def test_the_default_spread_keeps_every_entry_near_the_shared_block():
    torch.manual_seed(0)
    core = HyperBlockCore(32, 4, STEPS, pool_size=16, code_dim=16)
    entries = core.weights(core.router.pool / core.router.code_norm)
    for name, generator in core.generators.items():
        delta = entries[name][0] - generator.shared()[0].T  # [N, in, out]
        ratio = (delta.std() / generator.shared()[0].std()).item()
        assert 0.07 < ratio < 0.13, (name, ratio)  # spread 0.1 of the nn.Linear init's scale


def test_without_the_step_the_router_routes_a_state_alike_at_every_step():
    torch.manual_seed(0)
    core = HyperBlockCore(DIM, HEADS, STEPS, pool_size=POOL, code_dim=CODE, router_step=False)
    h = states()
    core.step(h, 0)
    first = core.last_routing
    core.step(h, 3)
    torch.testing.assert_close(core.last_routing, first)


def test_state_saves_and_loads():
    from safetensors.torch import load_file, save_file

    path = "/tmp/test_hyper_block.safetensors"
    save_file(HyperBlockCore(DIM, HEADS, STEPS).state_dict(), path)  # fails if two names share one tensor
    HyperBlockCore(DIM, HEADS, STEPS).load_state_dict(load_file(path))


def test_a_generated_weight_takes_half_of_each_step_of_its_two_parameters():
    """``W(z) = STEP (W' + G' z)``: the function of ``W^0 + G z`` with ``W' = W^0 / STEP``, the same bits at
    initialisation, and one AdamW step (every parameter moves by about lr) moves ``W(z)`` by about lr, as a step
    moves a shared weight, not by 2 lr."""
    torch.manual_seed(0)
    generated = GeneratedLinear(CODE, DIM, 3 * DIM, spread=0.1, code_norm=1.0)
    z = torch.rand(4, CODE)
    z = z / z.sum(dim=1, keepdim=True)  # a code of L1 norm 1, as the normalised code's is about
    weight_t, bias = generated(z)
    base_weight, base_bias = generated.shared()
    torch.testing.assert_close(
        weight_t, base_weight.T + STEP * (z @ generated.weight_generator.flatten(1)).view_as(weight_t), rtol=0, atol=0
    )
    torch.testing.assert_close(bias, base_bias + STEP * z @ generated.bias_generator, rtol=0, atol=0)
    optimizer = torch.optim.AdamW(generated.parameters(), lr=1e-3, weight_decay=0.0)
    (generated(z)[0].sum() + generated(z)[1].sum()).backward()
    optimizer.step()
    moved = (generated(z)[0] - weight_t).abs().mean().item()
    assert 0.99e-3 < moved < 1.01e-3, moved  # W^0's lr and G z's lr, each at STEP
