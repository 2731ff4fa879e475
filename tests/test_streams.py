"""Training streams (ponder.runner.streams): read back, a stream is what drawing it step by step gives, bit for bit."""

import pytest
import torch

from ponder.runner import streams
from ponder.studies.hyper_ut import cpvr as hyper_ut
from ponder.tasks import cpvr_decoys, parity

DECOYS = "ponder.tasks.cpvr_decoys:sample"
KNOBS = dict(n=4, length=8, hops=[1, 2, 3])
STEPS = streams.CHUNK + 10  # two chunks, the second one partly read


@pytest.fixture(autouse=True)
def fresh_memory():
    """Each test starts with nothing read into memory (the data cache is a fresh folder: conftest)."""
    streams._chunk.cache_clear()
    yield
    streams._chunk.cache_clear()


def draws(monkeypatch, module, name):
    """Count the calls of ``module.name`` (what drawing a chunk calls)."""
    calls, original = [], getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(1) or original(*a, **k))
    return calls


def identical(got, want):
    return len(got) == len(want) and all(
        g.dtype == w.dtype and g.shape == w.shape and torch.equal(g, w) for g, w in zip(got, want)
    )


@pytest.mark.parametrize("step", [0, 1, streams.CHUNK - 1, streams.CHUNK, streams.CHUNK + 7])
def test_a_stream_is_the_sampler_step_by_step(step):
    batch = streams.batches(DECOYS, KNOBS, seed=3, steps=STEPS, version=cpvr_decoys.VERSION)
    assert identical(batch(step), cpvr_decoys.sample(4, 8, [1, 2, 3], seed=streams.seed_of(3, step)))


def test_float_tensors_and_their_shapes_come_back_as_drawn():
    batch = streams.batches(
        "ponder.tasks.parity:sample", dict(n=5, dim=6, nonzero=(1, 2, 3)), seed=1, steps=STEPS, version="test"
    )
    for step in (0, 2, streams.CHUNK + 1):
        got = batch(step)
        assert got[0].dtype == torch.float32 and identical(
            got, parity.sample(5, 6, [1, 2, 3], seed=streams.seed_of(1, step))
        )


def test_a_chunk_is_drawn_once_then_read_from_the_data_cache(monkeypatch):
    calls = draws(monkeypatch, cpvr_decoys, "sample")
    first = streams.batches(DECOYS, KNOBS, seed=0, steps=STEPS, version=cpvr_decoys.VERSION)(5)
    assert len(calls) == streams.CHUNK  # one chunk, one draw per step
    streams._chunk.cache_clear()  # another process: nothing in memory, the Arrow files on disk
    again = streams.batches(DECOYS, dict(KNOBS, hops=(1, 2, 3)), seed=0, steps=STEPS, version=cpvr_decoys.VERSION)(5)
    assert len(calls) == streams.CHUNK and identical(again, first)


@pytest.mark.parametrize(
    "change",
    [
        dict(knobs=dict(KNOBS, length=9)),
        dict(knobs=dict(KNOBS, hops=[1, 2])),
        dict(seed=1),
        dict(version="other"),
        dict(steps=100),
    ],
)
def test_the_fingerprint_covers_knobs_seed_version_and_chunk(monkeypatch, change):
    calls = draws(monkeypatch, cpvr_decoys, "sample")
    base = dict(sampler=DECOYS, knobs=KNOBS, seed=0, steps=STEPS, version=cpvr_decoys.VERSION)
    streams.batches(**base)(0)
    streams._chunk.cache_clear()
    streams.batches(**{**base, **change})(0)
    assert len(calls) == streams.CHUNK + min(streams.CHUNK, change.get("steps", STEPS))


def test_a_run_writing_to_its_batch_leaves_the_stream_alone():
    batch = streams.batches(DECOYS, KNOBS, seed=0, steps=STEPS, version=cpvr_decoys.VERSION)
    x = batch(2)[0]
    x.zero_()
    assert identical(batch(2), cpvr_decoys.sample(4, 8, [1, 2, 3], seed=streams.seed_of(0, 2)))


def test_a_short_stream_draws_only_its_steps(monkeypatch):
    calls = draws(monkeypatch, cpvr_decoys, "sample")
    batch = streams.batches(DECOYS, KNOBS, seed=0, steps=30, version=cpvr_decoys.VERSION)
    got = batch(29)
    assert len(calls) == 30
    assert identical(got, cpvr_decoys.sample(4, 8, [1, 2, 3], seed=streams.seed_of(0, 29)))


def test_bad_steps_and_seeds_are_refused():
    with pytest.raises(ValueError, match="seed"):
        streams.batches(DECOYS, KNOBS, seed=-1, steps=STEPS, version="1")
    with pytest.raises(ValueError, match="steps"):
        streams.batches(DECOYS, KNOBS, seed=0, steps=0, version="1")
    for step in (-1, STEPS):
        with pytest.raises(ValueError, match="step"):
            streams.batches(DECOYS, KNOBS, seed=0, steps=STEPS, version="1")(step)


def test_cpvr_runs_train_on_the_batches_they_drew_before_streams():
    """Every C-PVR run (Hyper-UT and survey) reads ``training_batches``: the batches of
    ``hyper_ut.sample`` at each step's seed, as the runs drew them before the stream existed."""
    recipe = hyper_ut.cpvr_recipe(hyper_ut.cpvr_spec("ut_act", "smoke", seed=1).config)
    sizes = hyper_ut.SIZES["smoke"]
    for step in (0, recipe.cfg.steps - 1):
        want = hyper_ut.sample(
            sizes["batch_size"], sizes["length"], list(sizes["train_hops"]), seed=1 * 1_000_003 + step
        )
        assert identical(recipe.batches(step), want)


def test_chunk_jobs_draw_the_stream_and_count_as_cached_once_drawn(monkeypatch):
    from ponder.runner import parallel

    jobs = streams.chunk_jobs(DECOYS, KNOBS, seed=2, steps=STEPS, version=cpvr_decoys.VERSION)
    assert len(jobs) == 2 and not any(parallel.is_cached(job) for job in jobs)  # looking draws nothing
    calls = draws(monkeypatch, cpvr_decoys, "sample")
    jobs[1]()
    assert len(calls) == streams.CHUNK and parallel.is_cached(jobs[1]) and not parallel.is_cached(jobs[0])
    got = streams.batches(DECOYS, KNOBS, seed=2, steps=STEPS, version=cpvr_decoys.VERSION)(streams.CHUNK + 3)
    assert len(calls) == streams.CHUNK  # read from what the job drew
    assert identical(got, cpvr_decoys.sample(4, 8, [1, 2, 3], seed=streams.seed_of(2, streams.CHUNK + 3)))


@pytest.mark.parametrize("profile", ["quick", "cpu"])
def test_make_figures_draws_the_cpvr_streams_before_the_runs_that_read_them(profile):
    from ponder.repro import registry
    from ponder.runner import parallel

    independent, groups, needed = registry.training(profile)
    cpvr = {"hyper_ut", "hyper_ut_depth", "hyper_ut_modules", "hyper_ut_explorer"}
    cpvr |= {"survey_early_exit", "survey_mod", "survey_table"}
    chunks = {name: {parallel.key(j) for j in needed[name] if streams.is_chunk(j)} for name in needed}
    assert {name for name, drawn in chunks.items() if drawn} == cpvr
    sizes = hyper_ut.SIZES[profile]
    per_stream = -(-sizes["steps"] // streams.CHUNK)
    assert len(chunks["hyper_ut"]) == len(sizes["seeds"]) * per_stream and chunks["hyper_ut_depth"].isdisjoint(
        chunks["hyper_ut"]
    )
    for upstream, built in groups:
        if any(streams.is_chunk(j) for j in upstream):
            assert all(not streams.is_chunk(j) for j in built)
    assert not any(streams.is_chunk(j) for j in independent)


def test_make_figures_draws_the_streams_ahead_on_every_core_and_says_so(monkeypatch, capsys):
    from ponder.repro import notebooks
    from ponder.runner import parallel

    monkeypatch.setattr(streams, "CHUNK", 40)
    jobs = streams.chunk_jobs(DECOYS, KNOBS, seed=5, steps=100, version=cpvr_decoys.VERSION)

    run, done = (lambda: None), (lambda: None)  # runs built on the streams: one not trained, one trained
    looked_up = parallel.is_cached
    monkeypatch.setattr(parallel, "is_cached", lambda job: job is done or (job is not run and looked_up(job)))
    notebooks.draw_streams("smoke", [(jobs, [done])], width=2)  # every run trained: no stream to draw
    assert not any(parallel.is_cached(job) for job in jobs) and capsys.readouterr().out == ""
    notebooks.draw_streams("smoke", [(jobs, [done, run]), ([run], [run])], width=2)
    assert all(parallel.is_cached(job) for job in jobs)
    assert "[smoke] 3 chunk(s) of training streams drawn in" in capsys.readouterr().out
    notebooks.draw_streams("smoke", [(jobs, [run])], width=2)  # drawn: nothing to do, nothing said
    assert capsys.readouterr().out == ""
