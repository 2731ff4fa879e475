"""``ponder.models.acm_triton``: the fused ACM layer's two Triton kernels compute ``Learners.masked``.

On the CPU the kernels run in Triton's interpreter, which reads ``TRITON_INTERPRET`` when triton is
first imported: each check runs in a fresh interpreter with it set. They are also compiled for an
H100 (sm_90, no GPU needed), which shows they run on its tensor cores with their loads pipelined.
``make test-gpu`` compiles and checks them on CUDA (tests/test_gpu.py)."""

import importlib.util
import os
import subprocess
import sys

import pytest
import torch

from ponder.bench import acm as bench
from ponder.paths import ROOT

POINTERS = {"order": "*i64", "k_sorted": "*i32"} | dict.fromkeys(
    ("z", "w1", "b1", "hidden", "w2", "out"), "*bf16"
)  # the kernels' tensors (bench's dtypes)
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("triton") is None, reason="needs triton (its interpreter runs the kernels on the CPU)"
)


def interpreted(script: str) -> str:
    """stdout of ``script`` run by a fresh Python with Triton's interpreter on; fails on its errors."""
    done = subprocess.run(
        [sys.executable, "-c", "import ponder, torch\n" + script],
        cwd=ROOT,
        env=os.environ | {"TRITON_INTERPRET": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_fused_kernels_compute_the_masked_layer():
    out = interpreted("""
from ponder.bench import acm
from ponder.models import acm_triton
z, _, learners, _ = acm.layer_parts(2)
generator = torch.Generator().manual_seed(0)
cases = [acm.random_choices(len(z), f, acm.N, generator, mix) for mix in acm.MIXES for f in (0.25, 0.6)] + [
    torch.zeros(len(z), dtype=torch.long)
]
with torch.inference_mode():
    print(acm_triton.check(learners, z, cases))
    k = torch.tensor([4, 0, 1, 3] * (len(z) // 4) + [2] * (len(z) % 4))
    torch.testing.assert_close(acm_triton.fused(learners, z, k), learners.grouped(z, k), rtol=1e-4, atol=1e-5)
""")
    assert float(out.split()[-1]) < 1e-5  # the largest relative error over the cases, every row written


def test_the_check_catches_wrong_sums_unwritten_rows_and_refuses_what_the_kernels_cannot_do():
    interpreted("""
from ponder.models import acm_triton
from ponder.models.acm import Learners
learners = Learners(32, 32, 4, 32).eval()
z, k = torch.randn(40, 32), torch.tensor([1, 3] * 20)
real = acm_triton.fused
def refused(call, message):
    try:
        call()
    except (AssertionError, ValueError) as error:
        assert message in str(error), error
    else:
        raise AssertionError(f"not refused: {message}")
with torch.no_grad():
    assert acm_triton.check(learners, z, [k]) < 1e-5
    # one learner short
    acm_triton.fused = lambda learners, z, k, out=None: real(learners, z, (k - 1).clamp(min=0), out)
    refused(lambda: acm_triton.check(learners, z, [k]), "differs from masked")
    # the last row left
    acm_triton.fused = lambda learners, z, k, out=None: (real(learners, z[:-1], k[:-1], out[:-1]), out)[1]
    refused(lambda: acm_triton.check(learners, z, [k]), "not written")
    acm_triton.fused = real
    acm_triton.UNIT_MULTIPLE["cpu"] = 64  # the guard, on learners of 32 units
    refused(lambda: acm_triton.fused(learners, z, k), "multiple of 64")
    learners.activation = "relu"
    refused(lambda: acm_triton.fused(learners, z, k), "GELU")
""")


def test_the_bench_times_fused_only_on_a_gpu():
    z, _, learners, _ = bench.layer_parts(2)
    assert bench.fused_layer(learners, z, [torch.ones(len(z), dtype=torch.long)]) == (None, {})
    result = bench.measure(repeats=2, images=2, fractions=(0.25, 1.0), threads=1)
    assert all("grouped_ratios" in c and "fused_ratio" not in c and "replayed_ratio" not in c for c in result["cases"])
    assert "replayed_error" not in result  # nothing to replay: not an error
    assert list(bench.ratio_table([result]).columns[-2:]) == ["naive / dense", "grouped / dense"]


def test_the_bench_and_figure_take_a_fused_execution_where_one_is_given():
    # the GPU's path through bench.acm and the acm-9 plot, with the kernels in the interpreter
    out = interpreted("""
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from ponder.bench import acm
from ponder.models import acm_triton
from ponder.studies.acm.plots import draw_latency
acm.fused_layer = lambda learners, z, cases: (
    acm_triton.fused,
    {"fused_max_relative_error": acm_triton.check(learners, z, cases)},
)
result = acm.measure(repeats=2, images=1, fractions=(0.25, 1.0), threads=1)
assert result["fused_max_relative_error"] < 1e-5
assert all(len(c["fused_ratios"]) == 2 and c["fused_s"] > 0 for c in result["cases"])
assert result["replayed_error"].startswith("RuntimeError")  # no CUDA graphs on the CPU: eager times only
assert list(acm.ratio_table([result]).columns[-3:]) == list(acm.RATIO_COLUMNS[:3])
acm.replayed = lambda fn: fn  # the replayed path's bookkeeping, eagerly: each timed against the dense MLP "replayed"
result = acm.measure(repeats=2, images=1, fractions=(0.25, 1.0), threads=1)
assert "replayed_error" not in result and all(
    len(c["replayed_ratios"]) == 2 and c["dense_replayed_s"] > 0 for c in result["cases"]
)
assert all(c["replayed_ratio"] == c["replayed_s"] / c["dense_replayed_s"] for c in result["cases"])
assert list(acm.ratio_table([result]).columns[-4:]) == list(acm.RATIO_COLUMNS)
fig, ax = plt.subplots()
draw_latency(ax, result)
print(sorted(line.get_label() for line in ax.get_lines()))
""")
    assert (
        "ACM, fused (two Triton kernels)" in out
        and "ACM, grouped (sorted by k)" in out
        and "ACM, fused, replayed" in out
    )


@pytest.mark.parametrize("config", range(4))
def test_the_kernels_compile_for_an_h100_on_tensor_cores_and_pipelined(config):
    # no GPU needed: Triton compiles for a named target (sm_90) as the JIT would at the first call,
    # which specialises the pointers and the sizes that are multiples of 16 (all but the token count here)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from ponder.models import acm_triton

    chosen = acm_triton.CUDA_CONFIGS[config]
    for kernel in (acm_triton.hidden_kernel, acm_triton.output_kernel):
        signature = {
            name: "constexpr" if param.is_constexpr else POINTERS.get(name, "i32")
            for name, param in zip(kernel.arg_names, kernel.params)
        }
        aligned = {
            (i,): [["tt.divisibility", 16]]
            for i, (name, kind) in enumerate(signature.items())
            if kind != "constexpr" and name != "tokens"
        }
        source = ASTSource(
            fn=kernel, signature=signature, constexprs=chosen.kwargs | {"PRECISION": "tf32"}, attrs=aligned
        )
        ptx = triton.compile(
            source,
            target=GPUTarget("cuda", 90, 32),
            options=dict(num_warps=chosen.num_warps, num_stages=chosen.num_stages, **acm_triton.FP_FUSION),
        ).asm["ptx"]
        assert "wgmma.mma_async" in ptx and "cp.async" in ptx, kernel.__name__
