"""ACT halting (ponder.models.act): weights, remainder, forced last step, compaction."""

import pytest
import torch
from torch import nn

from ponder.bench.act import spread_halting
from ponder.models.act import HaltingUnit, act
from ponder.models.act_reference import act_one_by_one
from ponder.runner.training import TrainConfig, train
from ponder.studies.hyper_ut import cpvr as hyper_ut
from ponder.tasks import cpvr

# The key projection's bias adds q·b to every logit of a query, which softmax cancels: its gradient
# is zero but for float rounding, and AdamW's normalised step turns that rounding into moves of the
# learning rate's size. Two trainings equal to rounding agree on every other parameter, and their
# models compute the same function.
KEY_BIASES = ("k_proj.bias", "k_proj.base.bias", "k_proj.bias_generator")


def assert_trained_alike(a: nn.Module, b: nn.Module, x: torch.Tensor | None = None) -> None:
    """``a`` and ``b`` trained the same, to float rounding: every parameter but :data:`KEY_BIASES`
    (atol 1e-5, rtol 1e-4), and with C-PVR inputs ``x`` their logits on them."""
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        if not name.endswith(KEY_BIASES):
            assert torch.allclose(p, q, atol=1e-5, rtol=1e-4), name
    if x is None:
        return
    with torch.no_grad():
        assert torch.allclose(a(x).logits, b(x).logits, atol=1e-4, rtol=1e-4)


class Step(nn.Module):
    """A small row-independent step: ``s <- tanh(W s + b)`` per token, plus the step number."""

    def __init__(self, dim: int):
        super().__init__()
        self.linear = nn.Linear(dim, dim)

    def forward(self, state, n, index):
        return torch.tanh(self.linear(state) + 0.1 * n)


def setup(bias=0.0, dim=8, weight_scale=3.0, seed=0):
    torch.manual_seed(seed)
    unit = HaltingUnit(dim, bias=bias)
    nn.init.normal_(unit.linear.weight, std=weight_scale)  # examples halt at different steps
    return Step(dim), unit


@pytest.mark.parametrize("level", ["example", "token"])
@pytest.mark.parametrize("compact", [False, True])
def test_weights_sum_to_one_and_remainder_positive(level, compact):
    step, unit = setup()
    out = act(step, torch.randn(32, 5, 8), 6, unit, eps=0.01, level=level, compact=compact)
    torch.testing.assert_close(out.halting.sum(-1), torch.ones(out.halting.shape[:-1]))
    assert (out.halting >= 0).all()
    remainder = out.ponder - out.steps.float() if level == "example" else None
    if remainder is not None:
        assert (remainder > 0).all() and (remainder <= 1).all()
    assert out.steps.min() >= 1 and out.steps.max() <= 6
    assert out.state.shape == (32, 5, 8)


def test_weights_are_zero_after_the_halting_step():
    step, unit = setup()
    out = act(step, torch.randn(64, 4, 8), 8, unit)
    after = torch.arange(8)[None, :] >= out.steps[:, None]
    assert (out.halting[after] == 0).all() and (out.halting[~after] > 0).all()


def test_saturated_halting_uses_exactly_one_step():
    step, unit = setup(bias=30.0, weight_scale=0.0)
    x = torch.randn(16, 3, 8)
    out = act(step, x, 10, unit)
    assert (out.steps == 1).all()
    torch.testing.assert_close(out.state, step(x, 0, None))  # y = s^1 with weight 1
    assert torch.allclose(out.ponder, torch.full((16,), 2.0), atol=1e-6)  # N + R = 1 + (1 - 0)


def test_last_step_is_forced():
    step, unit = setup(bias=-30.0, weight_scale=0.0)  # p ~ 0: would never halt on its own
    out = act(step, torch.randn(8, 3, 8), 5, unit)
    assert (out.steps == 5).all()
    torch.testing.assert_close(out.halting[:, -1], torch.ones(8), atol=1e-6, rtol=0)
    torch.testing.assert_close(out.ponder, torch.full((8,), 6.0), atol=1e-6, rtol=0)


def test_output_is_the_halting_weighted_mix_of_states():
    step, unit = setup()
    x = torch.randn(16, 4, 8)
    out = act(step, x, 5, unit)
    states, s = [], x
    for n in range(5):
        s = step(s, n, None)
        states.append(s)
    mix = torch.einsum("bn,nbtd->btd", out.halting, torch.stack(states))
    torch.testing.assert_close(out.state, mix)


@pytest.mark.parametrize("compact", [False, True])
def test_the_batched_loop_is_the_equations_one_example_at_a_time(compact):
    step, unit = setup(bias=-4.0)
    x = torch.randn(32, 4, 8, requires_grad=True)
    batched, plain = act(step, x, 4, unit, compact=compact), act_one_by_one(step, x, 4, unit)
    assert batched.steps.unique().numel() > 2  # examples halt at different steps
    assert (act(step, x, 12, unit).steps > 4).any()  # and some are made to halt at the cap
    assert torch.equal(batched.steps, plain.steps)
    for got, expected in (
        (batched.state, plain.state),
        (batched.ponder, plain.ponder),
        (batched.halting, plain.halting),
    ):
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)
    grads = [torch.autograd.grad((out.state.square().sum() + out.ponder.sum()), x)[0] for out in (batched, plain)]
    torch.testing.assert_close(*grads, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("level", ["example", "token"])
def test_compact_equals_masked(level):
    step, unit = setup()
    x = torch.randn(64, 5, 8)
    masked = act(step, x, 8, unit, level=level, compact=False)
    compact = act(step, x, 8, unit, level=level, compact=True)
    assert masked.example_steps.unique().numel() > 2  # examples really halt at different steps
    torch.testing.assert_close(compact.state, masked.state, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(compact.ponder, masked.ponder, atol=1e-5, rtol=1e-5)
    assert torch.equal(compact.steps, masked.steps)
    torch.testing.assert_close(compact.halting, masked.halting, atol=1e-5, rtol=1e-5)


def test_compact_step_sees_only_active_examples_with_their_indices():
    step, unit = setup()
    seen = []

    def recording(state, n, index):
        assert state.shape[0] == index.numel()
        seen.append(index.clone())
        return step(state, n, index)

    out = act(recording, torch.randn(64, 4, 8), 8, unit, compact=True)
    for n, index in enumerate(seen):
        assert torch.equal(index, (out.steps > n).nonzero().squeeze(1))


def test_compact_gradients_equal_masked():
    step, unit = setup()
    x = torch.randn(16, 3, 8)
    grads = []
    for compact in (False, True):
        out = act(step, x, 6, unit, compact=compact)
        loss = out.state.square().mean() + 0.01 * out.ponder.mean()
        grads.append(torch.autograd.grad(loss, [*step.parameters(), *unit.parameters()]))
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("level", ["example", "token"])
def test_loop_without_host_reads_equals_the_loop_that_stops(level):
    """``host_sync=False`` (what a CUDA graph's capture gets): every step runs, the steps after the
    last halt add exact zeros, so outputs and gradients are bit for bit those of the loop that stops."""
    step, unit = setup()
    x = torch.randn(32, 4, 8)
    results = []
    for host_sync in (True, False):
        calls = []
        out = act(
            lambda s, n, index, calls=calls: calls.append(n) or step(s, n, index),
            x,
            12,
            unit,
            level=level,
            host_sync=host_sync,
        )
        loss = out.state.square().mean() + 0.01 * out.ponder.mean()
        results.append((out, len(calls), torch.autograd.grad(loss, [*step.parameters(), *unit.parameters()])))
    (stopping, stopped_after, stopping_grads), (every, ran, every_grads) = results
    assert (
        stopped_after == int(stopping.example_steps.max()) < 12 and ran == 12
    )  # the one loop stopped early, the other ran on
    for name in ("state", "ponder", "steps", "halting"):
        assert torch.equal(getattr(every, name), getattr(stopping, name)), name
    for a, b in zip(every_grads, stopping_grads):
        assert torch.equal(a, b)


@pytest.mark.parametrize("kind", hyper_ut.ACT_KINDS)
def test_compacted_training_step_equals_masked(kind):
    """A C-PVR model's training loss and every parameter's gradient are the same, to float
    rounding, whether ACT runs masked or compacted, while examples halt at different steps."""
    model_cfg = dict(hyper_ut.SIZES["smoke"]["model"], steps=6)
    x, _, label = cpvr.sample(32, 8, [1, 2, 3], seed=0)
    results = []
    for compact in (False, True):
        torch.manual_seed(0)
        model = hyper_ut.build(kind, 8, model_cfg)
        with torch.no_grad():
            spread_halting(model, x)  # examples halt at steps spread over 1..6
        model.depth.compact = compact
        loss = hyper_ut.loss_fn(model_cfg["tau"])(model, (x, None, label))
        results.append((model(x).steps, loss, torch.autograd.grad(loss, list(model.parameters()), allow_unused=True)))
    (steps, masked, masked_grads), (compact_steps, compacted, compacted_grads) = results
    assert steps.unique().numel() > 3 and torch.equal(steps, compact_steps)
    torch.testing.assert_close(compacted, masked, atol=1e-6, rtol=1e-6)
    for a, b in zip(compacted_grads, masked_grads):
        assert (a is None) == (b is None)
        if a is not None:
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_ponder_cost_gradient_pushes_towards_halting():
    step, unit = setup(bias=-2.0, weight_scale=0.0)
    out = act(step, torch.randn(8, 3, 8), 6, unit)
    (grad,) = torch.autograd.grad(out.ponder.mean(), unit.linear.bias)
    assert grad.item() < 0  # raising the bias (halting sooner) lowers N + R


def test_deep_start_bias_runs_more_steps():
    x = torch.randn(16, 3, 8)
    shallow = act(setup(bias=1.0, weight_scale=0.0)[0], x, 12, setup(bias=1.0, weight_scale=0.0)[1])
    step, deep_unit = setup(bias=-3.0, weight_scale=0.0)
    deep = act(step, x, 12, deep_unit)
    assert shallow.steps.float().mean() <= 2 and deep.steps.float().mean() >= 10


def test_works_on_flat_states():
    torch.manual_seed(0)
    unit = HaltingUnit(8, bias=0.0)
    nn.init.normal_(unit.linear.weight, std=3.0)
    cell = nn.Linear(8, 8)
    out = act(lambda s, n, i: torch.tanh(cell(s)), torch.randn(10, 8), 4, unit, compact=True)
    assert out.state.shape == (10, 8) and out.steps.shape == (10,)


def test_bad_arguments_are_named():
    step, unit = setup()
    x = torch.randn(2, 3, 8)
    with pytest.raises(ValueError, match="level"):
        act(step, x, 3, unit, level="batch")
    with pytest.raises(ValueError, match="max_steps"):
        act(step, x, 0, unit)
    with pytest.raises(ValueError, match="eps"):
        act(step, x, 3, unit, eps=1.5)
    with pytest.raises(ValueError, match="token"):
        act(step, torch.randn(2, 8), 3, unit, level="token")


@pytest.mark.parametrize("kind", hyper_ut.KINDS)
def test_key_biases_get_no_gradient(kind):
    """What :func:`assert_trained_alike` leaves out: the key biases' gradients are float rounding
    (below 1e-7 of the whole gradient's norm) in every C-PVR model."""
    torch.manual_seed(0)
    model = hyper_ut.build(kind, 8, dict(hyper_ut.SIZES["smoke"]["model"], steps=6))
    x, _, label = cpvr.sample(32, 8, [1, 2, 3], seed=0)
    hyper_ut.loss_fn(hyper_ut.SIZES["smoke"]["model"]["tau"])(model, (x, None, label)).backward()
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]))
    biases = {name: p.grad for name, p in model.named_parameters() if name.endswith(KEY_BIASES)}
    assert biases and all(g.abs().max() < 1e-7 * norm for g in biases.values())


@pytest.mark.parametrize("kind", hyper_ut.ACT_KINDS)
def test_compacted_training_equals_masked(kind):
    """30 steps of training, the halting unit held for the first 40 %, compacted and masked (what a
    captured step runs: tests/test_gpu.py compares the two on CUDA): the same losses and the same
    trained model, to float rounding."""
    model_cfg = dict(hyper_ut.SIZES["smoke"]["model"], steps=6)
    batches = lambda step: cpvr.sample(32, 8, [1, 2, 3], seed=step)  # noqa: E731
    cfg = TrainConfig(steps=30, batch_size=32, lr=3e-3, log_every=5, seed=0, hold="depth.halting", hold_for=0.4)
    trained = []
    for compact in (True, False):
        torch.manual_seed(0)
        model = hyper_ut.build(kind, 8, model_cfg)
        with torch.no_grad():
            spread_halting(model, batches(0)[0])  # examples halt at steps spread over 1..6
        model.depth.compact = compact
        trained.append((model, train(model, hyper_ut.loss_fn(model_cfg["tau"]), batches, cfg)))
    (compacted, compacted_history), (masked, masked_history) = trained
    assert [h["loss"] for h in compacted_history] == pytest.approx([h["loss"] for h in masked_history], rel=1e-5)
    masked.depth.compact = True
    assert_trained_alike(compacted, masked, batches(99)[0])
