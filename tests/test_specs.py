"""Declared runs (ponder.runner.specs) and the planner that reads them from the cache alone."""

import inspect
import shutil
import sys
from dataclasses import replace

import pytest
import torch

from ponder import profiles
from ponder.paths import ROOT, figures_dir
from ponder.repro import registry
from ponder.runner import parallel, runs, streams, training
from ponder.runner.gpu import ensemble
from ponder.runner.specs import Chosen, Recipe, Spec, declared
from ponder.runner.training import TrainConfig
from ponder.studies.hyper_ut import cpvr as hyper_ut
from ponder.tasks import cpvr_decoys, fuzzy, images, parity, speech, sraven, text


def toy_recipe(config: dict) -> Recipe:
    """A linear model fitted to ``y = 2x`` for ``config["steps"]`` steps."""
    cfg = TrainConfig(steps=config["steps"], batch_size=8, lr=0.1, seed=config["seed"], log_every=1)

    def batches(step):
        x = torch.randn(8, 1, generator=torch.Generator().manual_seed(step))
        return x, 2 * x

    def loss(model, batch):
        x, y = batch
        return ((model(x) - y) ** 2).mean()

    return Recipe(lambda: torch.nn.Linear(1, 1), loss, batches, cfg, lambda model: {"weight": model.weight.item()})


def toy(seed: int = 0, steps: int = 5) -> Spec:
    return Spec("toy/linear", {"steps": steps, "seed": seed}, "smoke", (), toy_recipe, "toy")


def test_a_spec_trains_once_then_loads_and_its_metrics_read_no_weights(tmp_path, monkeypatch):
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    spec = toy()
    assert not spec.done and spec.leads and spec.key == str(spec.run.dir)
    model, metrics = spec()
    assert spec.done and len(metrics["history"]) == 5
    again, cached = toy()()
    assert cached == metrics and torch.equal(again.weight, model.weight)
    monkeypatch.setattr(runs.Run, "load_model", lambda *_: pytest.fail("metrics() loaded the weights"))
    assert toy().metrics() == metrics


def test_a_chosen_run_is_declared_from_the_metrics_of_the_runs_it_is_chosen_among(tmp_path, monkeypatch):
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    among = (toy(steps=1), toy(steps=3))
    chosen = Chosen(among, lambda metrics: toy(seed=1, steps=[m["history"][-1]["step"] for m in metrics][-1]), "toy")
    assert not chosen.ready and chosen.key == "chosen: toy" and chosen.trainer == "toy"
    assert chosen.spec().config == {"steps": 3, "seed": 1}  # trained ``among`` first
    assert chosen.ready and all(spec.done for spec in among)


def test_the_planner_trains_what_a_chosen_run_is_chosen_among_first(tmp_path, monkeypatch):
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    among = (toy(steps=1), toy(steps=2))
    chosen = Chosen(among, lambda metrics: toy(seed=2), "toy")
    order, needs = parallel.plan([chosen, toy(steps=1)])
    assert [parallel.key(job) for job in order] == [among[0].key, among[1].key, "chosen: toy"]
    assert needs == [set(), set(), {0, 1}]
    for spec in among:
        spec()
    order, needs = parallel.plan([chosen])
    assert [parallel.key(job) for job in order] == [toy(seed=2).key] and needs == [set()]  # resolved from the cache


def refuse(what: str):
    def refused(*args, **kwargs):
        raise AssertionError(f"planning called {what}")

    return refused


@pytest.fixture
def nothing_runs(tmp_path, monkeypatch):
    """An empty run and data cache, and every trainer, model constructor and sampler made to raise."""
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PONDER_DATA_CACHE", str(tmp_path / "data"))
    for owner, name in [
        (training, "train_run"),
        (training, "train"),
        (runs.Run, "load_model"),
        (ensemble, "train_runs"),
        (cpvr_decoys, "sample"),
        (parity, "sample"),
        (images, "sample"),
        (images, "images"),
        (speech, "sample"),
        (speech, "fixed_features"),
        (sraven, "split"),
        (sraven, "batch"),
        (sraven, "dataset"),
        (fuzzy, "split"),
        (fuzzy, "batch"),
        (fuzzy, "dataset"),
        (text, "splits"),
        (text, "windows"),
        (streams, "_rows"),
    ]:
        monkeypatch.setattr(owner, name, refuse(f"{owner.__name__}.{name}"))
    monkeypatch.setattr(torch.nn.Module, "__init__", refuse("a model's constructor"))


def planned(profile: str) -> tuple[list, list[set[int]], list]:
    """The plan of every notebook of ``profile`` (:func:`ponder.repro.registry.training`), and their jobs."""
    independent, groups, needed = registry.training(profile, 0)
    order, needs = parallel.plan(independent, groups)
    return order, needs, [job for jobs in needed.values() for job in jobs]


def test_planning_the_cpu_profile_builds_draws_loads_and_trains_nothing(nothing_runs):
    order, needs, jobs = planned("cpu")
    runs_ = [job for job in order if declared(job)]
    chosen = [job for job in runs_ if isinstance(job, Chosen)]
    assert chosen and all(not job.ready for job in chosen)
    assert len({job.key for job in chosen}) == len(chosen)  # every chosen run its own job
    position = {parallel.key(job): i for i, job in enumerate(order)}
    for job in chosen:  # each waits for the grid it is chosen on, planned before it
        assert {position[spec.key] for spec in job.among} <= needs[position[job.key]]
        assert all(position[spec.key] < position[job.key] for spec in job.among)
    built_on = [job for job in runs_ if isinstance(job, Spec) and job.needs]
    assert built_on  # ACM's phases and baselines: each waits for the runs whose models it builds on
    for job in built_on:
        assert {position[need.key] for need in job.needs} <= needs[position[job.key]]
    every = {parallel.key(job) for job in jobs if declared(job)}
    assert every <= set(position)  # every declared run of the notebooks is planned
    listed = [job for job in jobs if isinstance(job, Chosen)]  # two runs chosen alike are one label, and only they
    assert len({job.key for job in listed}) == len({repr((job.among, job.declare)) for job in listed})
    assert all(streams.is_chunk(job) for job in order if not declared(job))  # the rest: training streams to draw


def test_make_plan_expects_the_cpu_profile_from_the_record_and_builds_draws_loads_and_trains_nothing(
    nothing_runs, monkeypatch, capsys
):
    from ponder.repro import expected, measured, notebooks

    figures_dir("quick").mkdir(parents=True)  # the committed record, where make figures keeps it
    shutil.copy(measured.path(ROOT / "figures"), measured.path(figures_dir("quick")))
    record = measured.read(ROOT / "figures")["figures-quick-cold"]
    monkeypatch.setattr(expected, "calibration", lambda: record["calibration seconds"])  # this machine as the record's
    estimate = notebooks.plan("cpu", jobs=2)
    order, _, _ = planned("cpu")
    assert estimate["runs to train"] == sum(map(declared, order)) > 400  # every run, no stream chunk
    assert sum(runs for runs, _ in estimate["by function"].values()) == estimate["runs to train"]
    assert estimate["run CPU-minutes"] > record["run CPU-minutes"]  # cpu trains more than quick, at quick's rates
    assert "seconds per step" in estimate["rests on"] and "(1.00x its time)" in estimate["rests on"]
    assert "CPU-hours; about " in capsys.readouterr().out


def test_with_the_grids_finished_the_cpu_plan_resolves_each_choice_from_their_metrics(nothing_runs):
    order, _, _ = planned("cpu")
    grids = {spec.key: spec for job in order if isinstance(job, Chosen) for spec in job.among}
    assert grids.keys() <= {parallel.key(job) for job in order if isinstance(job, Spec)}  # planned before the choices
    best = hyper_ut.rates("cpu")[-1]
    for spec in grids.values():  # finished runs, best (C-PVR: the lowest validation loss) at the grid's last point
        train = spec.config["train"]
        loss = 0.1 if (train["lr"], train["warmup"]) == best else 0.5
        metrics = {"validation": 0.9, "validation loss": loss, "accuracy": {"1": 1.0, "5": 0.5}}
        metrics |= {"id_acc": train["lr"], "train_r2": train["lr"]}  # HYLA: the highest score, here the largest rate
        runs.write_json(spec.run.dir / "metrics.json", metrics)
        (spec.run.dir / "no-weights").write_text("")
    order, _, _ = planned("cpu")
    assert not any(isinstance(job, Chosen) for job in order)
    cpvr = [job for job in order if declared(job) and job.name.startswith("hut/cpvr/")]
    assert cpvr and {(job.config["train"]["lr"], job.config["train"]["warmup"]) for job in cpvr} == {best}
    tuned = [job for job in order if declared(job) and job.name.startswith(("hyla/sraven/", "hyla/fuzzy/"))]
    assert {job.config["lr"] for job in tuned if job.config["train"]["seed"] != 0} == {3e-3}  # cpu's grid: 1e-3, 3e-3


def untrained(spec: Spec) -> torch.nn.Module:
    """The model ``spec``'s recipe builds, on the untrained models of the runs it needs."""
    return spec.recipe(spec.config, *map(untrained, spec.needs)).make()


def test_every_recipe_receives_its_config_and_needed_models_alone_and_reads_no_profile_table(monkeypatch):
    """A run's training is built from its config (and the models it builds on), so everything it uses is in its
    key."""
    specs = {}
    for profile in ("smoke", "quick", "cpu", "gpu"):
        for jobs in registry.notebook_jobs(profile).values():
            for job in jobs:
                spec = job.among[0] if isinstance(job, Chosen) else job
                for each in (spec, *spec.needs, *(n for need in spec.needs for n in need.needs)):
                    specs.setdefault(each.recipe, {}).setdefault(profile, each)
    assert len(specs) == 19  # C-PVR 1, survey 3, parity, digits, scratch-pad, HYLA 3, ACM 4 phases and 5 baselines
    smoke = {recipe: by[min(by, key=("smoke", "quick", "cpu", "gpu").index)] for recipe, by in specs.items()}
    upstream = {recipe: [untrained(need) for need in spec.needs] for recipe, spec in smoke.items()}
    for module in [m for name, m in sys.modules.items() if name.startswith("ponder.")]:
        if getattr(module, "by_profile", None) is profiles.by_profile:
            monkeypatch.setattr(module, "by_profile", refuse(f"{module.__name__}.by_profile"))
    for recipe, spec in smoke.items():
        parameters = list(inspect.signature(recipe).parameters)
        assert parameters[0] == "config" and len(parameters) - 1 >= len(spec.needs), recipe
        built = recipe(spec.config, *upstream[recipe])
        assert isinstance(built, Recipe) and built.cfg.as_dict() == spec.config["train"], recipe


def test_every_notebook_lists_declared_runs_only():
    for profile in ("smoke", "cpu"):
        for notebook, jobs in registry.notebook_jobs(profile).items():
            assert all(map(declared, jobs)), (profile, notebook)


def test_a_run_upstream_of_a_group_and_built_on_in_it_waits_for_nothing_that_starts_after_it(tmp_path, monkeypatch):
    """A run may be both a group's upstream and a run the group's runs need, or the run a choice resolves to:
    planned once, it waits only for what starts before it (no cycle, no run waiting for itself)."""
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    base, grid = toy(steps=1), (toy(steps=2), toy(steps=3))
    built = replace(toy(steps=4), needs=(base,))
    chosen = Chosen(grid, lambda metrics: grid[1], "toy")
    order, needs = parallel.plan([], after=[((base, *grid), (built, chosen))])
    assert all(j < i for i, waits in enumerate(needs) for j in waits)
    for spec in grid:
        spec()
    order, needs = parallel.plan([], after=[((base, *grid), (built, chosen))])
    assert [parallel.key(job) for job in order] == [base.key, built.key] and needs == [set(), {0}]


@pytest.mark.parametrize("profile", ["smoke", "quick", "cpu"])
def test_every_notebooks_plan_waits_only_for_what_starts_before(profile, nothing_runs):
    upstream = registry.upstream_jobs(profile)
    for notebook, jobs in registry.notebook_jobs(profile).items():
        shared = upstream.get(notebook)
        _, needs = parallel.plan([], after=[(shared, jobs)]) if shared else parallel.plan(jobs)
        assert all(j < i for i, waits in enumerate(needs) for j in waits), notebook
    _, needs, _ = planned(profile)
    assert all(j < i for i, waits in enumerate(needs) for j in waits)


def test_a_group_whose_runs_are_all_finished_draws_and_trains_nothing_upstream(tmp_path, monkeypatch):
    """``make figures`` over a full run cache (or a notebook's prefetch there) has no work: a group's upstream
    (training streams to draw, runs to build on) is planned only for runs left to train."""
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    upstream, built = toy(steps=1), toy(steps=2)
    assert [parallel.key(job) for job in parallel.plan([], after=[((upstream,), (built,))])[0]] == [
        upstream.key,
        built.key,
    ]
    built()
    assert parallel.plan([], after=[((upstream,), (built,))]) == ([], [])
    assert not upstream.done
