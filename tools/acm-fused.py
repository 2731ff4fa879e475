"""The grouped ACM layer as two Triton kernels that never wait for the host, timed against the
dense MLP and ``Learners.grouped`` in the same rounds (a prototype for acm-9 on a GPU).

    PYTHONPATH=lib python3 tools/acm-fused.py [OUT.json]

Why: on the H100, ``Learners.grouped`` at one learner of four took 1.55x the dense MLP of the ViT-B
layer (bfloat16, 128 images x 197 tokens; ideal 0.25x), with one k per token and 2.2x with mixed
k (figures/gpu/RUN.md). It counts the tokens per ``k`` on the host (a wait for the device), then
sorts, gathers, runs one matrix-product pair per group and scatters. The paper's Triton kernel was
never released. Here the layer ``h(z_t, k_t) = Σ_{n ≤ k_t} W2_n act(W1_n z_t + b1_n)`` is:

1. the tokens sorted by ``k``, largest first, on the device (``order``, ``k_sorted``);
2. :func:`hidden_kernel`: for each tile of ``BLOCK_M`` sorted tokens and ``BLOCK_N`` hidden units, the
   tile's tokens gathered from ``z`` and ``act(z W1ᵀ + b1)`` computed; a tile of units beyond the
   tile's largest ``k`` exits at once;
3. :func:`output_kernel`: for each tile of sorted tokens and ``BLOCK_N`` outputs, the hidden units
   up to the tile's largest ``k`` times ``W2ᵀ`` (each token's units beyond its own ``k`` read as 0),
   stored to the tokens' own rows.

The work is the learners each tile runs (a tile mixing two ``k`` runs the larger), with no host
synchronisation, no per-group launches and no separate gather or scatter. The hidden activations
pass through memory once (``[tokens, N·hidden]``, only the units run are written and read).

On a GPU the script first checks the kernels against ``Learners.masked`` (bfloat16 tolerance, every
output row written), then times dense, grouped and fused (each with the gate's forward, as
``python -m ponder.bench acm`` does) at the bench's fractions and mixes, and prints the ratios to
dense. Without a GPU it checks the kernels in Triton's interpreter (``TRITON_INTERPRET=1``, float32,
the CPU layer's sizes) and times nothing. Not part of the library until a GPU has measured it.
"""
import ponder  # noqa: F401  (before torch: pinned numerics)
import json
import math
import sys

import torch
import triton
import triton.language as tl

from ponder.bench import acm, median, time_rounds
from ponder.models.acm import Learners

CPU_IMAGES = 2  # Triton's interpreter runs every program in numpy: the check on a few tokens
CPU_BLOCKS = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
# on a GPU each kernel is autotuned over these (at its first call for a layer size)
CUDA_CONFIGS = [triton.Config(dict(BLOCK_M=m, BLOCK_N=n, BLOCK_K=64), num_warps=w, num_stages=st)
                for m, n, w, st in ((128, 128, 8, 3), (128, 128, 4, 4), (64, 128, 4, 4), (128, 64, 4, 4))]
UNIT_MULTIPLE = {"cuda": 128, "cpu": CPU_BLOCKS["BLOCK_N"]}  # every BLOCK_N divides it: the hidden grid covers the units exactly


@triton.jit
def hidden_kernel(z, order, k_sorted, w1, b1, hidden, tokens, d_in, units, stride_z, stride_w1, stride_hidden,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """``hidden[r, u] = gelu(z[order[r]] · w1[u] + b1[u])`` at least for ``u < k_sorted[r] · units``
    (``r`` a sorted position; the tile's units beyond its largest ``k`` stay unwritten)."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < tokens
    k_rows = tl.load(k_sorted + rows, mask=row_ok, other=0)
    first = tl.program_id(1) * BLOCK_N
    if first < tl.max(k_rows, axis=0) * units:  # units beyond every token's learners: nothing to do
        token = tl.load(order + rows, mask=row_ok, other=0)
        cols = first + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for start in range(0, d_in, BLOCK_K):
            inner = start + tl.arange(0, BLOCK_K)
            a = tl.load(z + token[:, None] * stride_z + inner[None, :], mask=row_ok[:, None] & (inner[None, :] < d_in), other=0.0)
            b = tl.load(w1 + cols[None, :] * stride_w1 + inner[:, None], mask=inner[:, None] < d_in, other=0.0)
            acc += tl.dot(a, b)
        acc += tl.load(b1 + cols)[None, :].to(tl.float32)
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))  # exact GELU
        tl.store(hidden + rows[:, None] * stride_hidden + cols[None, :], acc.to(hidden.dtype.element_ty), mask=row_ok[:, None])


@triton.jit
def output_kernel(hidden, order, k_sorted, w2, out, tokens, d_out, units, stride_hidden, stride_w2, stride_out,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """``out[order[r]] = hidden[r, :K_r] · w2[:, :K_r]ᵀ``, ``K_r = k_sorted[r] · units``: the loop runs to the
    tile's largest ``K_r`` (none for a tile of ``k = 0``), each row's units beyond its own read as 0."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < tokens
    run_rows = tl.load(k_sorted + rows, mask=row_ok, other=0) * units
    run = tl.max(run_rows, axis=0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, run, BLOCK_K):
        inner = start + tl.arange(0, BLOCK_K)
        a = tl.load(hidden + rows[:, None] * stride_hidden + inner[None, :], mask=inner[None, :] < run_rows[:, None], other=0.0)
        b = tl.load(w2 + cols[None, :] * stride_w2 + inner[:, None], mask=cols[None, :] < d_out, other=0.0)
        acc += tl.dot(a, b)
    token = tl.load(order + rows, mask=row_ok, other=0)
    tl.store(out + token[:, None] * stride_out + cols[None, :], acc.to(out.dtype.element_ty), mask=row_ok[:, None] & (cols[None, :] < d_out))


def fused(learners: Learners, z: torch.Tensor, k: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """``h(z_t, k_t)`` per token, ``z [tokens, d_in]``, ``k [tokens]`` -> ``[tokens, d_out]`` (into
    ``out`` where given): what ``learners.grouped(z, k)`` computes, by the two kernels (module docstring)."""
    if learners.activation != "gelu":
        raise ValueError(f"the kernels apply GELU, not {learners.activation}")
    units, multiple = learners.hidden, UNIT_MULTIPLE[z.device.type]
    if units % multiple:
        raise ValueError(f"each learner's hidden={units} must be a multiple of {multiple}")
    k_sorted, order = torch.sort(k.to(torch.int32), descending=True, stable=True)
    tokens = len(z)
    hidden = torch.empty(tokens, learners.n * units, device=z.device, dtype=z.dtype)
    out = torch.empty(tokens, learners.d_out, device=z.device, dtype=z.dtype) if out is None else out
    launch(hidden_kernel, lambda meta: (triton.cdiv(tokens, meta["BLOCK_M"]), learners.n * units // meta["BLOCK_N"]), z.device,
           z, order, k_sorted, learners.w1, learners.b1, hidden, tokens, learners.d_in, units, z.stride(0), learners.w1.stride(0), hidden.stride(0))
    launch(output_kernel, lambda meta: (triton.cdiv(tokens, meta["BLOCK_M"]), triton.cdiv(learners.d_out, meta["BLOCK_N"])), z.device,
           hidden, order, k_sorted, learners.w2, out, tokens, learners.d_out, units, hidden.stride(0), learners.w2.stride(0), out.stride(0))
    return out


TUNED = {}  # kernel -> its autotuned version (CUDA)


def launch(kernel, grid, device: torch.device, *args) -> None:
    """``kernel[grid](*args)``: autotuned over :data:`CUDA_CONFIGS` on a GPU (once per token count and
    learner size), with :data:`CPU_BLOCKS` in the interpreter."""
    if device.type == "cpu":
        kernel[grid(CPU_BLOCKS)](*args, **CPU_BLOCKS)
        return
    if kernel not in TUNED:
        TUNED[kernel] = triton.autotune(configs=CUDA_CONFIGS, key=["tokens", "units"])(kernel)
    TUNED[kernel][grid](*args)


def check(learners: Learners, z: torch.Tensor, generator: torch.Generator, fractions=acm.FRACTIONS) -> float:
    """The largest relative error of :func:`fused` against ``Learners.masked`` over the bench's cases
    (every ``k`` mix and fraction, and all tokens at ``k = 0``); raises where it exceeds the dtype's
    tolerance or a row stayed unwritten (the output is poisoned with NaN first)."""
    tolerance = 2e-2 if z.dtype == torch.bfloat16 else 1e-4
    worst = 0.0
    cases = [acm.random_choices(len(z), f, acm.N, generator, mix) for mix in acm.MIXES for f in fractions] + [torch.zeros(len(z), dtype=torch.long)]
    for k in cases:
        k = k.to(z.device)
        expected = learners.masked(z, (torch.arange(acm.N, device=z.device) < k[:, None]).to(z.dtype)).float()
        got = fused(learners, z, k, out=torch.full_like(expected, math.nan, dtype=z.dtype)).float()
        if not torch.isfinite(got).all():
            raise AssertionError("an output row was not written")
        error = ((got - expected).norm() / expected.norm()).item() if k.any() else got.abs().max().item()
        if error > tolerance:
            raise AssertionError(f"fused differs from masked by {error:.2e} (k mean {k.float().mean():.2f})")
        worst = max(worst, error)
    return worst


def measure(repeats: int = 30) -> dict:
    """:func:`check`, then dense, grouped and fused (each with the gate) timed in the same rounds at the
    bench's fractions and mixes; ratios to dense as in ``python -m ponder.bench acm``."""
    z, mlp, learners, gate = acm.layer_parts(None if torch.cuda.is_available() else CPU_IMAGES)
    generator = torch.Generator().manual_seed(0)
    result = {"device": torch.cuda.get_device_name() if z.is_cuda else "cpu", "dtype": str(z.dtype).removeprefix("torch."), "tokens": len(z),
              "width": learners.d_in, "hidden": learners.n * learners.hidden, "learners": learners.n, "triton": triton.__version__}
    with torch.inference_mode():
        result["max_relative_error"] = check(learners, z, generator)
        if not z.is_cuda:
            return result
        result["cases"] = []
        for mix in acm.MIXES:
            for fraction in acm.FRACTIONS:
                k = acm.random_choices(len(z), fraction, acm.N, generator, mix).to(z.device)
                rounds = time_rounds({"dense": lambda: mlp(z), "grouped": lambda: (gate(z), learners.grouped(z, k)),
                                      "fused": lambda: (gate(z), fused(learners, z, k))}, repeats, warmup=3)
                t = {name: median(times) for name, times in rounds.items()}
                result["cases"].append({"mix": mix, "fraction": fraction, "mean_learners": k.float().mean().item(), "dense_s": t["dense"],
                                        "grouped_ratio": t["grouped"] / t["dense"], "fused_ratio": t["fused"] / t["dense"],
                                        "fused_ideal_ratio": t["fused"] / t["dense"] / (k.float().mean().item() / acm.N) if k.any() else math.inf})
    return result


def main(out: str | None = None) -> dict:
    result = measure()
    for case in result.get("cases", []):
        print(f"{case['mix']:7s} fraction {case['fraction']:.2f}  grouped {case['grouped_ratio']:.2f}x  fused {case['fused_ratio']:.2f}x dense"
              f"  ({case['fused_ideal_ratio']:.2f}x the ideal)")
    print(json.dumps({k: v for k, v in result.items() if k != "cases"}))
    if out:
        with open(out, "w") as f:
            json.dump(result, f, indent=2)
    return result


if __name__ == "__main__":
    main(*sys.argv[1:])
