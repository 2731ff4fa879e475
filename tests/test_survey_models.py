"""Early exit (ponder.models.calm) and Mixture-of-Depths routing (ponder.models.mod)."""

import math

import pytest
import torch

from ponder.models.calm import CALMClassifier, confidence, early_exit_loss, layer_weights
from ponder.models.classifier import Classifier, FixedDepth, LayerStack, SequenceEmbedding
from ponder.models.mod import MoDBlock, MoDStack, block_macs, capacity_tokens, mod_macs


def early_exit_model(seed=0, depth=4):
    torch.manual_seed(seed)
    classifier = Classifier(SequenceEmbedding(10, 10, 16), LayerStack(16, 2, depth), FixedDepth(), 16, classes=10)
    return CALMClassifier(classifier).eval()


def test_layer_weights_are_calm_weights():
    torch.testing.assert_close(layer_weights(4), torch.tensor([0.1, 0.2, 0.3, 0.4]))


def test_infinite_threshold_is_the_dense_classifier():
    model = early_exit_model()
    x = torch.randint(10, (8, 10))
    out = model.exit(x, threshold=math.inf)
    assert (out.steps == 4).all()
    dense = Classifier(model.embedding, model.core, FixedDepth(), 16, 10)
    dense.norm, dense.head = model.norm, model.head
    torch.testing.assert_close(out.logits, dense(x).logits)


def test_confidence_is_the_softmax_response():
    probabilities = torch.tensor([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    torch.testing.assert_close(confidence(probabilities.log()), torch.tensor([0.2, 0.7]))


def test_exit_layer_is_the_first_confident_layer():
    model = early_exit_model()
    x = torch.randint(10, (64, 10))
    every = model.all_layers(x)  # [B, L, C]
    conf = confidence(every)
    threshold = conf.median().item()
    out = model.exit(x, threshold=threshold)
    confident = conf >= threshold
    confident[:, -1] = True
    first = confident.float().argmax(dim=1) + 1
    assert torch.equal(out.steps, first)
    assert 1 < out.steps.unique().numel()  # a real mix of exits
    torch.testing.assert_close(out.logits, every[torch.arange(64), first - 1], atol=1e-5, rtol=1e-5)


def test_exit_compact_equals_masked():
    model = early_exit_model()
    x = torch.randint(10, (64, 10))
    threshold = confidence(model.all_layers(x)).median().item()
    a, b = model.exit(x, threshold, compact=True), model.exit(x, threshold, compact=False)
    assert torch.equal(a.steps, b.steps)
    torch.testing.assert_close(a.logits, b.logits, atol=1e-5, rtol=1e-5)


def test_early_exit_loss_trains_every_layer():
    model = early_exit_model().train()
    x, label = torch.randint(10, (8, 10)), torch.randint(10, (8,))
    logits = model(x, all_layers=True)
    expected = sum(
        w * torch.nn.functional.cross_entropy(logits[:, layer], label) for layer, w in enumerate(layer_weights(4))
    )
    loss = early_exit_loss(logits, label)
    torch.testing.assert_close(loss, expected)
    loss.backward()
    assert all(b.mlp.fc2.weight.grad.abs().sum() > 0 for b in model.core.blocks)


# -- Mixture-of-Depths ---------------------------------------------------------------------
def test_capacity_tokens():
    assert capacity_tokens(0.25, 12) == 3 and capacity_tokens(0.5, 13) == 7 and capacity_tokens(0.01, 5) == 1
    assert capacity_tokens(1.0, 9) == 9
    with pytest.raises(ValueError, match="capacity"):
        capacity_tokens(0.0, 4)
    with pytest.raises(ValueError, match="routing"):
        MoDBlock(8, 2, 0.5, routing="random")


@pytest.mark.parametrize("capacity", [0.125, 0.25, 0.5, 1.0])
def test_topk_respects_capacity_and_leaves_the_rest_unchanged(capacity):
    torch.manual_seed(0)
    block = MoDBlock(16, 2, capacity)
    x = torch.randn(5, 12, 16)
    y = block(x)
    k = capacity_tokens(capacity, 12)
    assert (block.last_chosen.sum(1) == k).all()
    untouched = ~block.last_chosen
    torch.testing.assert_close(y[untouched], x[untouched])
    assert not torch.allclose(y[block.last_chosen], x[block.last_chosen])


def test_topk_processes_chosen_tokens_among_themselves():
    torch.manual_seed(0)
    block = MoDBlock(16, 2, 0.5)
    x = torch.randn(1, 8, 16)
    y = block(x)
    index = block.last_chosen[0].nonzero().squeeze(1)
    picked = x[:, index]
    gate = torch.sigmoid(block.last_scores[0, index])[None, :, None]
    torch.testing.assert_close(y[:, index], picked + gate * (block.block(picked) - picked))


def test_capacity_one_is_a_gated_dense_block():
    torch.manual_seed(0)
    block = MoDBlock(16, 2, 1.0)
    x = torch.randn(3, 6, 16)
    gate = torch.sigmoid(block.router(x))
    torch.testing.assert_close(block(x), x + gate * (block.block(x) - x))


def test_keep_first_always_processes_position_zero():
    torch.manual_seed(0)
    block = MoDBlock(16, 2, 0.125, keep_first=True)
    with torch.no_grad():
        block.router.bias.fill_(0.0)
    x = torch.randn(20, 8, 16)
    block(x)
    assert block.last_chosen[:, 0].all() and (block.last_chosen.sum(1) == 1).all()


def test_threshold_routing_is_causal():
    """With threshold routing and causal attention, changing a later token leaves earlier outputs alone."""
    torch.manual_seed(0)
    block = MoDBlock(16, 2, 0.5, routing="threshold")
    x = torch.randn(4, 10, 16)
    y = block(x, causal=True)
    x2 = x.clone()
    x2[:, 6:] = torch.randn(4, 4, 16) * 3
    y2 = block(x2, causal=True)
    torch.testing.assert_close(y2[:, :6], y[:, :6])
    assert 0 < block.last_chosen.float().mean() < 1


def test_topk_routing_is_not_causal():
    """Top-k over the sequence lets a later token decide whether an earlier one is processed."""
    torch.manual_seed(0)
    block = MoDBlock(16, 2, 0.25)
    x = torch.randn(64, 8, 16)
    y = block(x, causal=True)
    x2 = x.clone()
    x2[:, 7] = x2[:, 7] + 5 * block.router.weight[0] / block.router.weight.norm()  # the last token scores high
    y2 = block(x2, causal=True)
    changed = (y2[:, :7] - y[:, :7]).abs().amax(dim=(1, 2)) > 1e-6
    assert changed.any()


def test_aux_loss_targets_topk_membership():
    torch.manual_seed(0)
    block = MoDBlock(16, 2, 0.25)
    block(torch.randn(4, 8, 16))
    loss = block.aux_loss()
    loss.backward()
    assert loss.item() > 0 and block.router.weight.grad.abs().sum() > 0


def test_macs_fall_with_capacity():
    full = mod_macs(13, 32, 6, 1.0)
    assert mod_macs(13, 32, 6, 0.5) < 0.6 * full
    assert math.isclose(full, 6 * (13 * 32 + block_macs(13, 32)))


def test_mod_stack_in_a_classifier():
    torch.manual_seed(0)
    core = MoDStack(16, 2, 3, capacity=0.25)
    model = Classifier(SequenceEmbedding(10, 10, 16), core, FixedDepth(), 16, classes=10)
    out = model(torch.randint(10, (4, 10)))
    assert out.logits.shape == (4, 10)
    core.set_capacity(0.5)
    model(torch.randint(10, (4, 10)))
    assert (core.blocks[0].last_chosen.sum(1) == capacity_tokens(0.5, 11)).all()
