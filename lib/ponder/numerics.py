"""Pinned numerics: the same bits from the same run on Intel and AMD x86-64 CPUs with AVX2.

A float32 sum's last bits depend on the order of its terms, and the order depends on which SIMD
code path MKL, ATen and oneDNN pick for the CPU at hand and on how many threads split the work.
The ACM's hard gates and ACT's halting thresholds turn last-bit differences into different runs.
So before torch and numpy are imported, ``import ponder`` fixes all of it:

========================  ============================  ===========================================================
variable                  value                         what it pins
========================  ============================  ===========================================================
MKL_CBWR                  COMPATIBLE                    MKL's conditional numerical reproducibility branch
ATEN_CPU_CAPABILITY       avx2                          the ATen kernels' SIMD level
ONEDNN_MAX_CPU_ISA        AVX2                          oneDNN's instruction set
OPENBLAS_CORETYPE         Haswell                       the kernels of numpy's and scipy's OpenBLAS (t-SNE, probes)
NPY_DISABLE_CPU_FEATURES  X86_V4 AVX512_ICL AVX512_SPR  numpy's own SIMD loops: its AVX2 level (X86_V3)
OMP_NUM_THREADS           1                             one thread for every computation a figure shows
MKL_NUM_THREADS           1
OPENBLAS_NUM_THREADS      1
========================  ============================  ===========================================================

OpenBLAS picks its kernels by CPU too: on one machine, asking for its AVX-only kernels changes a
t-SNE embedding and a logistic-regression probe in every bit (tests/test_numerics.py), and an
AVX-512 machine picks its own kernels by default; ``Haswell`` is the AVX2 set, the one an AMD Zen
already chooses. numpy's own loops (``NPY_DISABLE_CPU_FEATURES``, numpy 2's names) pick their level
by CPU as well: on an AVX-512 machine they moved a legend of acm-5's PDF by 4e-5 pt against the
figure made on an AVX2 machine (its PNG was the same); held at AVX2, the PDF was the same too.

MKL is the one library that also chooses by vendor: under ``AVX2,STRICT`` (or ``SSE4_2``, ``AVX``)
an Intel CPU runs other GEMM, FFT and vector-math code than an AMD one, and the results differ
(GEMMs of 8x8x8 and 2048x64x10, the STFT, exp/log/sin/cos/tanh, grid sampling, attention).
``COMPATIBLE`` is MKL's vendor-independent branch: with it every operation of
``tests/numerics_probe.py`` gives the same bits on two Intel Xeons (AVX-512) as on an AMD EPYC
(``tests/numerics_hashes.json`` holds the machines' hashes, ``tests/test_numerics.py`` compares).
Its GEMMs are slow, so wherever the pins apply ``import ponder`` sends the float32 matrix products
to numpy's OpenBLAS, which picks its kernels by instruction set alone (:mod:`ponder.products`); what
the pins still cost each family's training steps, ``python -m ponder.bench numerics`` measures
(docs/reproducibility.md).
ATen's dropout draws its mask with MKL on Intel only; :mod:`ponder.models.dropout` draws it the
same way everywhere. MKL's vector square root (``torch.sqrt`` on the CPU) is not correctly rounded,
and which results miss depends on the processor's square-root estimate, which no setting pins;
:mod:`ponder.exact` takes the square roots whose bits decide a run correctly rounded.

The values *override* what the environment asked for (a machine choosing by itself is what they
guard against). Every entry point imports ``ponder`` first (``make figures | results | test | lab``,
``python -m ponder.*``), and the processes it starts (papermill kernels, prefetch workers,
torchrun workers) inherit the environment. Where identity cannot be promised — not x86-64, no
AVX2, or ``PONDER_UNPINNED=1`` — nothing is pinned and :func:`pin` says so once. A run's cache
key includes :func:`describe`, so pinned and unpinned runs never mix. Timing benchmarks ask for
their own thread counts with :func:`ponder.runner.training.num_threads`.
"""

import os
import platform
import sys
import warnings

PINS = {
    "MKL_CBWR": "COMPATIBLE",
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}


def unsupported_reason() -> str | None:
    """Why this machine cannot be pinned (``None`` if it can)."""
    if os.environ.get("PONDER_UNPINNED") == "1":
        return "PONDER_UNPINNED=1"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"the CPU is {platform.machine()}, not x86-64"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = next((line for line in cpuinfo if line.startswith("flags")), "")
    except OSError:
        return "the CPU's instruction sets cannot be read (/proc/cpuinfo)"
    if " avx2" not in flags:
        return "the CPU has no AVX2"
    return None


def pinned() -> bool:
    """Whether this process runs with every pin in place."""
    return all(os.environ.get(name) == value for name, value in PINS.items())


# what ponder.products.route does wherever the numerics are pinned (import ponder calls it)
PRODUCTS = "float32 CPU products through numpy's OpenBLAS"


def describe() -> str:
    """The numeric configuration, part of every run's cache key."""
    return "pinned " + ",".join(f"{k}={v}" for k, v in PINS.items()) + f"; {PRODUCTS}" if pinned() else "unpinned"


def pin() -> bool:
    """Set the pins in this process's environment (inherited by its children); ``True`` if pinned.

    Called by ``import ponder``. If torch or numpy was imported first, its dispatch is already
    chosen (numpy's OpenBLAS, which computes the routed products, picks its kernels and threads as it
    loads): warn, saying what to set, and pin nothing, unless the environment already held the pins.
    """
    reason = unsupported_reason()
    if reason is not None:
        if not os.environ.get("PONDER_UNPINNED_SAID"):
            os.environ["PONDER_UNPINNED_SAID"] = "1"  # once per process tree
            warnings.warn(
                f"ponder runs unpinned ({reason}): results may differ in the last bits from the published ones",
                stacklevel=3,
            )
        return False
    first = [name for name in ("torch", "numpy") if name in sys.modules]
    if first and not pinned():
        settings = " ".join(f"{k}={v}" for k, v in PINS.items())
        warnings.warn(
            f"{' and '.join(first)} imported before ponder, so the numerics are not pinned; start Python with "
            f"{settings} (or import ponder first) to get the published bits",
            stacklevel=3,
        )
        return False
    os.environ.update(PINS)
    return True
