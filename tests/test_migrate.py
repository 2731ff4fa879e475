"""``python -m ponder.repro.migrate``: run folders renamed from an older tree's keys to today's, every one accounted
for."""

import json
import shutil
import subprocess

from ponder.paths import ROOT
from ponder.repro import migrate
from ponder.runner.runs import config_key

MODULE = "ponder.studies.survey.parity"
CONFIG = {"halting": "act", "steps": 10, "train": {"lr": 1e-3, "seed": 0}}


def test_a_run_keyed_by_older_code_moves_to_todays_key_and_a_stranger_is_named(tmp_path):
    old = tmp_path / "old" / "lib"
    shutil.copytree(ROOT / "lib" / "ponder", old / "ponder", ignore=shutil.ignore_patterns("__pycache__"))
    with (old / "ponder" / "studies" / "survey" / "parity.py").open("a") as source:
        source.write("\n\ndef helper_moved_away():\n    return 1\n")  # code that trains nothing differently
    old_key = migrate.keys_at(old, [(CONFIG, MODULE)])[0]
    assert old_key != config_key(CONFIG, [MODULE])  # the older code's key is not today's
    cache = tmp_path / "results"
    folders = cache / "survey" / "parity" / "act"
    run, stranger = folders / old_key, folders / "0123456789abcdef"
    for folder in (run, stranger):
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps(CONFIG))
    assert migrate.finished_runs(cache) == [stranger, run]
    moves = migrate.plan(old, ROOT / "lib", [run, stranger])
    assert moves == {run: (run.parent / config_key(CONFIG, [MODULE]), CONFIG), stranger: None}


def test_a_run_that_names_its_base_by_key_moves_to_the_key_it_has_with_the_bases_key_of_today(tmp_path):
    old = tmp_path / "old" / "lib"
    shutil.copytree(ROOT / "lib" / "ponder", old / "ponder", ignore=shutil.ignore_patterns("__pycache__"))
    with (old / "ponder" / "studies" / "survey" / "parity.py").open("a") as source:
        source.write("\n\ndef helper_moved_away():\n    return 1\n")
    base_old = migrate.keys_at(old, [(CONFIG, MODULE)])[0]
    built = {"base": base_old, "train": {"lr": 3e-4}}
    built_old = migrate.keys_at(old, [(built, MODULE)])[0]
    cache = tmp_path / "results"
    base, head = cache / "parity" / "base" / base_old, cache / "parity" / "head" / built_old
    for folder, config in ((base, CONFIG), (head, built)):
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps(config))
    moves = migrate.plan(old, ROOT / "lib", [head, base])  # the dependent first: the order is found, not given
    base_today = config_key(CONFIG, [MODULE])
    built_today = {**built, "base": base_today}
    assert moves == {
        base: (base.parent / base_today, CONFIG),
        head: (head.parent / config_key(built_today, [MODULE]), built_today),
    }


def test_the_modules_that_define_runs_are_the_experiments():
    modules = migrate.experiment_modules(ROOT / "lib")
    assert {"ponder.studies.hyper_ut.cpvr", "ponder.studies.acm.phases", MODULE} <= set(modules)
    assert not any(m.endswith(("__init__", "__main__")) for m in modules)


def test_a_run_of_a_module_that_moved_is_keyed_by_its_name_today(tmp_path):
    old = tmp_path / "old" / "lib"
    shutil.copytree(ROOT / "lib" / "ponder", old / "ponder", ignore=shutil.ignore_patterns("__pycache__"))
    before = old / "ponder" / "studies" / "survey" / "parity_runs.py"
    (old / "ponder" / "studies" / "survey" / "parity.py").rename(before)
    old_module = "ponder.studies.survey.parity_runs"
    old_key = migrate.keys_at(old, [(CONFIG, old_module)])[0]
    assert old_module in migrate.experiment_modules(old) and old_key != config_key(CONFIG, [MODULE])
    run = tmp_path / "results" / "parity" / old_key
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps(CONFIG))
    moves = migrate.plan(old, ROOT / "lib", [run], {old_module: MODULE})
    assert moves == {run: (run.parent / config_key(CONFIG, [MODULE]), CONFIG)}


def test_git_names_the_modules_that_moved(tmp_path):
    assert migrate.module_name("lib/ponder/studies/acm/__init__.py") == "ponder.studies.acm"
    source = tmp_path / "lib" / "ponder" / "phases.py"
    source.parent.mkdir(parents=True)
    source.write_text("".join(f"def step_{i}():\n    return {i}\n\n\n" for i in range(20)))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "a"], cwd=tmp_path, check=True)
    (tmp_path / "lib" / "ponder" / "studies").mkdir()
    subprocess.run([*git, "mv", "lib/ponder/phases.py", "lib/ponder/studies/phases.py"], cwd=tmp_path, check=True)
    assert migrate.moved_modules("HEAD", tmp_path) == {"ponder.phases": "ponder.studies.phases"}
