"""The run cache and the training loop: hit, miss, resume after a real kill, atomic writes."""

import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from ponder.repro.migrate import experiment_modules
from ponder.runner.runs import (
    PACKAGE,
    CorruptRun,
    Run,
    atomic_write,
    code_version,
    import_closure,
    is_sizes,
    module_file,
)
from ponder.runner.training import TrainConfig, lr_at, make_optimizer, optimizer_step, train_run

CONFIG = TrainConfig(steps=40, batch_size=16, lr=3e-3, seed=3, checkpoint_every=5, log_every=5)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.1), nn.ReLU(), nn.Linear(16, 1))


def batches(step: int, kill_at: int | None = None):
    if step == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)  # a real kill, mid-run, no clean-up
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(CONFIG.batch_size, 4, generator=g)
    return x, x.sum(dim=1, keepdim=True).sin()


def loss_fn(model, batch):
    x, y = batch
    return ((model(x) - y) ** 2).mean()


def toy_run(cfg=CONFIG) -> Run:
    return Run("toy", {"train": cfg.as_dict()}, "smoke", code=["ponder.tasks.cpvr"])


def test_finished_run_is_reused_without_training():
    calls = []

    def counting_loss(model, batch):
        calls.append(1)
        return loss_fn(model, batch)

    model, metrics = train_run(toy_run(), make_model, counting_loss, batches, CONFIG)
    assert len(calls) == CONFIG.steps and toy_run().done
    again, cached = train_run(toy_run(), make_model, counting_loss, batches, CONFIG)
    assert len(calls) == CONFIG.steps  # nothing trained the second time
    assert cached == metrics
    for a, b in zip(model.state_dict().values(), again.state_dict().values()):
        assert torch.equal(a, b)


def test_a_run_trained_under_no_grad_trains_as_outside_it():
    """Analyses evaluate under ``torch.no_grad`` and may be the first to ask for a run (with one worker,
    prefetch trains nothing ahead): training turns gradients on itself, to the same weights."""
    outside, metrics = train_run(toy_run(), make_model, loss_fn, batches, CONFIG)
    shutil.rmtree(toy_run().dir)
    with torch.no_grad():
        inside, again = train_run(toy_run(), make_model, loss_fn, batches, CONFIG)
    assert again == metrics
    for a, b in zip(outside.state_dict().values(), inside.state_dict().values()):
        assert torch.equal(a, b)


def test_changed_config_is_a_miss():
    train_run(toy_run(), make_model, loss_fn, batches, CONFIG)
    other = toy_run(TrainConfig(**{**CONFIG.as_dict(), "lr": 1e-3}))
    assert not other.done and other.key != toy_run().key


EXPERIMENTS = experiment_modules(
    PACKAGE.parent
)  # every module that defines runs, ACM's phases and baselines among them


def test_code_version_follows_the_named_modules():
    assert code_version(("ponder.tasks.cpvr",)) != code_version(("ponder.models.transformer",))
    assert code_version(("ponder.tasks.cpvr",)) == code_version(("ponder.tasks.cpvr",))


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_the_closure_holds_every_module_the_experiment_imports(experiment):
    """The static closure covers what Python really imports (top-level imports; the closure adds the
    ones inside functions), so a module the experiment runs cannot be left out of its key."""
    script = f"import sys, {experiment}; print(' '.join(m for m in sys.modules if m.startswith('ponder')))"
    imported = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    closure = set(import_closure((experiment,)))
    assert experiment in closure
    assert {m for m in imported if not is_sizes(m)} <= closure


def test_the_acm_runs_are_keyed_on_the_flop_counts_they_store():
    for module in ("phases", "baselines"):
        assert "ponder.models.flops" in import_closure((f"ponder.studies.acm.{module}",))


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_what_the_notebooks_train_is_in_no_runs_key(experiment):
    """The registry lists which runs each notebook trains; no run imports it, so moving a run from one
    profile's list to another's, or adding a notebook, retrains nothing."""
    assert not {"ponder.repro.registry", "ponder.repro.notebooks", "ponder.repro.execution"} & set(
        import_closure((experiment,))
    )


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("lib") / "ponder"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.xz"))
    return copy


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_editing_any_module_a_run_imports_changes_its_key(package_copy, experiment):
    """Every module of the closure, edited in a copy of the library, moves the code version of the
    experiment's runs; a module outside it (a plot) and the sizes (data, in the configs) do not."""
    before = code_version((experiment,), package_copy)
    closure = import_closure((experiment, "ponder.runner.training"), package_copy)
    for name in [*closure, "ponder.studies.survey.plots", "ponder.studies.hyla.sizes"]:
        path = module_file(name, package_copy)
        source = path.read_bytes()
        path.write_bytes(source + b"\n_EDITED = 1\n")
        try:
            edited = code_version.__wrapped__((experiment,), package_copy)
        finally:
            path.write_bytes(source)
        assert (edited != before) == (name in closure), name


def test_docstrings_comments_and_layout_leave_the_key_and_code_moves_it(package_copy):
    path = module_file("ponder.tasks.cpvr", package_copy)
    source = path.read_text()
    before = code_version.__wrapped__(("ponder.tasks.cpvr",), package_copy)
    module_doc = source.index('"""', source.index('"""') + 3) + 3  # the end of the module's docstring
    edits = {
        "a docstring": (source[: module_doc - 3] + ' More words."""' + source[module_doc:], False),
        "a comment": (source.replace("\n\n\ndef ", "\n\n\n# a note\ndef ", 1), False),
        "a bare string": (source + '\n"""A note on the module."""\n', False),
        "the layout": (source.replace("\n\n\ndef ", "\n\n\n\n\ndef ", 1), False),
        "a statement": (source + "\n_EDITED = 1\n", True),
        "an operator": (source[:module_doc] + source[module_doc:].replace(" + ", " - ", 1), True),
    }
    try:
        for what, (edited, moves) in edits.items():
            assert edited is not None and edited != source, what
            path.write_text(edited)
            assert (code_version.__wrapped__(("ponder.tasks.cpvr",), package_copy) != before) == moves, what
    finally:
        path.write_text(source)


def _train_in_child(results: Path, kill_at: int | None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PONDER_RESULTS": str(results), "KILL_AT": "" if kill_at is None else str(kill_at)}
    return subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("trial", range(3))
def test_killed_run_resumes_to_the_same_result(tmp_path, monkeypatch, trial):
    kill_at = random.Random(trial).randrange(1, CONFIG.steps)
    killed = _train_in_child(tmp_path / "a", kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "a"))
    run = toy_run()
    assert not run.done
    has_checkpoint = (run.dir / "checkpoint.safetensors").exists()
    assert has_checkpoint == (kill_at >= CONFIG.checkpoint_every)
    resumed, resumed_metrics = train_run(run, make_model, loss_fn, batches, CONFIG)

    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "b"))
    straight, straight_metrics = train_run(toy_run(), make_model, loss_fn, batches, CONFIG)
    assert resumed_metrics == straight_metrics
    for a, b in zip(resumed.state_dict().values(), straight.state_dict().values()):
        assert torch.equal(a, b)


def test_atomic_write_leaves_nothing_behind_on_failure(tmp_path):
    target = tmp_path / "metrics.json"
    target.write_text("old")

    def broken(tmp):
        tmp.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, broken)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]


def test_run_without_its_weights_is_not_done_and_retrains():
    """metrics.json alone (model.safetensors lost) is no finished run: the next train_run trains it
    again, to the same weights."""
    calls = []
    counting = lambda model, batch: calls.append(1) or loss_fn(model, batch)  # noqa: E731
    first, _ = train_run(toy_run(), make_model, counting, batches, CONFIG)
    (toy_run().dir / "model.safetensors").unlink()
    assert (toy_run().dir / "metrics.json").exists() and not toy_run().done
    again, _ = train_run(toy_run(), make_model, counting, batches, CONFIG)
    assert len(calls) == 2 * CONFIG.steps and toy_run().done
    for a, b in zip(first.state_dict().values(), again.state_dict().values()):
        assert torch.equal(a, b)


def test_run_finished_without_a_model_is_done():
    run = toy_run()
    run.finish({"accuracy": 0.5})
    assert toy_run().done and toy_run().metrics() == {"accuracy": 0.5}
    assert not (run.dir / "model.safetensors").exists()


def _finished_run() -> Run:
    """A run folder with every file: the final weights, the metrics and a checkpoint."""
    run = toy_run()
    run.finish({"history": []}, make_model())
    run.save_tensors("checkpoint", make_model().state_dict(), meta={"step": 5})
    return run


def _load(run: Run, name: str):
    if name == "metrics.json":
        return run.metrics()
    if name == "model.safetensors":
        return run.load_model(make_model())
    return run.load_tensors("checkpoint")


@pytest.mark.parametrize("name", ["metrics.json", "model.safetensors", "checkpoint.safetensors"])
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_corrupt_run_file_names_itself_and_the_folder_to_delete(name, damage):
    run = _finished_run()
    path = run.dir / name
    blob = path.read_bytes()
    path.write_bytes(b"\x93\xff garbage \x00" * 3 if damage == "garbage" else blob[: len(blob) // 2])
    with pytest.raises(CorruptRun) as error:
        _load(run, name)
    assert isinstance(error.value, RuntimeError)
    assert str(path) in str(error.value) and f"delete the run folder {run.dir}" in str(error.value)


def test_weights_that_do_not_fit_the_model_name_the_file():
    run = toy_run()
    run.finish({"history": []}, nn.Linear(4, 1))
    with pytest.raises(CorruptRun, match="model.safetensors"):
        run.load_model(make_model())


def test_load_model_of_an_unfinished_run_says_so():
    with pytest.raises(FileNotFoundError, match="train it first"):
        toy_run().load_model(make_model())


def test_learning_rate_warms_up_then_decays():
    cfg = TrainConfig(steps=100, batch_size=1, lr=1.0, warmup=0.1, min_lr_ratio=0.1)
    rates = [lr_at(s, cfg) for s in range(100)]
    assert rates[0] == pytest.approx(0.1) and rates[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(rates[10:], rates[11:]))
    assert rates[-1] == pytest.approx(0.1, abs=1e-3)


def test_fused_optimizer_follows_the_plain_adamw_loop():
    """make_optimizer's fused AdamW takes the steps of torch's per-parameter loop (to float rounding),
    with weight decay on the matrices only."""
    trained = []
    for fused in (True, False):
        torch.manual_seed(0)
        model = make_model()
        optimizer = make_optimizer(model, CONFIG)
        assert optimizer.defaults["fused"]
        if not fused:
            groups = [{"params": g["params"], "weight_decay": g["weight_decay"]} for g in optimizer.param_groups]
            optimizer = torch.optim.AdamW(groups, lr=CONFIG.lr, foreach=False)
        for step in range(20):
            optimizer_step(loss_fn(model, batches(step)), model, optimizer, CONFIG.grad_clip)
        trained.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert [g["weight_decay"] for g in make_optimizer(make_model(), CONFIG).param_groups] == [CONFIG.weight_decay, 0.0]
    torch.testing.assert_close(trained[0], trained[1], atol=1e-6, rtol=0)


@pytest.mark.parametrize(
    "change, error",
    [
        (dict(steps=0), "steps=0 must be >= 1"),
        (dict(batch_size=-2), "batch_size=-2"),
        (dict(lr=0), "lr=0"),
        (dict(warmup=1.5), "warmup=1.5"),
    ],
)
def test_train_config_rejects_bad_values(change, error):
    with pytest.raises(ValueError, match=error):
        TrainConfig(**{"steps": 10, "batch_size": 4, **change})


if __name__ == "__main__":  # the child of the kill test
    kill = os.environ.get("KILL_AT")
    train_run(toy_run(), make_model, loss_fn, lambda step: batches(step, int(kill) if kill else None), CONFIG)


def test_a_second_trainer_waits_for_the_run_in_progress():
    """While one process holds a run's lock (it is training it), another asking for the same run
    waits, then loads what the first finished instead of training it again."""
    import threading

    run, calls = toy_run(), []
    counting = lambda model, batch: calls.append(1) or loss_fn(model, batch)  # noqa: E731
    result = {}
    with run.lock():
        waiter = threading.Thread(
            target=lambda: result.update(metrics=train_run(toy_run(), make_model, counting, batches, CONFIG)[1])
        )
        waiter.start()
        waiter.join(timeout=1.0)
        assert waiter.is_alive() and not run.done  # blocked on the lock
        trained = make_model()
        run.finish({"history": [], "marker": 7}, trained)
    waiter.join(timeout=30)
    assert not waiter.is_alive()
    assert result["metrics"]["marker"] == 7 and calls == []


def test_held_parameters_keep_their_initial_values_then_train():
    """``hold="3."`` for 0.25 of 40 steps: the last layer is untouched for 10 steps, then trains;
    the other layers train from the start."""
    from ponder.runner.training import train

    seen = {}

    def recording_loss(model, batch):
        seen[len(seen)] = (model[3].weight.detach().clone(), model[0].weight.detach().clone())
        return loss_fn(model, batch)

    torch.manual_seed(0)
    model = make_model()
    first_last, first_hidden = model[3].weight.detach().clone(), model[0].weight.detach().clone()
    train(model, recording_loss, batches, TrainConfig(**{**CONFIG.as_dict(), "hold": "3.", "hold_for": 0.25}))
    assert all(
        torch.equal(seen[step][0], first_last) for step in range(11)
    )  # steps 0-9 leave it; step 10 reads it unchanged
    assert not torch.equal(seen[12][0], first_last)
    assert not torch.equal(seen[2][1], first_hidden)
    with pytest.raises(ValueError, match="hold_for=1.5 must be a fraction"):
        TrainConfig(steps=4, batch_size=2, hold="x", hold_for=1.5)
