"""ponder.runner.parallel: uncached jobs train in worker processes, and the results are the runs' own."""

import math
import os
import signal
import subprocess
import sys
import time
from functools import partial
from multiprocessing import get_context

import pytest
import torch

from ponder.repro import registry
from ponder.runner import parallel
from ponder.runner.runs import _LOADED, Run
from ponder.runner.training import num_threads
from ponder.studies.acm import schedule as acm_schedule
from ponder.studies.hyla import experiments as H
from ponder.studies.hyla import schedule as hyla_schedule


def sraven_job(kind: str):
    """A declared sraven run at the smoke sizes (:mod:`ponder.runner.specs`)."""
    return H.task_spec("sraven", H.sraven_setup("smoke", kind=kind), "smoke", 0)


def test_what_is_cached_is_read_from_the_caches_alone(monkeypatch):
    spec = H.task_spec("sraven", H.sraven_setup("smoke", kind="linear"), "smoke", 0)
    function = partial(H.train_sraven, H.sraven_setup("smoke", kind="linear"), "smoke", 0)
    assert not parallel.is_cached(spec) and not parallel.is_cached(function)
    spec()
    monkeypatch.setattr(Run, "load_model", lambda *_: pytest.fail("a look-up loaded weights"))
    monkeypatch.setattr(torch.nn.Module, "__init__", lambda *_: pytest.fail("a look-up built a model"))
    assert parallel.is_cached(spec)
    assert not parallel.is_cached(function)  # a function job always runs (it loads what is cached)


def test_a_run_is_read_once_per_process_and_loads_into_each_model(monkeypatch):
    job = sraven_job("linear")
    first, _ = job()
    reads = []
    read = Run.load_tensors
    monkeypatch.setattr(Run, "load_tensors", lambda self, stem: reads.append(stem) or read(self, stem))
    _LOADED.clear()
    a, _ = job()
    b, _ = job()
    assert reads == ["model"] and a is not b
    for p, q, r in zip(first.parameters(), a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q) and torch.equal(p, r)
    with torch.no_grad():
        next(a.parameters()).add_(1.0)  # a model's weights are its own, not the cache's
    assert torch.equal(next(job()[0].parameters()), next(first.parameters()))


def test_prefetch_trains_each_uncached_job_once_in_workers_and_matches_in_process_training(tmp_path, monkeypatch):
    jobs = [sraven_job("softmax"), sraven_job("hyla"), sraven_job("softmax")]
    assert parallel.prefetch(jobs, workers=2) == 2  # the repeated job counts once
    assert all(parallel.is_cached(job) for job in jobs)
    assert parallel.prefetch(jobs, workers=2) == 0  # everything cached now
    from_workers = {k: jobs[i]()[0].state_dict() for i, k in ((0, "softmax"), (1, "hyla"))}

    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "elsewhere"))
    with num_threads(1):
        for kind, state in from_workers.items():
            assert not parallel.is_cached(sraven_job(kind))
            model, _ = sraven_job(kind)()
            for name, tensor in model.state_dict().items():
                assert torch.equal(tensor, state[name]), f"{kind}: {name} differs"


def test_prefetch_leaves_training_to_the_caller_with_one_worker_or_one_job():
    assert parallel.prefetch([sraven_job("softmax"), sraven_job("linear")], workers=1) == 0
    assert parallel.prefetch([sraven_job("softmax")], workers=2) == 0
    assert not parallel.is_cached(sraven_job("softmax"))


def test_worker_count(monkeypatch):
    monkeypatch.setenv("PONDER_WORKERS", "3")
    assert parallel.worker_count() == 3
    monkeypatch.setenv("PONDER_WORKERS", "two")
    with pytest.raises(TypeError, match="PONDER_WORKERS must be an integer"):
        parallel.worker_count()
    monkeypatch.setenv("PONDER_WORKERS", "0")
    with pytest.raises(ValueError, match="PONDER_WORKERS=0"):
        parallel.worker_count()
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert parallel.worker_count() == 1  # torchrun: the processes already share the runs


def local_rank(barrier=None) -> str | None:
    import os

    if barrier is not None:  # the calls wait for each other: each of the workers takes one
        barrier.wait(timeout=300)
    return os.environ.get("LOCAL_RANK")


def test_workers_take_the_gpus_in_turn(monkeypatch):
    """With several GPUs each worker trains on one of them, the workers spread evenly over them."""
    monkeypatch.setattr(parallel, "gpu_count", lambda: 2)
    ranks = []
    with get_context("spawn").Manager() as manager:  # a worker that starts first cannot take two calls
        calls = [partial(local_rank, manager.Barrier(4))] * 4
        parallel.schedule(calls, [set()] * 4, 4, lambda i, result, error, seconds: ranks.append((result, error)))
    assert sorted(rank for rank, _ in ranks) == ["0", "0", "1", "1"], ranks
    monkeypatch.setattr(parallel, "gpu_count", lambda: 0)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    ranks.clear()
    parallel.schedule([local_rank] * 2, [set()] * 2, 2, lambda i, result, error, seconds: ranks.append((result, error)))
    assert ranks == [(None, None)] * 2


def test_notebook_job_lists_name_known_notebooks():
    assert set(hyla_schedule.hyla_jobs("smoke")) == {
        "hyla_ablations",
        "hyla_fuzzy",
        "hyla_latent",
        "hyla_lm",
        "hyla_sraven",
    }
    assert set(acm_schedule.acm_jobs("smoke")) == {"acm_vit", "acm_ablations", "acm_speech"}
    for notebook in ("hyla_nope", "acm_nope"):
        with pytest.raises(ValueError, match="notebook"):
            registry.prefetch("smoke", notebook)


def test_acm_runs_downstream_of_the_base_are_the_same_from_a_worker_and_in_process(tmp_path, monkeypatch):
    from ponder.studies.acm import phases, tuning

    jobs = [tuning.halting_run("smoke", 2.0, 0), tuning.early_exits_run("smoke", 0)]
    phases.base_model("smoke")  # the shared upstream, trained here with every thread
    assert parallel.prefetch(jobs, workers=2) == 2
    from_worker = jobs[0]()[0].state_dict()

    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "elsewhere"))
    model, _ = jobs[0]()  # base and halting trained here, one after the other
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, from_worker[name]), name


def test_train_notebooks_prefetches_each_notebook_then_calls_every_job():
    calls = []
    jobs = {"a": [partial(calls.append, "a1"), partial(calls.append, "a2")], "b": [partial(calls.append, "b1")]}
    parallel.train_notebooks(jobs, lambda notebook: calls.append(f"prefetch {notebook}"))
    assert calls == ["prefetch a", "a1", "a2", "prefetch b", "b1"]


def test_keep_going_trains_the_other_jobs_and_reports_the_failure():
    broken = partial(H.train_sraven, H.sraven_setup("smoke", kind="linear"), "no_such_profile", 0)
    reports = []
    failures = parallel.prefetch(
        [broken, sraven_job("softmax"), sraven_job("hyla")],
        workers=2,
        keep_going=True,
        report=lambda *r: reports.append(r),
    )
    assert len(failures) == 1 and "no_such_profile" in failures[0] and "\n" not in failures[0]
    assert failures[0].startswith("train_sraven(")  # the job named as the report names it
    assert parallel.is_cached(sraven_job("softmax")) and parallel.is_cached(sraven_job("hyla"))
    assert [(done, n) for done, n, _, _ in reports] == [(1, 3), (2, 3), (3, 3)]
    assert sorted(job for _, _, job, _ in reports) == sorted(
        parallel.describe(j) for j in (broken, sraven_job("softmax"), sraven_job("hyla"))
    )
    assert sum(math.isnan(s) for *_, s in reports) == 1 and all(
        s > 0 for *_, s in reports if not math.isnan(s)
    )  # the failed job has no time
    with pytest.raises(ValueError, match="no_such_profile"):  # without keep_going the error stops the caller
        parallel.prefetch([broken, sraven_job("linear")], workers=2)


def test_make_figures_trains_ahead_for_every_notebook_that_prefetches():
    import json
    from pathlib import Path

    from ponder.repro.registry import notebook_jobs

    folder = Path(__file__).parents[1] / "notebooks"
    prefetching = {
        p.stem
        for p in folder.glob("*.ipynb")
        if "prefetch(" in "".join("".join(c["source"]) for c in json.load(open(p))["cells"])
    }
    assert prefetching == set(notebook_jobs("smoke"))


def stamp(log: str, name: str, wait_for: str | None = None) -> None:
    """A job that is never cached: logs its start and end (``name start|end time``); before it
    ends it waits (up to a minute) for job ``wait_for`` to have started."""
    import time

    with open(log, "a") as out:
        out.write(f"{name} start {time.time()}\n")
    deadline = time.time() + 60
    while wait_for and f"{wait_for} start" not in open(log).read() and time.time() < deadline:
        time.sleep(0.05)
    with open(log, "a") as out:
        out.write(f"{name} end {time.time()}\n")


def test_jobs_built_on_an_upstream_wait_for_it_and_go_ahead_of_the_rest(tmp_path):
    """Two workers: the shared run A starts first; B, built on it, starts only when A has ended,
    and before the independent D, which was handed in ahead of it; C fills the second core.
    (A ends once C has started, C once B has started: no sleeps to race.)"""
    log = str(tmp_path / "log.txt")
    job = lambda name, wait_for=None: partial(stamp, log, name, wait_for)  # noqa: E731
    trained = parallel.prefetch(
        [job("C", wait_for="B"), job("D")], workers=2, after=[([job("A", wait_for="C")], [job("B")])]
    )
    assert trained == 4
    events = {tuple(line.split()[:2]): float(line.split()[2]) for line in open(log)}
    assert events["B", "start"] >= events["A", "end"]
    assert events["B", "start"] < events["D", "start"] and events["C", "start"] < events["A", "end"]
    assert events["C", "end"] - events["C", "start"] < 30  # C did not time out waiting for B


def test_each_group_waits_only_for_its_own_upstream(tmp_path):
    """U2's dependent B2 starts while U1, the other group's upstream, is still training (U1 ends
    only once B2 has started)."""
    log = str(tmp_path / "log.txt")
    job = lambda name, wait_for=None: partial(stamp, log, name, wait_for)  # noqa: E731
    assert (
        parallel.prefetch([], workers=2, after=[([job("U1", wait_for="B2")], [job("B1")]), ([job("U2")], [job("B2")])])
        == 4
    )
    events = {tuple(line.split()[:2]): float(line.split()[2]) for line in open(log)}
    assert events["U2", "end"] <= events["B2", "start"] < events["U1", "end"] <= events["B1", "start"]
    assert events["U1", "end"] - events["U1", "start"] < 30  # U1 did not time out waiting for B2


def test_plan_counts_each_uncached_job_once_and_says_what_it_waits_for(tmp_path, monkeypatch):
    log = str(tmp_path / "log.txt")
    job = lambda name: partial(stamp, log, name)  # noqa: E731
    cached = partial(int)  # a run that is finished: never scheduled
    monkeypatch.setattr(parallel, "is_cached", lambda j: j is cached)
    order, needs = parallel.plan([job("C"), job("B"), cached], after=[([job("A"), cached], [job("B")])])
    assert [j.args[1] for j in order] == ["A", "B", "C"]
    assert needs == [set(), {0}, set()]


def test_of_the_calls_ready_the_highest_priority_starts_first(tmp_path):
    """One worker: with priorities (expected seconds), the longest ready call starts first, a call that waits
    starts when its need has ended, and equal priorities keep the order of the calls."""
    log = str(tmp_path / "log.txt")
    calls = [partial(stamp, log, name) for name in ("short", "long", "waits", "middle", "middle2")]
    parallel.schedule(calls, [set(), set(), {1}, set(), set()], 1, lambda *a: None, priority=[1, 9, 20, 5, 5])
    started = [line.split()[0] for line in open(log) if line.split()[1] == "start"]
    assert started == ["long", "waits", "middle", "middle2", "short"]


def test_schedule_refuses_needs_that_cannot_be_met():
    with pytest.raises(ValueError, match="cycle"):
        parallel.schedule([partial(int), partial(int)], [{1}, {0}], 2, lambda *a: None)
    with pytest.raises(ValueError, match="position"):
        parallel.schedule([partial(int)], [{0}], 2, lambda *a: None)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped by whoever adopted it, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_workers_end_with_the_process_that_started_them():
    """A ``make figures`` killed alone (SIGKILL: no handler runs) takes its workers with it, rather than
    leaving them to train the rest of their runs: here a worker busy with a minute's sleep ends within seconds."""
    # -W: the killed parent's resource tracker would warn of the pool's semaphores, which it never freed
    parent = subprocess.Popen(
        [
            sys.executable,
            "-W",
            "ignore:resource_tracker:UserWarning",
            "-c",
            "import ponder, sys, time\nfrom ponder.runner import parallel\n"
            "pool = parallel._pool(1, 0)\nprint(pool.submit(parallel.os.getpid).result(), flush=True)\n"
            "pool.submit(time.sleep, 60)\ntime.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    worker = int(parent.stdout.readline())
    try:
        assert alive(worker)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while alive(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(worker)
    finally:
        if alive(worker):
            os.kill(worker, signal.SIGKILL)
