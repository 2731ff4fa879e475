"""CUDA tests (``make test-gpu``): every model family's forward and backward on the GPU against the
CPU, the adaptive loops' compacted execution, the grouped ACM layer, training with the step
captured as a CUDA graph against eager training (C-PVR's ACT runs too, recaptured when their hold
ends), C-PVR seeds trained together in one vmap-ed step against each alone, and training runs
(eager and captured) that are interrupted and resumed on the GPU. Skipped without CUDA;
``make test`` stays on the CPU.

The CPU-vs-GPU comparisons run in float32 with TF32 off, so the two differ only by the order of
float32 sums: losses agree to 1e-4 and gradients to 1e-3 of their norm.
"""

import copy
import dataclasses
import math
import sys
from functools import partial

import pytest
import torch
import torch.nn.functional as F
from test_act import assert_trained_alike
from test_bench_train import compiled_against_eager
from test_hyla import compiled_language_model_trains_alike

from ponder.bench import acm as acm_bench
from ponder.bench import seeds
from ponder.bench.act import spread_halting
from ponder.models import acmize as acmize_lib
from ponder.models.acm import Learners
from ponder.models.audio import FrameTransformer
from ponder.models.avit import AViT, halting_loss
from ponder.models.calm import CALMClassifier
from ponder.models.moe import moefy
from ponder.models.pondernet import PonderClassifier
from ponder.models.recurrent import RecurrentPonderer
from ponder.models.vit import ViT
from ponder.models.ztw import ZTWViT, exit_loss
from ponder.runner import training
from ponder.runner.gpu import ensemble
from ponder.runner.gpu.compilation import compiled
from ponder.runner.gpu.cuda_graphs import WARMUP
from ponder.runner.runs import Run
from ponder.runner.training import TrainConfig, make_optimizer, train, train_run, update_function
from ponder.studies.hyla import experiments as hyla
from ponder.studies.hyper_ut import cpvr as hyper_ut
from ponder.studies.hyper_ut import scratchpad as hyper_ut_scratchpad
from ponder.studies.survey import cpvr as survey
from ponder.studies.survey.parity import parity_loss
from ponder.tasks import cpvr, images, parity, sraven

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]

SMOKE = hyper_ut.SIZES["smoke"]["model"]
LENGTH = 8


def keep_tf32_off(setattr=setattr, device: str = "cuda") -> None:
    """TF32 off, and kept off: the library turns it on in every call of ``default_device``, which
    training calls, so each module's ``default_device`` is replaced (by ``setattr``) by one that
    returns ``device`` and leaves TF32 alone."""
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    for module in [m for name, m in sys.modules.items() if name.startswith("ponder")]:
        if getattr(module, "default_device", None) is training.default_device:
            setattr(module, "default_device", lambda: torch.device(device))


@pytest.fixture(autouse=True)
def exact_float32(monkeypatch):
    """TF32 off for the comparisons (:func:`keep_tf32_off`), restored after."""
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    keep_tf32_off(monkeypatch.setattr)
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def test_comparisons_run_in_float32():
    train(
        torch.nn.Linear(2, 2),
        lambda m, b: m(b[0]).sum(),
        lambda step: (torch.ones(1, 2),),
        TrainConfig(steps=1, batch_size=1),
    )
    assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32


def cpvr_batch(n: int = 32):
    return cpvr.sample(n, LENGTH, [1, 2, 3], seed=0)


def image_batch(n: int = 16):
    return images.sample(n, seed=0)


def sraven_batch(setup, n: int = 16):
    train, _ = sraven.split(setup.k, setup.holdout)
    return sraven.batch(n, train, setup.f, seed=0)


def image_ce(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y)


def vit():
    torch.manual_seed(0)
    return ViT(image=32, patch=4, dim=16, depth=2, heads=2)


SRAVEN = hyla.sraven_setup("smoke")
CASES = {
    **{
        f"cpvr-{kind}": (partial(hyper_ut.build, kind, LENGTH, SMOKE), cpvr_batch, hyper_ut.loss_fn(0.01))
        for kind in hyper_ut.KINDS
    },
    "cpvr-early-exit": (
        lambda: CALMClassifier(hyper_ut.build("transformer", LENGTH, SMOKE)),
        cpvr_batch,
        survey.early_exit_train_loss,
    ),
    "cpvr-mod": (lambda: survey.make_mod(LENGTH, SMOKE, 0.5), cpvr_batch, survey.mod_train_loss),
    "cpvr-pondernet": (
        lambda: PonderClassifier(hyper_ut.build("ut", LENGTH, SMOKE), SMOKE["dim"], halting_bias=-2.0, seed=0),
        cpvr_batch,
        survey.pondernet_train_loss(0.3, 0.01),
    ),
    **{
        f"parity-{h}": (
            lambda h=h: RecurrentPonderer(6, 16, 5, h, -1.0),
            lambda: parity.sample(32, 6, [1, 2, 3], seed=0),
            parity_loss(h, 1e-3, 0.2, 0.01),
        )
        for h in ("act", "pondernet")
    },
    **{
        f"sraven-{kind}": (
            partial(hyla.sraven_model, hyla.sraven_setup("smoke", kind=kind)),
            partial(sraven_batch, SRAVEN),
            hyla.sraven_loss,
        )
        for kind in hyla.MAIN_KINDS
    },
    "fuzzy-hyla": (
        partial(hyla.fuzzy_model, hyla.fuzzy_setup("smoke")),
        lambda: hyla.fuzzy.batch(16, hyla.fuzzy.split(4, 2, 0.7)["train"], 4, 8, seed=0),
        hyla.fuzzy_loss,
    ),
    "scratchpad": (
        partial(hyper_ut_scratchpad.build, hyper_ut_scratchpad.SIZES["smoke"]),
        lambda: hyper_ut_scratchpad.encode(cpvr_batch()[0], "scratchpad"),
        hyper_ut_scratchpad.loss,
    ),
    "vit": (vit, image_batch, image_ce),
    "vit-acm": (lambda: acmize_lib.acmize(vit(), 4, 4, warm_start=True), image_batch, image_ce),
    "vit-moe": (lambda: moefy(vit(), 4), image_batch, image_ce),
    "vit-halting": (lambda: AViT(vit()), image_batch, lambda m, b: halting_loss(m, b[0], b[1], 1.0)),
    "vit-early-exit": (lambda: ZTWViT(vit()), image_batch, lambda m, b: exit_loss(m, b[0], b[1])),
    "speech": (
        lambda: FrameTransformer(frames=20, features=8, classes=10, dim=16, depth=2, heads=2),
        lambda: (torch.randn(8, 20, 8, generator=torch.Generator().manual_seed(0)), torch.arange(8)),
        image_ce,
    ),
}


def loss_and_grads(model, batch, loss_fn, device):
    model = model.to(device).eval()  # eval: no dropout, arg-max gates; the backward pass still runs
    model.zero_grad(set_to_none=True)
    loss = loss_fn(model, tuple(t.to(device) for t in batch))
    loss.backward()
    grads = {n: p.grad.detach().cpu() for n, p in model.named_parameters() if p.grad is not None}
    return loss.item(), grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_backward_matches_cpu(name):
    make, batch_fn, loss_fn = CASES[name]
    torch.manual_seed(0)
    model, batch = make(), batch_fn()
    cpu_loss, cpu_grads = loss_and_grads(copy.deepcopy(model), batch, loss_fn, "cpu")
    gpu_loss, gpu_grads = loss_and_grads(model, batch, loss_fn, "cuda")
    assert gpu_loss == pytest.approx(cpu_loss, rel=1e-4, abs=1e-5)
    assert cpu_grads.keys() == gpu_grads.keys() and cpu_grads
    for key, g in cpu_grads.items():
        assert torch.isfinite(gpu_grads[key]).all(), key
        assert (gpu_grads[key] - g).norm() <= 1e-3 * g.norm() + 1e-6, key


@pytest.mark.parametrize("kind", hyper_ut.ACT_KINDS)
def test_act_compacted_equals_masked_on_cuda(kind):
    torch.manual_seed(0)
    model = hyper_ut.build(kind, LENGTH, dict(SMOKE, steps=6)).cuda().eval()
    x = cpvr_batch(64)[0].cuda()
    with torch.no_grad():
        spread_halting(model, x)  # examples halt at steps spread over 1..6
    masked = model(x)
    model.depth.compact = True
    compacted = model(x)
    assert torch.allclose(masked.logits, compacted.logits, atol=1e-5)
    assert torch.equal(masked.steps, compacted.steps) and masked.steps.unique().numel() > 3


@pytest.mark.parametrize("k_max", [1, 4])
def test_grouped_acm_equals_masked_on_cuda(k_max):
    torch.manual_seed(0)
    learners = Learners(64, 64, 4, 32).cuda()
    z = torch.randn(4, 50, 64, device="cuda")
    k = torch.randint(0, k_max + 1, (4, 50), device="cuda")
    mask = (torch.arange(4, device="cuda") < k[..., None]).float()
    assert torch.allclose(learners.grouped(z, k), learners.masked(z, mask), atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fused_acm_kernels_equal_masked_on_cuda(dtype):
    from ponder.models import acm_triton

    torch.manual_seed(0)
    learners = Learners(256, 256, 4, 128).to("cuda", dtype).eval()
    z = torch.randn(1000, 256, device="cuda", dtype=dtype)  # not a multiple of any tile: the last tile is partial
    generator = torch.Generator().manual_seed(0)
    cases = [
        acm_bench.random_choices(len(z), f, 4, generator, mix) for mix in acm_bench.MIXES for f in acm_bench.FRACTIONS
    ] + [torch.zeros(len(z), dtype=torch.long)]
    with torch.inference_mode():
        assert acm_triton.check(learners, z, cases) < (2e-2 if dtype == torch.bfloat16 else 1e-4)


def test_the_acm_bench_times_the_fused_layer_on_cuda():
    result = acm_bench.measure(repeats=2, images=2, fractions=(0.25, 1.0))
    assert "fused_error" not in result and result["fused_max_relative_error"] < 2e-2
    assert all(len(c["fused_ratios"]) == 2 and c["fused_ratio"] > 0 for c in result["cases"])
    assert "replayed_error" not in result and all(
        len(c["replayed_ratios"]) == 2 and c["dense_replayed_s"] > 0 for c in result["cases"]
    )
    assert list(acm_bench.ratio_table([result]).columns[-4:]) == list(acm_bench.RATIO_COLUMNS)


def test_the_fused_layer_replayed_from_a_cuda_graph_computes_what_it_does_eagerly():
    from ponder.models import acm_triton

    learners = Learners(256, 256, 4, 128).to("cuda", torch.bfloat16).eval()
    z = torch.randn(1000, 256, device="cuda", dtype=torch.bfloat16)
    k = acm_bench.random_choices(len(z), 0.5, 4, torch.Generator().manual_seed(0), "mixed").cuda()
    out = torch.empty(len(z), 256, device="cuda", dtype=torch.bfloat16)
    with torch.inference_mode():
        replay = acm_bench.replayed(lambda: acm_triton.fused(learners, z, k, out=out))
        expected = acm_triton.fused(learners, z, k).clone()
        out.zero_()
        replay()
        torch.cuda.synchronize()
    assert torch.equal(out, expected)


def test_the_profile_counts_the_triton_kernels_time_on_cuda():
    """``bench kernels`` sums the kernels' own time on the device: a matrix product's is its operator's
    too, the fused ACM layer's Triton kernels (launched outside PyTorch's operators) only the kernels'.
    (Before, ``device_s`` summed the operators and left the fused layer's two kernels out.)"""
    from ponder.bench import kernels
    from ponder.models import acm_triton

    a = torch.randn(2048, 2048, device="cuda")
    product = kernels.profiled(lambda: a @ a)
    assert product["kernels"] and product["device_s"] == pytest.approx(product["attributed_s"], rel=0.05)

    # a range that record_function marks on the device too, as AdamW's step and a compiled graph's call are
    def annotated():
        with torch.profiler.record_function("## annotated ##"):
            return a @ a

    ranged = kernels.profiled(annotated)
    assert ranged["device_s"] == pytest.approx(product["device_s"], rel=0.3) and "## annotated ##" not in {
        k["kernel"] for k in ranged["kernels"]
    }

    learners = Learners(768, 768, 4, 768).to("cuda", torch.bfloat16).eval()  # a ViT-B MLP in 4 learners
    z = torch.randn(4096, 768, device="cuda", dtype=torch.bfloat16)
    k = torch.full((len(z),), 4, dtype=torch.long, device="cuda")
    with torch.inference_mode():
        layer = kernels.profiled(lambda: acm_triton.fused(learners, z, k))
    assert layer["device_s"] > 2 * layer["attributed_s"]  # the two kernels do nearly all the work at 4 of 4 learners


def sraven_parts():
    """``(make_model, batches, loss_fn)`` of a smoke sraven HYLA run without code dropout (so that
    eager and captured training draw no random numbers and must agree)."""
    s = hyla.sraven_setup("smoke", code_dropout=0.0)
    combos, _ = sraven.split(s.k, s.holdout)
    return partial(hyla.sraven_model, s), lambda step: sraven.batch(32, combos, s.f, seed=step), hyla.sraven_loss


def cpvr_parts(kind: str):
    """``(make_model, batches, loss_fn)`` of a smoke C-PVR run of ``kind`` with 6 steps whose
    examples start halting at steps spread over 1..6 (so that eagerly ACT compacts)."""
    model_cfg = dict(SMOKE, steps=6)
    batches = lambda step: cpvr.sample(32, LENGTH, [1, 2, 3], seed=step)  # noqa: E731

    def make():
        model = hyper_ut.build(kind, LENGTH, model_cfg)
        with torch.no_grad():
            spread_halting(model, batches(0)[0])
        return model

    return make, batches, hyper_ut.loss_fn(model_cfg["tau"])


CAPTURED = {
    "sraven": (sraven_parts(), {}),
    # the C-PVR ACT runs hold the halting unit for the first part of training: one capture before
    # the hold ends, one after; eagerly ACT stops early and compacts, captured it runs every step masked
    **{
        f"C-PVR {kind}, held": (cpvr_parts(kind), {"hold": "depth.halting", "hold_for": 0.4})
        for kind in ("ut_act", "hyper_act")
    },
}


@pytest.mark.parametrize("case", sorted(CAPTURED))
def test_captured_training_equals_eager_on_cuda(case):
    (make, batches, loss), hold = CAPTURED[case]
    cfg = TrainConfig(steps=30, batch_size=32, lr=3e-3, log_every=5, seed=0, **hold)
    torch.manual_seed(0)
    initial = make()  # one model for both
    trained = []
    for capture in (False, True):
        model = copy.deepcopy(initial)
        trained.append((model, train(model, loss, batches, cfg, capture=capture)))
    (eager, eager_history), (captured, captured_history) = trained
    assert [h["loss"] for h in captured_history] == pytest.approx(
        [h["loss"] for h in eager_history], rel=1e-4, abs=1e-5
    )
    assert_trained_alike(eager, captured, batches(99)[0].cuda() if case.startswith("C-PVR") else None)


def test_compiled_training_equals_eager_on_cuda():
    """How a gpu sraven run with ``compiled=True`` trains: the loss compiled (:mod:`ponder.runner.gpu.compilation`),
    the step captured, the code dropout drawn as eager PyTorch draws it; against the eager loss, captured."""
    s = hyla.sraven_setup("smoke", code_dropout=0.1)
    combos, _ = sraven.split(s.k, s.holdout)
    cfg = TrainConfig(steps=30, batch_size=32, lr=3e-3, log_every=5, seed=0)
    torch.manual_seed(0)
    initial = hyla.sraven_model(s)
    trained = []
    for loss in (hyla.sraven_loss, compiled(hyla.sraven_loss)):
        model = copy.deepcopy(initial)
        trained.append(
            (model, train(model, loss, lambda step: sraven.batch(32, combos, s.f, seed=step), cfg, capture=True))
        )
    (eager, eager_history), (fused, fused_history) = trained
    assert losses(fused_history) == pytest.approx(losses(eager_history), rel=1e-4, abs=1e-5)
    for (name, a), b in zip(eager.state_dict().items(), fused.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4), name


def test_compiled_sraven_loss_sums_its_small_products_and_equals_eager_on_cuda():
    """At the gpu size (one layer: the same products), the compiled sraven loss computes HYLA's small
    batched products as sums (inductor's pass fires: :mod:`ponder.runner.gpu.compilation`), and its loss and
    gradients are the eager ones, the same code dropout drawn."""
    from torch._dynamo.utils import counters

    s = hyla.sraven_setup("gpu", depth=1)
    combos, _ = sraven.split(s.k, s.holdout)
    batch = tuple(t.cuda() for t in sraven.batch(s.batch_size, combos, s.f, seed=0))
    torch.manual_seed(0)
    model = hyla.sraven_model(s).cuda().train()
    counters.clear()
    results = []
    for loss_fn in (hyla.sraven_loss, compiled(hyla.sraven_loss)):
        model.zero_grad()
        torch.manual_seed(1)
        loss = loss_fn(model, batch)
        loss.backward()
        results.append((loss.item(), [p.grad.clone() for p in model.parameters()]))
    assert counters["inductor"]["decompose_bmm"] >= 4, dict(counters["inductor"])
    (eager_loss, eager_grads), (loss, grads) = results
    assert loss == pytest.approx(eager_loss, rel=1e-5)
    for g, e in zip(grads, eager_grads):
        assert (g - e).norm() <= 1e-3 * e.norm() + 1e-7


@pytest.mark.parametrize("family", ["sraven", "ACM phase III", "text"])
def test_the_compiled_variant_is_the_families_loss_compiled_in_one_graph_on_cuda(family):
    """What the benchmark's compiled rows time (those for ACM's phase III and the language
    model, whose gpu runs compile): the eager loss, in one graph of CUDA kernels."""
    compiled_against_eager(family, "cuda")


def seed_group(make, batches, cfg: TrainConfig):
    """``(models, members)``: 3 seeds of ``make``'s model, seed ``s`` on the batches ``batches(1000 s + step)``."""
    models = []
    for s in range(3):
        torch.manual_seed(s)
        models.append(make())
    return models, [
        ensemble.Member(None, dataclasses.replace(cfg, seed=s), lambda step, s=s: batches(1000 * s + step))
        for s in range(3)
    ]


TOGETHER_CFG = TrainConfig(steps=30, batch_size=32, lr=3e-3, log_every=5, hold="depth.halting", hold_for=0.4)


def losses(history: list[dict]) -> list[float]:
    return [h["loss"] for h in history]


HYPER_UT_APART = (
    "Hyper-UT+ACT's seeds trained together part from each alone on CUDA by up to 9.7e-4 of the loss "
    "(not explained: docs/gpu.md), so hyper_ut.TOGETHER_KINDS trains its seeds one by one; passing, "
    "this test fails and says the kind may train together again"
)


@pytest.mark.parametrize(
    "kind",
    [
        *(k for k in hyper_ut.TOGETHER_KINDS if k in hyper_ut.ACT_KINDS or k == "transformer"),
        pytest.param("hyper_act", marks=pytest.mark.xfail(strict=True, reason=HYPER_UT_APART)),
    ],
)
def test_seeds_trained_together_follow_each_alone_on_cuda(kind):
    """The gpu profile's C-PVR seeds of every kind in ``TOGETHER_KINDS`` train in one vmap-ed step
    (:mod:`ponder.runner.gpu.ensemble`): on the GPU each seed's losses are those of its run alone, across the
    end of the hold. (The models start deep, every example at the last step, so that no example sits
    on a halting threshold that float32 rounding could tip: the CPU test does the same.)"""
    make, batches, loss = (
        partial(hyper_ut.build, kind, LENGTH, dict(SMOKE, steps=6)),
        cpvr_parts(kind)[1],
        hyper_ut.loss_fn(SMOKE["tau"]),
    )
    models, members = seed_group(make, batches, TOGETHER_CFG)
    alone = [train(copy.deepcopy(model), loss, m.batches, m.cfg) for model, m in zip(models, members)]
    for a, t in zip(alone, ensemble.train_together(models, loss, members)):
        assert losses(t) == pytest.approx(losses(a), rel=1e-4, abs=1e-5)


@pytest.mark.parametrize("kind", ["ut_act", "hyper_act"])
def test_seeds_trained_together_captured_equal_eager_on_cuda(kind):
    """The stacked step captured as a CUDA graph (once held, once after the hold; examples halting
    at steps spread over 1..6) computes what it computes eagerly."""
    make, batches, loss = cpvr_parts(kind)
    models, members = seed_group(make, batches, TOGETHER_CFG)  # one set for both
    histories = [
        ensemble.train_together(copy.deepcopy(models), loss, members, capture=capture) for capture in (False, True)
    ]
    for eager, captured in zip(*histories):
        assert losses(captured) == pytest.approx(losses(eager), rel=1e-4, abs=1e-5)


@pytest.mark.parametrize("kind", seeds.KINDS)
def test_captured_batched_seed_gradients_equal_eager_on_cuda(kind):
    """``python -m ponder.bench seeds`` times the vmap-ed gradients of 3 seeds replayed from a CUDA
    graph: the replay computes the eager gradients."""
    models, x, y = seeds.setup(kind, "smoke")
    batched = seeds.batched_gradients(models)
    eager = {name: g.clone() for name, g in batched(x, y).items()}
    replay = seeds.replayed(lambda: batched(x, y))
    for _ in range(WARMUP + 2):
        captured = replay()
    for name, g in eager.items():
        assert torch.allclose(captured[name], g, atol=1e-6, rtol=1e-5), name


def test_captured_step_replays_one_graph_and_refuses_another_shape():
    make, batches, loss = sraven_parts()
    model = make().cuda().train()
    optimizer = make_optimizer(model, TrainConfig(steps=1, batch_size=32), capturable=True)
    update = update_function(model, loss, model, optimizer, 1.0, capture=True)
    on_gpu = lambda batch: tuple(t.cuda() for t in batch)  # noqa: E731
    losses = [update(on_gpu(batches(step))).item() for step in range(WARMUP + 3)]
    assert update.graph is not None and all(map(math.isfinite, losses)) and len(set(losses)) == len(losses)
    x, y = batches(0)
    with pytest.raises(ValueError, match="one shape"):
        update(on_gpu((x[:2], y[:2])))


def test_captured_run_with_dropout_checkpoints_on_cuda(tmp_path, monkeypatch):
    """The gpu profile's sraven runs draw code dropout inside the captured step and checkpoint the
    CUDA generator's state between replays: the run finishes, its losses finite, every weight moved."""
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    s = hyla.sraven_setup("smoke", code_dropout=0.1)
    combos, _ = sraven.split(s.k, s.holdout)
    cfg = TrainConfig(steps=60, batch_size=32, lr=3e-3, checkpoint_every=10, log_every=10, seed=0)
    torch.manual_seed(cfg.seed)
    initial = {k: v.clone() for k, v in hyla.sraven_model(s).state_dict().items()}
    run = Run("gpu/dropout", {"a": 1}, "smoke")
    model, metrics = train_run(
        run,
        partial(hyla.sraven_model, s),
        hyla.sraven_loss,
        lambda step: sraven.batch(32, combos, s.f, seed=step),
        cfg,
        capture=True,
    )
    assert run.done and all(math.isfinite(h["loss"]) for h in metrics["history"])
    for name, value in model.state_dict().items():
        assert not torch.equal(value.cpu(), initial[name]), name


def sraven_with_dropout():
    """``(make_model, batches, loss_fn)`` of the smoke sraven HYLA run with the latent-code dropout (0.1) the
    profiles train with: resuming must restore the CUDA generator to draw the masks the run would have drawn."""
    s = hyla.sraven_setup("smoke", code_dropout=0.1)
    combos, _ = sraven.split(s.k, s.holdout)
    return partial(hyla.sraven_model, s), lambda step: sraven.batch(32, combos, s.f, seed=step), hyla.sraven_loss


RESUMED = {
    "eager (sraven, dropout)": (*sraven_with_dropout(), False),
    "captured (sraven, dropout)": (*sraven_with_dropout(), True),
    "eager (UT+ACT)": (
        partial(hyper_ut.build, "ut_act", LENGTH, SMOKE),
        lambda step: cpvr.sample(32, LENGTH, [1, 2], seed=step),
        hyper_ut.loss_fn(0.01),
        False,
    ),
    "captured (sraven)": (*sraven_parts(), True),
    "captured (UT+ACT)": (*cpvr_parts("ut_act"), True),
}


@pytest.mark.parametrize("case", sorted(RESUMED))
def test_training_resumes_on_cuda(tmp_path, monkeypatch, case):
    """A run stopped by an error after its checkpoint resumes on the GPU and ends where an
    uninterrupted run ends: with dropout, from the CUDA generator's state the checkpoint stored."""
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    make, batches, loss, capture = RESUMED[case]
    cfg = TrainConfig(steps=40, batch_size=32, lr=3e-3, checkpoint_every=10, seed=0)
    whole, _ = train_run(Run("gpu/whole", {"a": 1}, "smoke"), make, loss, batches, cfg, capture=capture)

    def failing(step):
        if step == 25:
            raise KeyboardInterrupt
        return batches(step)

    run = Run("gpu/resumed", {"a": 1}, "smoke")
    with pytest.raises(KeyboardInterrupt):
        train_run(run, make, loss, failing, cfg, capture=capture)
    assert not run.done and (run.dir / "checkpoint.safetensors").exists()
    resumed, _ = train_run(run, make, loss, batches, cfg, capture=capture)
    assert next(resumed.parameters()).is_cuda
    for (name, a), b in zip(whole.state_dict().items(), resumed.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4), name


def test_a_compiled_language_model_trains_as_the_eager_one_on_cuda(monkeypatch):
    """The way a gpu language model may train (``compiled`` in the Text row)."""
    compiled_language_model_trains_alike(monkeypatch)


def test_a_short_training_on_cuda_follows_the_cpu(monkeypatch):
    """20 AdamW steps of the smoke sraven HYLA model (no dropout, no halting threshold to tip) from the
    same weights on the same batches, on the CPU and on the GPU: each step's loss agrees to 1e-3 of
    its value. Float32 sums in another order differ by ~1e-6 per step (forward and backward agree to
    1e-4: test_forward_backward_matches_cpu); twenty updates compound that, within the stated bound."""
    make, batches, loss = sraven_parts()
    cfg = TrainConfig(steps=20, batch_size=32, lr=3e-3, log_every=1, seed=0)
    torch.manual_seed(0)
    start = make()
    histories = {}
    for device in ("cpu", "cuda"):
        keep_tf32_off(monkeypatch.setattr, device)
        histories[device] = losses(train(copy.deepcopy(start), loss, batches, cfg))
    assert len(histories["cuda"]) == cfg.steps
    assert histories["cuda"] == pytest.approx(histories["cpu"], rel=1e-3)
