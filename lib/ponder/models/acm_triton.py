"""The grouped ACM layer as two Triton kernels that never wait for the host (``fused``, acm-9 on a GPU).

An ACM layer gives token ``t`` the first ``k_t`` of its ``N`` learners (:class:`ponder.models.acm.Learners`):

    h(z_t, k_t) = Σ_{n ≤ k_t} W2_n act(W1_n z_t + b1_n)

With the learners packed (``W1 [N·u, d_in]``, ``W2 [d_out, N·u]``, ``u`` hidden units each), the sum
is one product over the first ``K_t = k_t · u`` hidden units. ``Learners.grouped`` counts the tokens
per ``k`` on the host (a wait for the device), sorts, gathers, runs a product pair per group and
scatters: on the H100 at ViT-B sizes that took 1.55x the dense MLP at one learner of four, where
the work is 0.25x. The paper's Triton kernel was never released; here:

1. the tokens are sorted by ``k``, largest first, on the device (``order``, ``k_sorted``);
2. :func:`hidden_kernel`: for each tile of ``BLOCK_M`` sorted tokens and ``BLOCK_N`` hidden units,
   ``act(z W1ᵀ + b1)`` of the tile's tokens, gathered from ``z`` by the kernel itself; a tile of
   units beyond its tokens' largest ``K`` exits at once;
3. :func:`output_kernel`: for each tile of sorted tokens and ``BLOCK_N`` outputs, the hidden units up
   to the tile's largest ``K`` times ``W2ᵀ`` (each token's units beyond its own ``K_t`` read as 0),
   stored to the tokens' own rows of the output.

The work is the learners each tile runs (a tile mixing two ``k`` runs the larger), with no host
synchronisation, two launches and no separate gather or scatter; the hidden activations
(``[tokens, N·u]``, only the units run) pass through memory once, and each kernel runs a tile of
tokens' column tiles in consecutive programs (:func:`tile`), so the tile's rows are read from
memory once, not once per column tile. On a GPU each kernel is autotuned
over :data:`CUDA_CONFIGS`; on the CPU the kernels run only in Triton's interpreter
(``TRITON_INTERPRET=1`` set before triton is imported), which the tests use. :func:`check` compares
the kernels with ``Learners.masked``; ``python -m ponder.bench acm`` times them only after it.
"""

import math

import torch
import triton
import triton.language as tl

from .acm import Learners

# the interpreter (CPU) runs every program in numpy: small tiles
CPU_BLOCKS = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
CUDA_CONFIGS = [
    triton.Config(dict(BLOCK_M=m, BLOCK_N=n, BLOCK_K=64), num_warps=w, num_stages=st)
    for m, n, w, st in ((128, 128, 8, 3), (128, 128, 4, 4), (64, 128, 4, 4), (128, 64, 4, 4))
]
# every BLOCK_N divides it, so the hidden kernel's grid covers each learner's units exactly
UNIT_MULTIPLE = {"cuda": 128, "cpu": CPU_BLOCKS["BLOCK_N"]}
# a * b + c as one rounding (FMA) in the bias and GELU arithmetic: Triton's default until 3.9, off by
# default from 3.10, so named here; the interpreter ignores it
FP_FUSION = dict(enable_fp_fusion=True)


@triton.jit
def tile(program, col_tiles):
    """``(row tile, column tile)`` of a program of a one-dimensional grid, the column tiles of a row
    tile in consecutive programs: they run together and share its tokens' rows in the L2 cache (the
    weights, a few MB, stay there anyway)."""
    return program // col_tiles, program % col_tiles


@triton.jit
def hidden_kernel(
    z,
    order,
    k_sorted,
    w1,
    b1,
    hidden,
    tokens,
    d_in,
    units,
    hidden_units,
    stride_z,
    stride_w1,
    stride_hidden,
    PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """``hidden[r, c] = gelu(z[order[r]] · w1[c] + b1[c])`` at least for ``c < k_sorted[r] · units``
    (``r`` a sorted position; a tile's units beyond its largest ``k`` stay unwritten)."""
    row_tile, col_tile = tile(tl.program_id(0), hidden_units // BLOCK_N)
    rows = row_tile * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < tokens
    k_rows = tl.load(k_sorted + rows, mask=row_ok, other=0)
    first = col_tile * BLOCK_N
    if first < tl.max(k_rows, axis=0) * units:  # units beyond every token's learners: nothing to do
        token = tl.load(order + rows, mask=row_ok, other=0)
        cols = first + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for start in range(0, d_in, BLOCK_K):
            inner = start + tl.arange(0, BLOCK_K)
            a = tl.load(
                z + token[:, None] * stride_z + inner[None, :],
                mask=row_ok[:, None] & (inner[None, :] < d_in),
                other=0.0,
            )
            b = tl.load(w1 + cols[None, :] * stride_w1 + inner[:, None], mask=inner[:, None] < d_in, other=0.0)
            acc += tl.dot(a, b, input_precision=PRECISION)
        acc += tl.load(b1 + cols)[None, :].to(tl.float32)
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))  # exact GELU
        tl.store(
            hidden + rows[:, None] * stride_hidden + cols[None, :],
            acc.to(hidden.dtype.element_ty),
            mask=row_ok[:, None],
        )


@triton.jit
def output_kernel(
    hidden,
    order,
    k_sorted,
    w2,
    out,
    tokens,
    d_out,
    units,
    stride_hidden,
    stride_w2,
    stride_out,
    PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """``out[order[r]] = hidden[r, :K_r] · w2[:, :K_r]ᵀ``, ``K_r = k_sorted[r] · units``: the loop runs to
    the tile's largest ``K_r`` (none for a tile of ``k = 0``), each row's units beyond its own read as 0."""
    row_tile, col_tile = tile(tl.program_id(0), tl.cdiv(d_out, BLOCK_N))
    rows = row_tile * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < tokens
    run_rows = tl.load(k_sorted + rows, mask=row_ok, other=0) * units
    run = tl.max(run_rows, axis=0)
    cols = col_tile * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, run, BLOCK_K):
        inner = start + tl.arange(0, BLOCK_K)
        a = tl.load(
            hidden + rows[:, None] * stride_hidden + inner[None, :], mask=inner[None, :] < run_rows[:, None], other=0.0
        )
        b = tl.load(w2 + cols[None, :] * stride_w2 + inner[:, None], mask=cols[None, :] < d_out, other=0.0)
        acc += tl.dot(a, b, input_precision=PRECISION)
    token = tl.load(order + rows, mask=row_ok, other=0)
    tl.store(
        out + token[:, None] * stride_out + cols[None, :],
        acc.to(out.dtype.element_ty),
        mask=row_ok[:, None] & (cols[None, :] < d_out),
    )


def fused(learners: Learners, z: torch.Tensor, k: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """``h(z_t, k_t)`` per token, ``z [tokens, d_in]``, ``k [tokens]`` in ``0..N`` -> ``[tokens, d_out]``
    (into ``out`` where given): what ``learners.grouped(z, k)`` computes, by the two kernels."""
    if learners.activation != "gelu":
        raise ValueError(f"the kernels apply GELU, not {learners.activation}")
    units, multiple = learners.hidden, UNIT_MULTIPLE[z.device.type]
    if units % multiple:
        raise ValueError(f"each learner's hidden={units} must be a multiple of {multiple}")
    # float32 products in TF32 where torch's are (Triton's default, and what bfloat16 inputs use), else exact
    precision = "ieee" if z.dtype == torch.float32 and not torch.backends.cuda.matmul.allow_tf32 else "tf32"
    k_sorted, order = torch.sort(k.to(torch.int32), descending=True, stable=True)
    tokens = len(z)
    hidden = torch.empty(tokens, learners.n * units, device=z.device, dtype=z.dtype)
    out = torch.empty(tokens, learners.d_out, device=z.device, dtype=z.dtype) if out is None else out
    launch(
        hidden_kernel,
        lambda meta: (triton.cdiv(tokens, meta["BLOCK_M"]) * (learners.n * units // meta["BLOCK_N"]),),
        z.device,
        z,
        order,
        k_sorted,
        learners.w1,
        learners.b1,
        hidden,
        tokens,
        learners.d_in,
        units,
        learners.n * units,
        z.stride(0),
        learners.w1.stride(0),
        hidden.stride(0),
        precision,
    )
    launch(
        output_kernel,
        lambda meta: (triton.cdiv(tokens, meta["BLOCK_M"]) * triton.cdiv(learners.d_out, meta["BLOCK_N"]),),
        z.device,
        hidden,
        order,
        k_sorted,
        learners.w2,
        out,
        tokens,
        learners.d_out,
        units,
        hidden.stride(0),
        learners.w2.stride(0),
        out.stride(0),
        precision,
    )
    return out


TUNED = {}  # kernel -> its autotuned version (CUDA)


def launch(kernel, grid, device: torch.device, *args) -> None:
    """``kernel[grid](*args)``: autotuned over :data:`CUDA_CONFIGS` on a GPU (once per token count and
    learner size), with :data:`CPU_BLOCKS` in the interpreter; :data:`FP_FUSION` either way."""
    if device.type == "cpu":
        kernel[grid(CPU_BLOCKS)](*args, **CPU_BLOCKS, **FP_FUSION)
        return
    if kernel not in TUNED:
        TUNED[kernel] = triton.autotune(configs=CUDA_CONFIGS, key=["tokens", "units"])(kernel)
    TUNED[kernel][grid](*args, **FP_FUSION)


def check(learners: Learners, z: torch.Tensor, cases: list[torch.Tensor]) -> float:
    """The largest relative error of :func:`fused` against ``Learners.masked`` over the learner counts
    ``cases`` (each ``[tokens]``); raises where it exceeds the dtype's tolerance (2e-2 in bfloat16,
    1e-4 in float32) or an output row stayed unwritten (the output is filled with NaN first)."""
    tolerance = 2e-2 if z.dtype == torch.bfloat16 else 1e-4
    worst = 0.0
    for k in cases:
        k = k.to(z.device)
        expected = learners.masked(z, (torch.arange(learners.n, device=z.device) < k[:, None]).to(z.dtype)).float()
        got = fused(learners, z, k, out=torch.full_like(expected, math.nan, dtype=z.dtype)).float()
        if not torch.isfinite(got).all():
            raise AssertionError("an output row was not written")
        error = ((got - expected).norm() / expected.norm()).item() if k.any() else got.abs().max().item()
        if error > tolerance:
            raise AssertionError(f"fused differs from masked by {error:.2e} (k mean {k.float().mean():.2f})")
        worst = max(worst, error)
    return worst
