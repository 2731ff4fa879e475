"""Is training several seeds in one batched step faster? ``python -m ponder.bench seeds``.

The C-PVR notebooks train each model kind on 3 seeds. ``torch.func`` can stack the 3 models'
weights (``stack_module_state``) and take all their gradients in one ``vmap``-ed call, so every
operation runs once on 3 times the data instead of 3 times: a gain where a step is bound by the
overhead per operation rather than by the arithmetic. This benchmark measures it, on one thread,
for the fixed-depth kinds at ``quick``'s sizes on the CPU and at ``gpu``'s on a GPU (where the
overhead is the kernel launches; the ACT kinds, whose loop runs all its steps masked inside ``vmap``
where alone it stops early, are timed as whole training steps by ``python -m ponder.bench train``'s
``together_*`` rates, :mod:`ponder.runner.gpu.ensemble`)::

    separate:  for each of the 3 models: loss(model_s, batch_s).backward()
    batched:   vmap(grad(loss))(stacked weights, stacked batches)

Both compute the gradients only (no optimizer step), on the same 3 batches; the result is the
per-round ratio ``batched / separate`` (below 1: batching pays) with mean and standard error over
interleaved rounds. ``tests/test_bench_seeds.py`` checks that the two compute the same gradients.

On a GPU each is also timed with the call recorded as a CUDA graph and replayed (``captured_*``):
eagerly, the host's time per operation may hide what batching saves on the device, and the runs
that capture their step (:mod:`ponder.runner.gpu.cuda_graphs`) pay only the device's time.
"""

from functools import partial

import torch
import torch.nn.functional as F

from ..ledger.verdicts import Estimate
from ..profiles import by_profile
from ..runner.gpu.cuda_graphs import CapturedStep
from ..runner.gpu.ensemble import Stacked
from ..runner.timing import median, time_rounds
from ..runner.training import TrainConfig, default_device, num_threads
from ..studies.hyper_ut import cpvr as hyper_ut
from ..tasks import cpvr
from . import write_result

KINDS = ("transformer", "ut", "hyper")  # fixed depth: no data-dependent halting
SEEDS = 3


def setup(
    kind: str, profile: str = "quick", seeds: int = SEEDS
) -> tuple[list[torch.nn.Module], torch.Tensor, torch.Tensor]:
    """``seeds`` models of ``kind`` (seed ``s`` initialises model ``s``) and one C-PVR batch each,
    stacked: ``x [seeds, B, L]``, ``y [seeds, B]``; on :func:`~ponder.runner.training.default_device`."""
    sizes = by_profile(hyper_ut.SIZES, profile)
    device = default_device()
    models = []
    for s in range(seeds):
        torch.manual_seed(s)
        models.append(hyper_ut.build(kind, sizes["length"], sizes["model"]).to(device))
    batches = [
        cpvr.sample(sizes["batch_size"], sizes["length"], list(sizes["train_hops"]), seed=s) for s in range(seeds)
    ]
    return models, torch.stack([b[0] for b in batches]).to(device), torch.stack([b[2] for b in batches]).to(device)


def separate_gradients(
    models: list[torch.nn.Module], x: torch.Tensor, y: torch.Tensor
) -> list[dict[str, torch.Tensor]]:
    """Each model's gradients on its own batch, one model after the other."""
    out = []
    for model, xs, ys in zip(models, x, y):
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(xs).logits, ys).backward()
        out.append({name: p.grad for name, p in model.named_parameters()})
    return out


def batched_gradients(models: list[torch.nn.Module]):
    """A function ``(x, y) -> {name: [seeds, ...] gradient}``: one ``vmap``-ed call over the stacked
    weights (:meth:`ponder.runner.gpu.ensemble.Stacked.gradient_function`, what the runs trained together use)."""
    gradients = Stacked(models, TrainConfig(steps=1, batch_size=1)).gradient_function(
        lambda net, batch: F.cross_entropy(net(batch[0]).logits, batch[1])
    )
    return lambda x, y: gradients((x, y))[0]


def replayed(call):
    """``call`` (no arguments) recorded as a CUDA graph after its warm-up, then replayed."""
    step = CapturedStep(lambda batch: call())
    return lambda: step(())


def measure(profile: str = "quick", repeats: int = 10) -> dict:
    """Per kind: seconds of the separate and the batched gradients of 3 seeds (median over rounds)
    and the per-round ratio batched / separate (mean ± s.e.), on one thread; on CUDA the same
    again with both captured (keys prefixed ``captured_``)."""
    result = {}
    with num_threads(1):
        for kind in KINDS:
            models, x, y = setup(kind, profile)
            batched = batched_gradients(models)
            calls = {"separate": partial(separate_gradients, models, x, y), "batched": partial(batched, x, y)}
            if x.is_cuda:
                calls |= {f"captured_{name}": replayed(call) for name, call in list(calls.items())}
            prefixes = [name.removesuffix("separate") for name in calls if name.endswith("separate")]
            rounds = time_rounds(calls, repeats=repeats)
            result[kind] = {}
            for prefix in prefixes:
                separate, together = rounds[f"{prefix}separate"], rounds[f"{prefix}batched"]
                ratio = Estimate.of([b / s for b, s in zip(together, separate)])
                result[kind] |= {
                    f"{prefix}separate_s": median(separate),
                    f"{prefix}batched_s": median(together),
                    f"{prefix}batched_over_separate": ratio.mean,
                    f"{prefix}se": ratio.se,
                }
    return result


def main() -> None:
    cuda = torch.cuda.is_available()
    profile = "gpu" if cuda else "quick"
    device = torch.cuda.get_device_name() if cuda else "cpu"
    write_result(
        "seeds", {"profile": profile, "device": device, "seeds": SEEDS, "threads": 1, "kinds": measure(profile)}
    )


if __name__ == "__main__":
    main()
