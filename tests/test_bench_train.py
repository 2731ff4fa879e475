"""The training benchmark (``python -m ponder.bench train``) on the CPU: its rows for seeds trained
together and for bfloat16 autocast run a real step (on a GPU it times them; figures/gpu/RUN.md)."""

import json
import math
import os

import pytest
import torch

from ponder.bench import steps
from ponder.bench import train as bench


def test_seeds_trained_together_are_timed_in_run_steps():
    for name in [n for n in steps.families("smoke") if n.startswith(bench.TOGETHER)]:
        row = bench.together_rates("smoke", name, processes=1, cuda=False)
        assert row.keys() == {"together_steps_per_s"} and row["together_steps_per_s"] > 0


def test_one_pool_of_workers_serves_every_measurement_side_by_side():
    name = next(n for n in steps.families("smoke") if n.startswith("parity"))
    with bench.side_by_side(2) as workers:
        pool, _ = workers
        rates = [bench.shared("smoke", name, 2, workers=workers) for _ in range(2)]
        assert len({pool.submit(os.getpid).result() for _ in range(8)}) <= 2  # no worker was started for the second
    assert all(r > 0 for r in rates)


def test_the_variants_are_named_after_their_families_and_counted_as_them():
    prefixes, _ = steps.VARIANTS["bf16"]
    variants = {n for n in steps.families("smoke") if n.startswith("bf16")}
    assert variants == {f"bf16 {n}" for n in steps.families("smoke", variants=False) if n.startswith(prefixes)} and len(
        variants
    ) == len(prefixes)
    assert [n.split(" (")[0] for n in steps.families("smoke", variants=False)] == list(steps.declared_runs("smoke"))
    assert {steps.base_family(n) for n in steps.families("smoke")} == set(steps.families("smoke", variants=False))


def test_bf16_variants_train_a_step_in_bfloat16():
    for name in [n for n in steps.families("smoke") if n.startswith("bf16")]:
        make, batches, loss_fn = steps.families("smoke")[name]
        torch.manual_seed(0)
        model = make()
        seen = []
        handles = [
            m.register_forward_hook(lambda m, i, o, seen=seen: seen.append(o.dtype))
            for m in model.modules()
            if isinstance(m, torch.nn.Linear)
        ]
        loss = loss_fn(model, batches(0))
        for h in handles:
            h.remove()
        loss.backward()
        assert seen and set(seen) == {torch.bfloat16} and math.isfinite(loss.item()), name
        assert all(p.dtype == torch.float32 for p in model.parameters())


def compiled_against_eager(family: str, device: str) -> None:
    """The compiled variant of the smoke ``family`` computes the eager loss and gradients on ``device``, its random
    numbers drawn as eager draws them (sraven's latent-code dropout, ACM's Gumbel noise), traced whole: a graph
    break would leave part of the step eager."""
    from torch._dynamo.utils import counters

    name = next(n for n in steps.families("smoke") if n.startswith(f"compiled {family}"))
    make, batches, loss_fn = steps.families("smoke")[name]
    _, _, eager_loss = steps.families("smoke", variants=False)[steps.base_family(name)]
    batch = tuple(t.to(device) for t in batches(0))
    torch._dynamo.reset()
    counters.clear()
    results = []
    for loss in (eager_loss, loss_fn):
        torch.manual_seed(0)
        model = make().to(device).train()
        value = loss(model, batch)
        value.backward()
        results.append((value, [p.grad for p in model.parameters() if p.requires_grad]))
    (eager, eager_grads), (fused, grads) = results
    assert torch.allclose(eager, fused, rtol=1e-5), (eager, fused)
    assert all((g - e).norm() <= 1e-4 * e.norm() + 1e-7 for g, e in zip(grads, eager_grads))
    assert counters["stats"]["unique_graphs"] == 1 and not counters["graph_break"], (
        dict(counters["stats"]),
        dict(counters["graph_break"]),
    )


@pytest.mark.parametrize("family", ["sraven", "ACM phase III", "text"])
def test_the_compiled_variant_is_the_families_loss_compiled_in_one_graph(family):
    compiled_against_eager(family, "cpu")


def test_the_json_grows_row_by_row_and_a_failing_bf16_variant_keeps_the_others(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "RESULT", tmp_path / "train.json")
    monkeypatch.setattr(bench, "write_result", lambda name, result: bench.write_json(tmp_path / f"{name}.json", result))
    monkeypatch.setattr(bench, "matmul_rate", lambda: 1.0)
    monkeypatch.setattr(bench, "families", lambda profile: dict.fromkeys(["a", "compiled a", "b", "c"]))

    def row(profile, name, rate, cuda, workers=None):
        if name in ("compiled a", "c"):
            raise RuntimeError(f"{name} failed")
        return {"family": name, "steps_per_s": 1.0}

    monkeypatch.setattr(bench, "family_row", row)
    with pytest.raises(RuntimeError, match="c failed"):  # a family the runs train may not fail quietly
        bench.main()
    written = json.loads((tmp_path / "train.json").read_text())
    assert [r["family"] for r in written["families"]] == ["a", "compiled a", "b"] and not written["complete"]
    assert written["families"][1] == {"family": "compiled a", "error": "compiled a failed"}
    monkeypatch.setattr(bench, "families", lambda profile: dict.fromkeys(["a", "compiled a"]))
    assert bench.main()["complete"] and json.loads((tmp_path / "train.json").read_text())["complete"]


def test_the_acm_families_train_what_acm_vit_trains():
    """The ACM phase-III family steps a ViT whose every MLP and projection is an ACM, on the profile's scene,
    with phase III's loss at the lowest budget; the A-ViT family a halting ViT: the plan counts those runs at
    their rates, not at the plain ViT's."""
    from ponder.models.acmize import acms
    from ponder.models.avit import AViT
    from ponder.studies.acm import phases
    from ponder.tasks import images

    rows = steps.families("smoke")
    (phase3,) = [n for n in rows if n.startswith("ACM phase III")]
    (avit,) = [n for n in rows if n.startswith("A-ViT")]
    make, batches, loss_fn = rows[phase3]
    torch.manual_seed(0)
    model = make()
    assert len(acms(model)) == 5 * phases.sizes("smoke")["depth"] and all(p.requires_grad for p in model.parameters())
    assert torch.equal(
        batches(3)[0], images.sample(phases.sizes("smoke")["batch"], seed=3, scene=phases.scene("smoke"))[0]
    )
    loss_fn(model, batches(0)).backward()
    assert all(p.grad is not None for m in acms(model) for p in m.parameters())
    make, batches, loss_fn = rows[avit]
    model = make()
    assert isinstance(model, AViT)
    loss = loss_fn(model, batches(0))
    assert math.isfinite(loss.item())


@pytest.mark.parametrize("prefix", ["ACM phase III", "A-ViT"])
def test_acm_and_avit_steps_read_nothing_back_so_they_can_be_captured(prefix):
    """Capturing these steps on a GPU needs them to wait on no value of
    the device: their forward and backward read no tensor back (``item``, ``bool``, ...) and index
    with no boolean mask (a shape that depends on the data), each patched here to raise."""
    from unittest.mock import patch

    families = steps.families("smoke", variants=False)
    (name,) = [n for n in families if n.startswith(prefix)]
    make, batches, loss = families[name]
    torch.manual_seed(0)
    model, batch = make().train(), batches(0)
    getitem = torch.Tensor.__getitem__

    def read(*args, **kwargs):
        raise AssertionError("a value read back from the device")

    def no_mask(tensor, index):
        assert not any(
            isinstance(i, torch.Tensor) and i.dtype == torch.bool
            for i in (index if isinstance(index, tuple) else (index,))
        ), "boolean-mask indexing"
        return getitem(tensor, index)

    reads = {name: read for name in ("item", "tolist", "__bool__", "__int__", "__float__", "nonzero")}
    with (
        patch.multiple(torch.Tensor, **reads, __getitem__=no_mask),
        patch("torch.nonzero", read),
        patch("torch.masked_select", read),
    ):
        loss(model, batch).backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
