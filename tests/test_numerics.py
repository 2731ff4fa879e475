"""Pinned numerics (ponder.numerics): the same bits as recorded on AMD and Intel CPUs, the pins win
over what the environment asks for, reach papermill kernels and prefetch workers, a late import is
warned about, and every notebook imports ponder first."""

import ast
import itertools
import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import nbformat
import pytest

from ponder import numerics, products
from ponder.repro import execution
from ponder.runner import parallel

HERE = Path(__file__).resolve().parent
RECORDED = json.loads((HERE / "numerics_hashes.json").read_text())["machines"]
OTHER_DISPATCH = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "AVX2,STRICT",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "OPENBLAS_CORETYPE": "Sandybridge",
    "OMP_NUM_THREADS": "2",
    "MKL_NUM_THREADS": "2",
    "OPENBLAS_NUM_THREADS": "2",
}
pytestmark = pytest.mark.skipif(
    numerics.unsupported_reason() is not None, reason=f"numerics are not pinned here: {numerics.unsupported_reason()}"
)


def clean_env(**extra) -> dict:
    """This environment without the pins (as a fresh shell would have it), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINS and k != "PONDER_UNPINNED"}
    return env | {"PYTHONHASHSEED": "0"} | extra


def probe(env: dict) -> dict:
    done = subprocess.run(
        [sys.executable, str(HERE / "numerics_probe.py"), "20"],
        env=env | {"TQDM_DISABLE": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def this_cpu() -> str:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    return next(
        (line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
        "an unnamed CPU",
    )


@pytest.fixture(scope="module")
def pinned_hashes() -> dict:
    return probe(clean_env())


@pytest.mark.parametrize("machine", RECORDED)
def test_the_same_bits_as_recorded_on(machine, pinned_hashes):
    """Every operation, data set and training of tests/numerics_probe.py gives the bits recorded on
    ``machine`` (the parameter names its vendor); the message names the CPU this test ran on."""
    recorded = RECORDED[machine]
    differ = sorted(name for name, value in recorded.items() if pinned_hashes[name] != value)
    assert differ == [], f"on {this_cpu()}, not the bits recorded on {machine}: {differ}"


def test_the_recorded_machines_agree_where_both_ran():
    """The machines' hashes were recorded apart; where two hold an entry they are equal, and the Intel
    machines' together cover every single operation of the probe the AMD machine ran."""
    for one, other in itertools.combinations(RECORDED.values(), 2):
        shared = one.keys() & other.keys()
        assert {name: one[name] for name in shared} == {name: other[name] for name in shared}
    (amd, *_), intel = ([RECORDED[m] for m in RECORDED if m.startswith(v)] for v in ("AMD", "Intel"))
    assert {name for name in amd if name.startswith("op: ")} <= set().union(*intel)


def test_the_pins_win_over_another_dispatch(pinned_hashes):
    """Every model family trains to the same bits, and numpy's OpenBLAS computes the same t-SNE map
    and probe, whether the environment asked for AVX2 or for ATen's default kernels, MKL's
    vendor-dependent AVX2 branch, SSE4.1 oneDNN, OpenBLAS's AVX-only kernels and two threads; unpinned, the
    same request changes the bits (so the test can see a difference)."""
    plain, other = pinned_hashes, probe(clean_env(**OTHER_DISPATCH))
    assert plain == other and plain["capability"] == "AVX2" and plain["threads"] == 1
    unpinned = probe(clean_env(PONDER_UNPINNED="1", **OTHER_DISPATCH))
    assert unpinned["capability"] == "DEFAULT"
    assert [unpinned[k] != plain[k] for k in plain if k.startswith("train: ")].count(True) >= 3
    assert unpinned["data: hyla_latent t-SNE"] != plain["data: hyla_latent t-SNE"]


def report(path: str) -> None:
    """A prefetch job, never cached (so a worker runs it): write what numerics this worker runs with."""

    import torch

    Path(path).write_text(
        json.dumps(
            {
                "pinned": numerics.pinned(),
                "routed": products.routed(),
                "capability": torch.backends.cpu.get_cpu_capability(),
                "threads": torch.get_num_threads(),
                "pid": os.getpid(),
            }
        )
    )


def test_prefetch_workers_and_papermill_kernels_run_pinned(tmp_path, run_one_cell):
    files = [tmp_path / f"worker{i}.json" for i in range(2)]
    assert parallel.prefetch([partial(report, str(f)) for f in files], workers=2) == 2
    for f in files:
        written = json.loads(f.read_text())
        assert written.pop("pid") != os.getpid()
        assert written == {"pinned": True, "routed": True, "capability": "AVX2", "threads": 1}

    outputs = run_one_cell(
        "import torch, os\n"
        "print(torch.backends.cpu.get_cpu_capability(), torch.get_num_threads(), os.environ.get('MKL_CBWR'))\n"
        "import ponder\n"
        "print(ponder.products.routed())"
    )
    printed = outputs[0]["text"].split()
    assert printed == ["AVX2", "1", "COMPATIBLE", "True"]


@pytest.mark.parametrize("first", ["torch", "numpy", "matplotlib.pyplot"])
def test_importing_torch_or_numpy_first_is_warned_about_and_pins_nothing(first):
    """torch's dispatch, and that of numpy's OpenBLAS (which computes the routed products), is chosen as
    it loads: a process that imported either before ponder says so, and its runs are keyed unpinned."""
    done = subprocess.run(
        [sys.executable, "-c", f"import {first}, ponder; print(ponder.numerics.describe(), ponder.products.routed())"],
        env=clean_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    warning = next(line for line in done.stderr.splitlines() if "imported before ponder" in line)
    assert ("torch" if first == "torch" else "numpy") in warning and "MKL_CBWR=COMPATIBLE" in warning
    assert done.stdout.split() == ["unpinned", "False"]


@pytest.mark.parametrize("path", execution.find(), ids=lambda p: p.stem)
def test_every_notebook_imports_ponder_before_anything_else(path):
    """So that a notebook opened in any kernel, not only those ``make lab`` and ``make figures`` start with
    the pins set, loads numpy and torch pinned (matplotlib and pandas import numpy)."""
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    imports = (
        node for source in cells for node in ast.parse(source).body if isinstance(node, ast.Import | ast.ImportFrom)
    )
    first = next(imports)
    assert (first.names[0].name if isinstance(first, ast.Import) else first.module).split(".")[0] == "ponder"


NUMPY_LEVELS = (
    "import json, ponder, numpy; "
    "from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__; "
    "print(json.dumps([k for k in __cpu_dispatch__ if __cpu_features__[k]]))"
)


def test_numpys_own_loops_run_at_the_avx2_level():
    """numpy dispatches its own loops by CPU (X86_V4 and AVX512_* on an AVX-512 machine): pinned, it
    uses none above X86_V3 (AVX2); unpinned, an AVX-512 machine shows the difference."""

    def levels(env):
        return set(
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", NUMPY_LEVELS], env=env, capture_output=True, text=True, check=True
                ).stdout
            )
        )

    pinned, unpinned = levels(clean_env()), levels(clean_env(PONDER_UNPINNED="1"))
    assert pinned <= {"X86_V3"} and pinned <= unpinned
    if "avx512f" in Path("/proc/cpuinfo").read_text():
        assert "X86_V4" in unpinned - pinned
