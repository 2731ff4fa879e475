"""The notebooks' regression cells: their text, the masking of timings, the skip on unpinned
platforms, ``refresh`` (stored outputs and the diff it prints) and the regression cell of every
training notebook."""

import json
import os
import subprocess
import sys

import nbformat
import numpy as np
import pandas as pd
import pytest

from ponder import numerics
from ponder.bench.acm import RATIO_COLUMNS, ratio_table
from ponder.ledger import rows as ledger
from ponder.ledger import verdicts
from ponder.repro import execution, regression

# the widget notebooks: their runs are checked where they are trained (hyper_ut, survey_*)
LAB = {"explore_hops", "hyper_ut_explorer", "survey_knobs"}


@pytest.mark.parametrize(
    "value, text",
    [
        (0.123456, "0.123"),
        (0.0012345, "0.00123"),
        (0.0, "0.000"),
        (-5.3e-16, "0.000"),
        (-2.5, "-2.500"),
        (-0.0004, "-0.0004"),
        (float("nan"), "—"),
        (3, "3"),
        (np.int64(7), "7"),
        (np.float32(0.5), "0.500"),
        (True, "True"),
        ("ACM", "ACM"),
    ],
)
def test_numbers_are_rounded_for_reading_but_keep_small_values(value, text):
    assert regression.number(value) == text


def test_a_table_aligns_its_columns_and_shows_a_named_index():
    frame = pd.DataFrame({"accuracy": [0.5, 0.875], "steps": [3, 12]}, index=pd.Index(["UT", "Hyper-UT"], name="model"))
    assert regression.table(frame).splitlines() == [
        "model     accuracy  steps",
        "UT           0.500      3",
        "Hyper-UT     0.875     12",
    ]
    assert regression.table(pd.Series([0.25], name="loss")).splitlines() == [
        " loss",
        "0.250",
    ]  # a default index is left out


def test_a_timing_column_must_exist():
    with pytest.raises(KeyError, match="seconds"):
        regression.table(pd.DataFrame({"accuracy": [0.5]}), timings=["seconds"])


def timing_frame(accuracy: float, seconds: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "method": ["ACT", "PonderNet"],
            "accuracy": [accuracy, 0.5],
            "inference s": seconds,
            "time / twin": [s * 3 for s in seconds],
        }
    )


def test_the_sanitize_file_masks_timings_and_nothing_else():
    """What nbval compares: timings of any width are masked, a changed accuracy is not."""
    timings = ["inference s", "time / twin"]
    stored = regression.sanitize(regression.table(timing_frame(0.75, [0.012, 0.5]), timings))
    assert stored == regression.sanitize(regression.table(timing_frame(0.75, [12.5, 0.0004]), timings))
    assert stored != regression.sanitize(regression.table(timing_frame(0.76, [0.012, 0.5]), timings))
    assert "~timed" in stored and "0.750" in stored


def test_ledger_rows_of_timing_targets_are_masked():
    row = {
        "claim": "grouped ACM is fast (cpu, float32, 2 thread(s), single k per token)",
        "paper": "—",
        "noise": "d = +0.1 ± 0.02 (n=10)",
        "profile": "smoke",
    }
    timed = [
        {**row, "id": "acm-9", "ours": ours, "verdict": verdict}
        for ours, verdict in (("0.31x", "holds"), ("0.52x", "does not hold"))
    ]
    assert regression.sanitize(regression.rows_text(timed[:1])) == regression.sanitize(regression.rows_text(timed[1:]))
    plain = [{**row, "id": "acm-3", "ours": ours, "verdict": "holds"} for ours in ("0.31", "0.52")]
    assert regression.sanitize(regression.rows_text(plain[:1])) != regression.sanitize(regression.rows_text(plain[1:]))


def test_report_prints_the_frames_and_this_profiles_rows(monkeypatch, capsys):
    monkeypatch.setattr(ledger, "_RECORDED", {})
    ledger.claim(
        "hut-3",
        "Hyper-UT is best beyond training",
        ours=0.42,
        verdict=verdicts.greater([0.4, 0.4, 0.4], [0.5, 0.5, 0.6]),
        profile="smoke",
    )
    ledger.claim("hut-10", "pool sizes", ours="see figure", verdict=None, profile="smoke")
    ledger.claim("hut-2", "another profile's row", ours=1, verdict=None, profile="quick")
    regression.report("smoke", pd.DataFrame({"accuracy": [0.5]}))
    assert capsys.readouterr().out.splitlines() == [
        "smoke profile: the numbers the regression tests check (~, timed: wall-clock, masked)",
        "",
        "accuracy",
        "   0.500",
        "",
        "[hut-3] Hyper-UT is best beyond training",
        "  ours 0.42 | does not hold | d = -0.133 ± 0.033 (n=3), p = 0.029",
        "[hut-10] pool sizes",
        "  ours see figure | describes",
    ]


def test_the_acm_latency_table_names_threads_without_the_core_count():
    case = {"fraction": 0.25, "mean_learners": 1.0, "naive_ratio": 1.1, "grouped_ratio": 0.4}
    frame = ratio_table(
        [
            {"threads": 1, "label": "1", "mix": "single", "cases": [case]},
            {"threads": 16, "label": "every core", "mix": "mixed", "cases": [case]},
        ]
    )
    assert frame["threads"].tolist() == ["1", "every core"]
    assert list(frame.columns[-2:]) == list(RATIO_COLUMNS[:2])  # no fused column where it was not timed (the CPU)


def test_numbers_are_unpinned_off_x86_with_avx2_when_asked_and_on_a_gpu(monkeypatch):
    import torch

    monkeypatch.setattr(numerics, "unsupported_reason", lambda: None)
    monkeypatch.setattr(numerics, "pinned", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert regression.unpinned_reason() is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda: "NVIDIA H100")
    assert "CUDA device (NVIDIA H100)" in regression.unpinned_reason()
    monkeypatch.setattr(numerics, "pinned", lambda: False)
    assert "not pinned" in regression.unpinned_reason()
    monkeypatch.undo()
    monkeypatch.setattr("platform.machine", lambda: "aarch64")
    assert regression.unpinned_reason().startswith("the CPU is aarch64, not x86-64 (aarch64,")
    monkeypatch.setenv("PONDER_UNPINNED", "1")
    assert regression.unpinned_reason().startswith("PONDER_UNPINNED=1")


class Item:
    """What the hook reads of one of nbval's cell items."""

    def __init__(self, tags, pinned_bits=False):
        self.cell = nbformat.v4.new_code_cell("print(1)", metadata={"tags": tags})
        self.markers = []
        self.pinned_bits = pinned_bits

    def add_marker(self, marker):
        self.markers.append(marker)

    def get_closest_marker(self, name):
        return name == "pinned_bits" and self.pinned_bits or None


def test_only_the_tagged_cells_and_pinned_bits_tests_are_skipped_with_the_reason():
    items = [
        Item(["nbval-check-output", regression.TAG]),
        Item(["nbval-check-output"]),
        Item([]),
        Item([], pinned_bits=True),
    ]
    assert regression.skip_unpinned(items, None) == 0
    assert regression.skip_unpinned(items, "the CPU is arm64") == 2
    assert items[3].markers[0].name == "skip"
    (marker,) = items[0].markers
    assert (
        marker.name == "skip"
        and "the CPU is arm64" in marker.kwargs["reason"]
        and "x86-64 with AVX2" in marker.kwargs["reason"]
    )
    assert not items[1].markers and not items[2].markers


def nbval(tmp_path, **env) -> subprocess.CompletedProcess:
    """nbval on a notebook whose regression cell stores a wrong number and whose other checked cell a right one."""
    cells = [
        nbformat.v4.new_code_cell(
            "print(1 + 1)",
            metadata={"tags": ["nbval-check-output", regression.TAG]},
            execution_count=1,
            outputs=[nbformat.v4.new_output("stream", name="stdout", text="3\n")],
        ),
        nbformat.v4.new_code_cell(
            "print(2 + 2)",
            metadata={"tags": ["nbval-check-output"]},
            execution_count=2,
            outputs=[nbformat.v4.new_output("stream", name="stdout", text="4\n")],
        ),
    ]
    nb = nbformat.v4.new_notebook(
        cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    )
    nbformat.write(nb, tmp_path / "numbers.ipynb")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "numbers.ipynb",
        "-p",
        "ponder.repro.regression",
        "-p",
        "no:cacheprovider",
        "--nbval-lax",
        "--nbval-current-env",
        "-rs",
        "-q",
    ]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env={**os.environ, **env})


def test_nbval_skips_the_regression_cell_where_numbers_are_not_pinned(tmp_path):
    run = nbval(tmp_path, PONDER_UNPINNED="1")
    assert "1 passed, 1 skipped" in run.stdout, run.stdout + run.stderr
    assert "promised only on x86-64 with AVX2" in run.stdout and "PONDER_UNPINNED=1" in run.stdout


def test_nbval_checks_the_regression_cell_where_numbers_are_pinned(tmp_path):
    if regression.unpinned_reason() is not None:
        pytest.skip(f"the numbers are not pinned here: {regression.unpinned_reason()}")
    run = nbval(tmp_path)
    assert "1 failed, 1 passed" in run.stdout, run.stdout + run.stderr


def code(tags, outputs=(), count=None, cell_id="c"):
    return {
        "cell_type": "code",
        "execution_count": count,
        "id": cell_id,
        "metadata": {"tags": list(tags)},
        "outputs": list(outputs),
        "source": [],
    }


def stream(text):
    return {"name": "stdout", "output_type": "stream", "text": [text]}


def test_refresh_stores_checked_outputs_keeps_masked_changes_and_prints_the_diff(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    checked = ["nbval-check-output"]
    source = {
        "cells": [
            code([], cell_id="a"),
            code(checked, [stream("accuracy 0.500\n")], 2, "b"),
            code(checked, [stream("  ~0.100\n")], 3, "t"),
        ],
        "metadata": {},
    }
    (folder / "toy.ipynb").write_text(json.dumps(source, indent=1))
    ran = {
        "cells": [
            code([], [stream("trained\n")], 1, "a"),
            code(checked, [stream("accuracy 0.625\n")], 2, "b"),
            code(checked, [stream(" ~12.000\n")], 3, "t"),
        ]
    }
    monkeypatch.setattr(execution, "NOTEBOOKS", folder)
    monkeypatch.setattr(regression, "execute_smoke", lambda path, seed: ran)
    monkeypatch.setattr(regression, "unpinned_reason", lambda: None)
    regression.refresh()
    cells = json.loads((folder / "toy.ipynb").read_text())["cells"]
    assert cells[0]["outputs"] == [] and cells[0]["execution_count"] is None  # unchecked: cleared
    assert cells[1]["outputs"] == ran["cells"][1]["outputs"]  # a changed number is stored
    assert cells[2]["outputs"] == source["cells"][2]["outputs"]  # a changed timing is not
    assert capsys.readouterr().out.splitlines() == [
        "--- notebooks/toy.ipynb (stored)",
        "+++ notebooks/toy.ipynb (new)",
        "@@ -1,4 +1,4 @@",
        " # code cell 1 (b)",
        "-accuracy 0.500",
        "+accuracy 0.625",
        " # code cell 2 (t)",
        "   ~0.100",
    ]
    regression.refresh()
    assert capsys.readouterr().out == "notebooks/toy.ipynb: checked outputs unchanged\n"


def test_refresh_refuses_where_numbers_are_not_pinned(monkeypatch):
    monkeypatch.setattr(regression, "unpinned_reason", lambda: "the CPU is arm64")
    with pytest.raises(SystemExit, match="the CPU is arm64"):
        regression.refresh(["hyla_lm"])


@pytest.mark.parametrize("path", execution.find(), ids=lambda p: p.stem)
def test_every_training_notebook_ends_with_its_regression_cell(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if regression.TAG in c.metadata.get("tags", [])]
    if path.stem in LAB:
        assert not tagged
        return
    assert len(tagged) == 1 and tagged[0] is [c for c in nb.cells if c.cell_type == "code"][-1]
    (cell,) = tagged
    assert "nbval-check-output" in cell.metadata.tags and "report(profile" in cell.source
    assert cell.outputs and cell.outputs[0].text.startswith("smoke profile: "), (
        "run make refresh to store the smoke numbers"
    )
