"""The measured-times record (``figures/TIMES.json``) and the document blocks rendered from it."""

import json
import subprocess
import sys
import time

import pytest

from ponder.repro import expected, measured, readme


def test_an_entry_is_written_beside_the_others_with_its_machine_and_commit(tmp_path):
    measured.write(tmp_path, "test", {"wall minutes": 12.5})
    measured.write(tmp_path, "figures-quick-cold", {"wall minutes": 70.3})
    entries = json.loads((tmp_path / "TIMES.json").read_text())
    assert list(entries) == ["figures-quick-cold", "test"]
    assert entries["test"]["wall minutes"] == 12.5 and entries["test"]["machine"].split("-core ")[0].isdigit()
    measured.write(tmp_path, "test", {"wall minutes": 9.0})
    assert measured.read(tmp_path)["test"]["wall minutes"] == 9.0 and "figures-quick-cold" in measured.read(tmp_path)


def test_a_whole_profile_is_keyed_by_the_cache_it_began_with():
    assert measured.figures_key("quick", cold=True, trained=73) == "figures-quick-cold"
    assert measured.figures_key("quick", cold=False, trained=0) == "figures-quick-cached"
    assert measured.figures_key("cpu", cold=False, trained=120) == "figures-cpu"


CPVR, FUZZY = "hyper_ut.train_cpvr", "hyla.train_fuzzy"
TRAINED = [  # two declared runs of 1,000 and 2,000 steps, and a function job
    (measured.Planned(CPVR, "hut/cpvr/ut_act", 1000), 120.0),
    (measured.Planned(CPVR, "hut/cpvr/ut_act", 2000), 60.0),
    (measured.Planned(FUZZY), 30.0),
]


def test_a_figures_entry_sums_the_runs_per_training_function(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "weights").write_bytes(b"0" * 2**20)
    entry = measured.figures_entry(600.0, TRAINED, 3 * 2**30, tmp_path, workers=2, calibrated=0.5)
    assert entry["wall minutes"] == 10.0 and entry["runs trained"] == 3 and entry["run CPU-minutes"] == 3.5
    assert entry["by function"] == {"hyla.train_fuzzy": [1, 0.5], "hyper_ut.train_cpvr": [2, 3.0]}
    assert entry["by run"] == {"hut/cpvr/ut_act": [2, 3.0, 3000]}  # the function job counts no steps
    assert entry["peak memory GB"] == 3.0 and entry["run cache GB"] == 0.0
    measured.write(tmp_path, "figures-quick-cold", entry)
    line = measured.line(tmp_path, "figures-quick-cold")
    assert line.startswith("10.0 min wall on a ") and "3 runs trained in 3.5 CPU-minutes, peak memory 3.0 GB" in line
    table = measured.by_function(tmp_path, "figures-quick-cold").splitlines()
    assert table[2] == "| `hyper_ut.train_cpvr` | 2 | 3.0 |" and table[3] == "| `hyla.train_fuzzy` | 1 | 0.5 |"


def test_a_block_of_an_entry_not_measured_says_so_and_the_commands_table_names_each_machine(tmp_path):
    assert readme.render("time figures-cpu", tmp_path).startswith("not measured yet")
    measured.write(tmp_path, "test", {"wall minutes": 17.6})
    rows = readme.render("commands", tmp_path).splitlines()
    assert rows[0] == "| command | what it does | wall time | peak memory, run cache | measured on |"
    test_row = next(r for r in rows if r.startswith("| `make test`"))
    assert "| 18 min |" in test_row and test_row.endswith(f"| {measured.read(tmp_path)['test']['machine']} |")
    assert "| not measured yet | — | — |" in next(r for r in rows if r.startswith("| `make figures PROFILE=cpu`"))
    estimate = {"wall minutes": 600.0, "runs to train": 400, "run CPU-minutes": 1150.0, "rests on": "..."}
    measured.write(tmp_path, "estimate-cpu", estimate)  # python -m ponder.repro plan --profile cpu --record
    cpu_row = next(r for r in readme.render("commands", tmp_path).splitlines() if "PROFILE=cpu" in r)
    assert (
        "| not measured yet; expected about 10 h (400 runs, 19 CPU-hours) by `python -m ponder.repro plan` |" in cpu_row
    )
    assert cpu_row.endswith(f"| {measured.read(tmp_path)['estimate-cpu']['machine']} |")
    measured.write(tmp_path, "figures-cpu", measured.figures_entry(60.0, [], 2**30, tmp_path, 2, 0.5))
    cpu_row = next(r for r in readme.render("commands", tmp_path).splitlines() if "PROFILE=cpu" in r)
    assert "| 1 min | 1.0 GB, 0.0 GB |" in cpu_row  # measured: the estimate is no longer shown


def test_peak_memory_counts_the_processes_it_started():
    peak = measured.PeakMemory(every=0.05).start()
    child = subprocess.Popen([sys.executable, "-c", "import time; b = bytearray(200 * 2**20); time.sleep(1.5)"])
    time.sleep(1.0)
    alone = measured.tree_memory()
    child.wait()
    assert peak.stop() >= alone > measured.tree_memory() + 150 * 2**20


def test_a_run_is_counted_under_the_function_that_trains_it():
    from functools import partial

    from ponder.repro.measured import trainer
    from ponder.studies.hyper_ut import cpvr as hyper_ut

    assert trainer(partial(hyper_ut.train_cpvr, "ut_act", "quick", 0)) == "hyper_ut.cpvr.train_cpvr"
    assert trainer(hyper_ut.cpvr_run("ut_act", "quick", 0)) == "hyper_ut.train_cpvr"  # a declared run: its own name


def test_the_expected_time_scales_each_runs_recorded_time_by_this_machines_speed(tmp_path):
    # recorded: 10 min wall on 2 workers, 3.5 CPU-minutes of training: 8.25 min of notebooks beside it
    measured.write(tmp_path, "figures-quick-cold", measured.figures_entry(600.0, TRAINED, 0, tmp_path, 2, 0.5))
    assert expected.expected(tmp_path, "quick", [], 2, 0.0) is None  # not calibrated
    other = measured.Planned("survey.other")
    estimate = expected.expected(tmp_path, "quick", [measured.Planned(CPVR), other], 2, 1.0)
    # twice as slow here: (90 s + 70 s, the mean of every run for a function not recorded) / 2 + 8.25 min, times 2
    assert estimate["wall minutes"] == pytest.approx(2 * ((90 + 70) / 2 / 60 + 8.25), abs=0.05)
    assert estimate["run CPU-minutes"] == pytest.approx(2 * 160 / 60, abs=0.05) and estimate["runs to train"] == 2
    assert estimate["by function"] == {CPVR: [1, 3.0], "survey.other": [1, 2.3]}
    assert "figures-quick-cold" in estimate["rests on"] and "2.00x" in estimate["rests on"]
    half = expected.expected(tmp_path, "quick", [measured.Planned(CPVR), other], 2, 1.0, share=0.5)  # half of them
    assert half["wall minutes"] == pytest.approx(2 * ((90 + 70) / 2 / 60 + 8.25 / 2), abs=0.05)


def test_a_profile_not_yet_recorded_is_expected_from_the_steps_of_its_runs_at_quicks_seconds_per_step(tmp_path):
    assert expected.expected(tmp_path, "cpu", [measured.Planned(CPVR)], 2, 0.5) is None  # no record at all
    measured.write(tmp_path, "figures-quick-cold", measured.figures_entry(600.0, TRAINED, 0, tmp_path, 2, 0.5))
    # ut_act took 180 s for 3,000 steps at quick: 0.06 s a step; every name's runs, 180 s for 3,000 steps, too
    planned = [
        measured.Planned(CPVR, "hut/cpvr/ut_act", 5000),  # 300 s
        measured.Planned(CPVR, "hut/cpvr/transformer", 1000),  # a kind quick did not train: the mean step, 60 s
        measured.Planned(FUZZY),  # no steps: a run of the mean, 70 s
    ]
    estimate = expected.expected(tmp_path, "cpu", planned, 2, 0.5)
    assert estimate["run CPU-minutes"] == pytest.approx((300 + 60 + 70) / 60, abs=0.05)
    assert estimate["wall minutes"] == pytest.approx((300 + 60 + 70) / 2 / 60 + 8.25, abs=0.05)
    assert "seconds per step" in estimate["rests on"]
    assert expected.run_seconds(tmp_path, "cpu")(planned[0]) == pytest.approx(300)
    measured.write(tmp_path, "figures-cpu", measured.figures_entry(60.0, TRAINED[:1], 0, tmp_path, 2, 0.5))
    assert expected.run_seconds(tmp_path, "cpu")(planned[0]) == pytest.approx(120)  # its own record, per run


def test_a_job_is_planned_with_its_function_name_and_steps():
    from ponder.repro.measured import planned
    from ponder.studies.hyla.experiments import fuzzy_setup, tuned
    from ponder.studies.hyper_ut import cpvr as hyper_ut

    spec = hyper_ut.cpvr_run("ut_act", "quick", 0)
    assert planned(spec) == measured.Planned(CPVR, spec.name, spec.config["train"]["steps"])
    chosen = tuned("fuzzy", fuzzy_setup("cpu"), "cpu", 1)  # chosen on a grid at cpu
    assert (
        planned(chosen).name == chosen.among[0].name
        and planned(chosen).steps == chosen.among[0].config["train"]["steps"]
    )


def test_a_duration_reads_in_minutes_then_hours():
    assert expected.duration(25.4) == "25 min" and expected.duration(119.0) == "119 min"
    assert expected.duration(408.0) == "6.8 h"


def test_the_calibration_times_a_fixed_piece_of_training():
    assert 0 < expected.calibration(rounds=1) < 30


def test_the_limit_table_has_a_row_per_family_with_its_parts_in_ms(tmp_path):
    assert readme.render("limit", tmp_path).startswith("not measured yet")
    parts = {"products": 2.0, "other kernels": 3.0, "Python and dispatch": 1.5, "optimizer": 0.5, "data": 0.25}
    row = {"family": "C-PVR ut_act", "step_ms": 7.25, "limit_ms": 0.5, "distance": 14.5, "parts_ms": parts}
    measured.write(tmp_path, measured.LIMIT, {"profile": "quick", "matmul_gflops": 41.6, "families": [row]})
    lines = readme.render("limit", tmp_path).splitlines()
    assert lines[0].startswith("On a ") and "at 42 GFLOP/s" in lines[0]
    assert lines[2].startswith("| family | step | products alone | distance | products | other kernels |")
    assert lines[4] == "| C-PVR ut_act | 7.2 | 0.50 | 14× | 2.0 | 3.0 | 1.5 | 0.5 | 0.2 |"
