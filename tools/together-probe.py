"""Seeds trained together against each trained alone, the loss of every step: the case of
``tests/test_gpu.py::test_seeds_trained_together_follow_each_alone_on_cuda`` outside pytest.

On the H200 (2026-11-27) that test failed for hyper_act under pytest (5.7e-4 apart at step 20, after
the halting unit's hold ends). Replayed here in the test's setting on the next lease (also
2026-11-27), hyper_act's seeds together parted from alone by up to 9.7e-4 from step 2 on (seed 0;
steps 7 and 8 for the others), repeats drifting not at all, and under deterministic kernels too
(figures/gpu/RUN.md). On the CPU these short sequences never reach PyTorch's fused attention
(:func:`ponder.models.transformer.attend` multiplies explicitly there), so the CPU's test of the
same training cannot see what the fused kernels do under ``vmap``; ``--attention`` replays with
the fused function's reference kernel (``math``), with the explicit product (``explicit``) or
with the fused function (``fused``) on any device. (Lease 3, 2026-11-28: with ``explicit`` and
``math`` hyper_act parted as with the default kernels, 5.65e-4 and 5.70e-4 against 5.66e-4, so the
fused kernels are not the cause; ``--gradients`` below is the next question.) Prints one JSON line per replay: each seed's largest relative loss difference
together against alone (``max``), the first step where it passes 1e-4 (``null``: none) and how far
its two trained models end apart (``end``: the weight tensor furthest apart, the largest logit
difference on a fresh batch and the number of its examples whose halting step differs), and the
relative difference at every logged step (``by_step``: a difference that grows step by step from
the hold's end is amplified, one that jumps at a step is an event of that step); from
the second replay of a kind on, also how far its alone and its together losses moved from the
first replay's (``alone_drift``, ``together_drift``: nonzero means the device does not repeat
itself, and a difference of together against alone may be that alone).

    PYTHONPATH=lib python3 tools/together-probe.py KIND[,KIND...] [REPEATS] [--deterministic] [--log-every N] [--attention default|math|explicit|fused] [--grad-noise EPS [--noise-on weights|attention]] [--gradients STEP[,STEP...]]

KIND: ut_act or hyper_act, several in the order given within one process (as pytest runs the
parametrized cases); REPEATS (default 1) replays each that many times. The replays run as the test
does: float32 (TF32 off), PyTorch's default kernels and cuBLAS's default workspace, on CUDA when
there is one. ``--deterministic`` replays under ``torch.use_deterministic_algorithms(True)``
instead (an op without a deterministic kernel warns); cuBLAS reads its deterministic workspace
setting when CUDA starts, so that run needs ``CUBLAS_WORKSPACE_CONFIG=:4096:8`` in its environment.

``--grad-noise EPS`` asks instead how much the training amplifies a difference in the gradients:
each seed trains alone twice, the second time with Gaussian noise of ``EPS`` times each gradient
tensor's root mean square added at every step (from its own generator), and the line's ``max`` is
the largest relative loss difference of the two. Float32 rounding is about 1e-7; TF32's, 1e-3.
``--noise-on attention`` adds it to the gradients of attention's queries, keys and values instead
of the weights': before the products that sum them into the weights' gradients, where the rounding
of sums that cancel (the keys' gradient sums to zero over the keys) would enter.

``--gradients STEP[,STEP...]`` asks where the two computations part, one step at a time: each seed
trains alone for STEP steps (0: as built), then its gradients of the test's batch of that step,
computed alone (``backward``) and stacked with the others (``vmap``, :mod:`ponder.ensemble`), are
compared tensor by tensor, with the parameters the hold holds at that step held. The line gives
each seed's three tensors furthest apart (``||stacked - alone|| / ||alone||``, the key biases left
out: their gradient is rounding) and how many are above 1e-5, and the three furthest from the
gradients computed alone in float64, for each path. On the CPU every tensor of either path is
within 4e-6 of float64 and of the other; a tensor at 1e-4 or more on the GPU is the one that
carries the parting, and the path that is far from float64 is the one computing at lower precision.
(Lease 4, 2026-11-28: at steps 0, 12, 13 and 20 every tensor of both kinds stayed under 5.5e-6
apart and both paths under 6.8e-6 from float64: no step probed there parts; the next lease asks
every step, 1 to 29, with ``by_step`` beside it.)

``--updates STEP[,STEP...]`` asks the same of a whole update (the gradients, each seed's clipping,
AdamW at the step's learning rate): each seed trains alone for STEP + 1 steps, checkpointing the
state (weights and AdamW's moments) after STEP; then the three checkpoints are stacked and take the
step together (:class:`ponder.ensemble.Stacked`, the step of :func:`ponder.ensemble.train_together`). The line gives each seed's
three tensors whose update (weights after the step minus before) is furthest apart, stacked
against alone, and how many are above 1e-5 (STEP >= 1: a checkpoint needs a step before it). On
the CPU (steps 1, 12, 13, 20; both kinds) they stay within 1.3e-5: an update is about 1e-3 of its
weight, so float32's rounding of the weights alone is about 1e-5 of it.

Both modes train each seed for STEP steps of the test's own training (its learning-rate schedule
and hold, over 30 steps), stopped there (:func:`trained_for`). (Lease 4's ``--gradients`` trained a
training STEP steps long instead, whose schedule and hold differ: its weights at 12, 13 and 20
were not the test's, though both paths started from the same ones.)
"""
import ponder  # noqa: F401  (before torch: pinned numerics)
import argparse
import copy
import dataclasses
import json
import os
import shutil
import sys
from contextlib import ExitStack, nullcontext
from functools import partial
from pathlib import Path
from unittest.mock import patch

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_gpu  # noqa: E402  (its C-PVR setup: the batches, the seeds, the hold)
from test_act import KEY_BIASES  # noqa: E402
from ponder import ensemble, training  # noqa: E402
from ponder.cuda_graphs import set_lr  # noqa: E402
from ponder.runs import Run  # noqa: E402
from ponder.experiments import hyper_ut  # noqa: E402
from ponder.models import hyper_block, transformer  # noqa: E402

DETERMINISTIC_WORKSPACE = ":4096:8"


def setup(kind: str, log_every: int):
    """``(models, members, batches, loss)``: the test's 3 seeds of ``kind``, losses read every ``log_every`` steps."""
    cfg = dataclasses.replace(test_gpu.TOGETHER_CFG, log_every=log_every)
    make = partial(hyper_ut.build, kind, test_gpu.LENGTH, dict(test_gpu.SMOKE, steps=6))
    batches, loss = test_gpu.cpvr_parts(kind)[1], hyper_ut.loss_fn(test_gpu.SMOKE["tau"])
    models, members = test_gpu.seed_group(make, batches, cfg)
    return models, members, batches, loss


def replay(kind: str, log_every: int = 1) -> tuple[list[list[float]], list[list[float]], list[dict]]:
    """``(alone, together, ends)``: each seed's loss at every ``log_every``-th step, trained alone
    and with the others, and how far apart its two trained models end (:func:`end_difference`)."""
    models, members, batches, loss = setup(kind, log_every)
    alone_models = [copy.deepcopy(m) for m in models]
    alone = [test_gpu.losses(training.train(m, loss, member.batches, member.cfg)) for m, member in zip(alone_models, members)]
    together = [test_gpu.losses(t) for t in ensemble.train_together(models, loss, members)]
    return alone, together, [end_difference(a, t, batches(10**6)) for a, t in zip(alone_models, models)]


def noisy(eps: float, generator: torch.Generator):
    """A gradient hook adding ``eps`` times the gradient's root mean square of Gaussian noise from ``generator``."""
    return lambda g: g + eps * g.pow(2).mean().sqrt() * torch.randn(g.shape, generator=generator, device=g.device)


def with_gradient_noise(model: torch.nn.Module, eps: float, device: str) -> torch.nn.Module:
    """``model`` whose every weight gradient gets :func:`noisy` noise, from a generator of its own on
    ``device``, where it trains (the training's random numbers stay as they were)."""
    generator = torch.Generator(device).manual_seed(0)
    for parameter in model.parameters():
        parameter.register_hook(noisy(eps, generator))
    return model


def attending_with(replace) -> ExitStack:
    """A context in which the models' attention (``attend`` of :mod:`ponder.models.transformer` and of
    :mod:`ponder.models.hyper_block`) is ``replace(the module's attend)``."""
    stack = ExitStack()
    for module in (transformer, hyper_block):
        stack.enter_context(patch.object(module, "attend", replace(module.attend)))
    return stack


def attention_gradient_noise(eps: float, device: str) -> ExitStack:
    """A context in which the gradients of every attention's queries, keys and values get :func:`noisy` noise."""
    generator = torch.Generator(device).manual_seed(0)

    def with_noise(original):
        def attend(q, k, v, *args, **kwargs):
            for t in (q, k, v):
                if t.requires_grad:
                    t.register_hook(noisy(eps, generator))
            return original(q, k, v, *args, **kwargs)

        return attend

    return attending_with(with_noise)


def amplification(kind: str, eps: float, device: str, log_every: int = 1, on: str = "weights") -> list[float]:
    """Each seed's largest relative loss difference between training alone and the same with
    gradient noise ``eps`` on its weights (:func:`with_gradient_noise`) or on its attention's
    inputs (:func:`attention_gradient_noise`)."""
    models, members, _, loss = setup(kind, log_every)
    train = lambda model, member: test_gpu.losses(training.train(model, loss, member.batches, member.cfg))  # noqa: E731
    differences = []
    for m, member in zip(models, members):
        clean, noised = train(copy.deepcopy(m), member), copy.deepcopy(m)
        if on == "weights":
            with_gradient_noise(noised, eps, device)
        with attention_gradient_noise(eps, device) if on == "attention" else nullcontext():
            differences.append(largest_difference(clean, train(noised, member)))
    return differences


def gradients_apart(kind: str, step: int, device: str) -> list[dict]:
    """Per seed, how far its gradients of step ``step``'s batch are apart computed stacked and alone,
    at the weights of its run alone after ``step`` steps, and how far each is from the same gradients
    computed alone in float64 (``--gradients``): the path off float64 by more than float32 rounding
    is the one that computes at lower precision."""
    models, members, _, loss = setup(kind, log_every=1)
    cfg = members[0].cfg
    for model, member in zip(models, members):
        trained_for(step, model, loss, member)
        model.to(device).train()
    stacked = ensemble.Stacked(models, cfg)
    stacked.hold(step)
    together, _ = stacked.gradient_function(loss)(ensemble.stacked_batch(members, step, torch.device(device)))
    found = []
    for s, (model, member) in enumerate(zip(models, members)):
        batch = tuple(t.to(device) for t in member.batches(step))
        alone, exact = gradients(model, loss, batch, step, cfg), gradients(copy.deepcopy(model).double(), loss, batch, step, cfg)
        mine = {n: g[s] for n, g in together.items() if n in alone}
        found.append({"furthest": furthest(mine, alone), "above_1e-5": sum(d > 1e-5 for d in apart(mine, alone).values()), "of": len(alone),
                      "alone_from_float64": furthest(alone, exact), "stacked_from_float64": furthest(mine, exact)})
    return found


class Stopped(Exception):
    """Raised by :func:`trained_for`'s batches to end a training early."""


def trained_for(steps: int, model: torch.nn.Module, loss, member: ensemble.Member, run: Run | None = None) -> None:
    """``model`` trained alone for the first ``steps`` steps of the test's training (its schedule and
    hold: ``member.cfg``'s, not those of a training ``steps`` long); with ``run``, checkpointed every
    step, the last one after ``steps`` steps (resuming from its checkpoint where it has one)."""
    def batches(step: int):
        if step == steps:
            raise Stopped
        return member.batches(step)

    cfg = member.cfg if run is None else dataclasses.replace(member.cfg, checkpoint_every=1)
    try:
        training.train(model, loss, batches, cfg, run=run)
    except Stopped:
        pass


def updates_apart(kind: str, step: int, device: str) -> list[dict]:
    """Per seed, how far the update of step ``step`` is apart taken stacked and alone, from the same
    weights and AdamW state: the seed's own after ``step`` steps alone (``--updates``)."""
    if step < 1:
        raise SystemExit("--updates needs steps of at least 1 (the state before the step is a checkpoint of the step before)")
    models, members, _, loss = setup(kind, log_every=1)
    runs = [Run(f"probe/together/{kind}", {"seed": m.cfg.seed, "step": step, "updates": True}, "smoke") for m in members]
    for run in runs:
        shutil.rmtree(run.dir, ignore_errors=True)
    try:
        for model, member, run in zip(copy.deepcopy(models), members, runs):
            trained_for(step, model, loss, member, run)
        # the three checkpoints stacked take the step at the test's learning rate and hold, then each alone
        cfg, stacked, alone = members[0].cfg, copy.deepcopy(models), copy.deepcopy(models)
        optimizers = [training.make_optimizer(model.to(device), cfg) for model in stacked]
        for model, optimizer, run in zip(stacked, optimizers, runs):
            training._restore(run.load_tensors("checkpoint"), model, optimizer)
        before = [{n: p.detach().clone() for n, p in model.named_parameters()} for model in stacked]
        group = ensemble.Stacked(stacked, cfg)
        group.load_member_optimizers(optimizers)
        set_lr(group.optimizer, training.lr_at(step, cfg))
        group.hold(step)
        group.update_function(loss)(ensemble.stacked_batch(members, step, torch.device(device)))
        group.unstack()
        for model, member, run in zip(alone, members, runs):
            trained_for(step + 1, model, loss, member, run)
    finally:
        for run in runs:
            shutil.rmtree(run.dir, ignore_errors=True)
    found = []
    for together, single, b in zip(stacked, alone, before):
        updates = {n: p.detach() - b[n] for n, p in together.named_parameters() if not n.endswith(KEY_BIASES)}
        reference = {n: p.detach() - b[n] for n, p in single.named_parameters() if n in updates}
        moved = {n: d for n, d in reference.items() if d.abs().max() > 0}  # the held parameters do not move
        distances = apart({n: updates[n] for n in moved}, moved)
        found.append({"furthest": furthest({n: updates[n] for n in moved}, moved), "above_1e-5": sum(d > 1e-5 for d in distances.values()), "of": len(moved)})
    return found


def gradients(model: torch.nn.Module, loss, batch, step: int, cfg) -> dict[str, torch.Tensor]:
    """``model``'s gradients of ``loss`` on ``batch`` (its floats in the model's dtype), the hold of
    ``step`` applied, the key biases left out (their gradient is rounding)."""
    training.hold_parameters(model, step, cfg)
    model.zero_grad(set_to_none=True)
    dtype = next(model.parameters()).dtype
    loss(model, tuple(t.to(dtype) if t.is_floating_point() else t for t in batch)).backward()
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None and not n.endswith(KEY_BIASES)}


def apart(tensors: dict[str, torch.Tensor], reference: dict[str, torch.Tensor]) -> dict[str, float]:
    """``||t - ref|| / ||ref||`` per tensor (gradients, or weights), in float64."""
    return {n: ((t.double() - reference[n].double()).norm() / reference[n].double().norm().clamp_min(1e-300)).item() for n, t in tensors.items()}


def furthest(grads: dict[str, torch.Tensor], reference: dict[str, torch.Tensor]) -> list[list]:
    """The three tensors of ``grads`` furthest from ``reference`` (:func:`apart`), ``[[name, distance]]``."""
    return [[n, float(f"{d:.3g}")] for n, d in sorted(apart(grads, reference).items(), key=lambda item: -item[1])[:3]]


@torch.no_grad()
def end_difference(alone: torch.nn.Module, together: torch.nn.Module, batch) -> dict:
    """How far a seed's model trained together ends from the same seed's trained alone: the weight
    tensor furthest apart (``||t - a|| / ||a||``) among the key biases (whose gradient is rounding:
    ``test_act.KEY_BIASES``) and among the others, and on a fresh batch the largest logit
    difference and the examples whose halting step ``N`` (the integer part of ``N + R``) differs.
    Weights close while the losses parted say an example's halting step tipped; weights apart say
    the steps themselves differ."""
    distances = apart(dict(together.named_parameters()), dict(alone.named_parameters()))
    largest = lambda names: max(((n, distances[n]) for n in names), key=lambda item: item[1], default=None)  # noqa: E731
    x = batch[0].to(next(alone.parameters()).device)
    out_a, out_t = alone(x), together(x)
    return {"weights": largest([n for n in distances if not n.endswith(KEY_BIASES)]),
            "key_biases": largest([n for n in distances if n.endswith(KEY_BIASES)]),
            "logits": (out_t.logits - out_a.logits).abs().max().item(),
            "halting_steps_differ": int((out_t.ponder.floor() != out_a.ponder.floor()).sum().item())}


def use_attention(kernels: str):
    """A context in which the models attend with ``kernels``: ``default`` (on CUDA PyTorch's fused
    ``scaled_dot_product_attention``; on the CPU the explicit product for these short sequences,
    :func:`ponder.models.transformer.attend`), ``math`` (the fused function's reference kernel) or
    ``explicit`` (:func:`ponder.models.transformer.explicit_attention`, three plain operations, on
    any device: what the CPU runs) or ``fused`` (``scaled_dot_product_attention`` on any device:
    what CUDA runs)."""
    if kernels == "math":
        return sdpa_kernel(SDPBackend.MATH)
    if kernels == "default":
        return ExitStack()

    def attend(q, k, v, mask=None, causal=False, dropout=0.0):
        if kernels == "explicit" and mask is None and not causal:
            return transformer.explicit_attention(q, k, v, dropout)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, dropout_p=dropout)

    return attending_with(lambda original: attend)


def relative_differences(a: list[float], b: list[float]) -> list[float]:
    """The relative difference of ``b`` from ``a``, step by step."""
    return [abs(y - x) / abs(x) for x, y in zip(a, b)]


def largest_difference(a: list[float], b: list[float]) -> float:
    """The largest relative difference of ``b`` from ``a``, step by step."""
    return max(relative_differences(a, b))


def report(kind: str, setting: str, device: str, log_every: int, alone, together, ends: list[dict], first=None) -> dict:
    """One replay's JSON line; ``first``: the kind's first replay ``(alone, together)`` to measure drift against."""
    line = {"kind": kind, "setting": setting, "device": device, "log_every": log_every,
            "max": [largest_difference(a, t) for a, t in zip(alone, together)],
            "first_step_over_1e-4": [next(((s + 1) * log_every for s, d in enumerate(relative_differences(a, t)) if d > 1e-4), None)
                                     for a, t in zip(alone, together)],
            "by_step": [[float(f"{d:.2g}") for d in relative_differences(a, t)] for a, t in zip(alone, together)],
            "end": ends}
    if first is not None:
        line["alone_drift"] = [largest_difference(a0, a) for a0, a in zip(first[0], alone)]
        line["together_drift"] = [largest_difference(t0, t) for t0, t in zip(first[1], together)]
    return line


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kinds", help="ut_act and/or hyper_act, comma-separated, replayed in this order")
    parser.add_argument("repeats", nargs="?", type=int, default=1)
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--log-every", type=int, default=1, help="the steps whose loss is read back (the test: 5)")
    parser.add_argument("--attention", choices=("default", "math", "explicit", "fused"), default="default", help="the attention kernels (use_attention)")
    parser.add_argument("--grad-noise", type=float, default=0.0, help="instead: alone against alone with this gradient noise (amplification)")
    parser.add_argument("--noise-on", choices=("weights", "attention"), default="weights", help="where --grad-noise goes (amplification)")
    parser.add_argument("--gradients", default="", help="instead: the gradients of these steps, stacked against alone (gradients_apart)")
    parser.add_argument("--updates", default="", help="instead: the whole update of these steps (>= 1), stacked against alone (updates_apart)")
    args = parser.parse_args(argv)
    if args.deterministic and os.environ.get("CUBLAS_WORKSPACE_CONFIG") != DETERMINISTIC_WORKSPACE:
        raise SystemExit(f"--deterministic needs CUBLAS_WORKSPACE_CONFIG={DETERMINISTIC_WORKSPACE} in the environment (cuBLAS reads it when CUDA starts)")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    test_gpu.keep_tf32_off(device=device)  # as the test's fixture does
    torch.use_deterministic_algorithms(args.deterministic, warn_only=True)
    setting = ("deterministic" if args.deterministic else "default") + ("" if args.attention == "default" else f", {args.attention} attention")
    for kind in args.kinds.split(","):
        stepwise = [(steps, field, probe) for steps, field, probe in ((args.updates, "update_at", updates_apart), (args.gradients, "gradients_at", gradients_apart)) if steps]
        for steps, field, probe in stepwise:
            with use_attention(args.attention):
                for step in map(int, steps.split(",")):
                    print(json.dumps({"kind": kind, "setting": setting, "device": device, field: step, "seeds": probe(kind, step, device)}), flush=True)
        if stepwise:
            continue
        if args.grad_noise:
            with use_attention(args.attention):
                print(json.dumps({"kind": kind, "setting": setting, "device": device, "grad_noise": args.grad_noise, "noise_on": args.noise_on,
                                  "max": amplification(kind, args.grad_noise, device, args.log_every, args.noise_on)}), flush=True)
            continue
        first = None
        for _ in range(args.repeats):
            with use_attention(args.attention):
                alone, together, ends = replay(kind, args.log_every)
            print(json.dumps(report(kind, setting, device, args.log_every, alone, together, ends, first)), flush=True)
            first = first or (alone, together)


if __name__ == "__main__":
    main(sys.argv[1:])
