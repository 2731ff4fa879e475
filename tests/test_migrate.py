"""``python -m ponder.migrate``: run folders renamed from an older tree's keys to today's, every one accounted for."""

import json
import shutil

from ponder import migrate
from ponder.paths import ROOT
from ponder.runs import config_key

MODULE = "ponder.experiments.survey_parity"
CONFIG = {"halting": "act", "steps": 10, "train": {"lr": 1e-3, "seed": 0}}


def test_a_run_keyed_by_older_code_moves_to_todays_key_and_a_stranger_is_named(tmp_path):
    old = tmp_path / "old" / "lib"
    shutil.copytree(ROOT / "lib" / "ponder", old / "ponder", ignore=shutil.ignore_patterns("__pycache__"))
    with (old / "ponder" / "experiments" / "survey_parity.py").open("a") as source:
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
    with (old / "ponder" / "experiments" / "survey_parity.py").open("a") as source:
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
    assert {"ponder.experiments.hyper_ut", "ponder.experiments.acm.phases", MODULE} <= set(modules)
    assert not any(m.endswith(("__init__", "__main__")) for m in modules)
