"""The tools beside the library: ``tools/gpu-plan.py`` counts what a profile trains without training it,
and applies figures/gpu/RUN.md's rules to the measured rates; ``tools/gpu-slice.sh`` packs the run
cache that the next lease carries."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

from ponder.experiments import notebook_jobs
from ponder.paths import ROOT


def load_tool(name: str):
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gpu_plan_counts_every_notebooks_runs_and_trains_none(isolated_outputs):
    tool = load_tool("gpu-plan")
    table = tool.plan("smoke")
    assert set(table) <= set(notebook_jobs("smoke")) and {"hyper_ut", "hyla_ablations", "acm_vit", "survey_parity", "hyper_ut_vision"} <= set(table)
    assert all(runs > 0 and steps >= runs and how in tool.MODES for rows in table.values() for runs, steps, how, *_ in rows.values())
    # megabytes of the runs' weights: the largest run's at most all of them, at least their mean
    assert all(0 < largest <= mb <= runs * largest for rows in table.values() for runs, _, _, mb, largest in rows.values())
    assert table["acm_vit"]["acm/base"][0] == 1  # the base model once, though every ACM job builds on it
    assert not list((isolated_outputs / "results").rglob("metrics.json"))  # nothing trained, nothing cached
    assert tool.acm.train_run.__name__ == "train_run" and tool.ensemble.train_runs.__name__ == "train_runs"  # the trainers are back


def test_gpu_plan_times_the_runs_that_wait_on_each_other(tmp_path):
    """An ACM notebook's base ViT and phases run before its jobs, one after the other: the notebook
    takes at least its longest upstream chain, then its longest job, each at one process's rate."""
    tool = load_tool("gpu-plan")
    chains = {}
    tool.plan("smoke", chains)
    upstream, jobs = chains["acm_vit"]
    assert [name for name, _, _ in upstream[0]][:2] == ["acm/base", "acm/phase1-n4"] and all(jobs)
    assert chains["acm_ablations"][0] == [[]]  # acm_vit trained them: counted once
    bench = tmp_path / "train.json"
    bench.write_text(json.dumps({"families": [{"family": "ViT b", "steps_per_s": 2.0, "shared_steps_per_s": 8.0}]}))
    alone = tool.rates(bench, shared=False)
    assert alone["ViT", "eager"] == 2.0 and tool.rates(bench)["ViT", "eager"] == 8.0
    up, job = [("acm/base", 120, "eager"), ("acm/phase1-n4", 60, "eager")], [("acm/ztw", 240, "eager")]
    assert tool.longest_path([up], [job, job[:0]], alone) == (180 + 240) / 2 / 60


def test_gpu_plan_counts_the_seeds_trained_together():
    tool = load_tool("gpu-plan")
    reads = {}
    table = tool.plan("gpu", reads=reads)
    # 6 kinds x 3 seeds, each counted: Hyper-UT's two kinds on a line of their own (their own rate)
    assert [[table["hyper_ut"][line][0], table["hyper_ut"][line][2]] for line in ("hut/cpvr", "hut/cpvr/hyper")] == [[12, "together"], [6, "together"]]
    assert table["survey_parity"]["survey/parity"][2] == "eager" and table["hyla_sraven"]["hyla/sraven"][2] == "compiled"
    # what a lease must carry where notebooks run apart: the runs of earlier notebooks each one reads, once each
    assert reads["hyper_ut_modules"]["hyper_ut"][0] == 3 and reads["survey_table"]["hyper_ut"][0] == 5
    assert "hyla_latent" not in table and reads["hyla_latent"]["hyla_ablations"][0] == 3 and "hyper_ut" not in reads
    assert table["hyper_ut"]["hut/cpvr/hyper"][4] > table["hyper_ut"]["hut/cpvr"][4]  # a hypernetwork's weights outweigh the other kinds'


def test_gpu_plan_reads_the_measured_rates():
    tool = load_tool("gpu-plan")
    bench = ROOT / "figures" / "gpu" / "bench-train.json"
    rates = tool.rates(bench)
    assert {("sraven", "captured"), ("C-PVR", "together"), ("C-PVR", "eager"), ("ViT", "eager"), ("parity", "eager")} <= set(rates) and all(r > 0 for r in rates.values())
    assert tool.family("hut/depth") == ("C-PVR ut", True) and tool.family("survey/cpvr") == ("C-PVR", False) and tool.family("acm/speech/base") == ("ViT", False)
    assert tool.family("hut/cpvr/hyper_act") == ("C-PVR hyper", True) and tool.group_name("hut/cpvr/hyper") == "hut/cpvr/hyper" and tool.group_name("hut/cpvr/ut") == "hut/cpvr"
    # the C-PVR kinds at their own rates (Hyper-UT's step the dearer); the runs of the survey and the scratchpad at the slowest
    assert rates["C-PVR hyper", "together"] < rates["C-PVR ut", "together"] and rates["C-PVR", "together"] == rates["C-PVR hyper", "together"]
    rows = {row["family"].split()[0]: row for row in json.loads(bench.read_text())["families"]}
    # captured runs at the captured rate where one was measured, at the eager one where not (yet); together at the captured where not
    assert rates["sraven", "captured"] == rows["sraven"]["captured_shared_steps_per_s"] != rates["sraven", "eager"]
    assert ("captured_shared_steps_per_s" in rows["C-PVR"]) or rates["C-PVR", "captured"] == rates["C-PVR", "eager"]
    assert ("captured_together_shared_steps_per_s" in rows["C-PVR"]) or rates["C-PVR", "together"] == rates["C-PVR", "captured"]
    compiled = rows.get("compiled")  # a "compiled sraven ..." row where the bench measured one
    assert rates["sraven", "compiled"] == (compiled["captured_shared_steps_per_s"] if compiled else rates["sraven", "captured"])


def test_gpu_plan_times_compiled_runs_at_the_compiled_rows_rate(tmp_path):
    tool = load_tool("gpu-plan")
    row = lambda family, shared, captured: {"family": family, "shared_steps_per_s": shared, "captured_shared_steps_per_s": captured}  # noqa: E731
    bench = tmp_path / "train.json"
    bench.write_text(json.dumps({"families": [row("sraven a", 10.0, 20.0), row("compiled sraven a", 5.0, 50.0), row("bf16 sraven a", 1.0, 1.0), row("compiled-cublas sraven a", 2.0, 2.0),
                                               row("ViT b", 3.0, 4.0), {"family": "compiled ViT b", "error": "no compiler"}]}))
    rates = tool.rates(bench)
    assert rates["sraven", "captured"] == 20.0 and rates["sraven", "compiled"] == 50.0 and rates["sraven", "eager"] == 10.0
    assert rates["ViT", "compiled"] == rates["ViT", "captured"] == 4.0
    assert rates["sraven", "compiled eager"] == 5.0 and rates["ViT", "compiled eager"] == rates["ViT", "eager"] == 3.0
    run = lambda name="hyla/sraven/hyla", **config: type("Run", (), {"name": name, "config": config})  # noqa: E731
    assert tool.mode(run(compiled=True)) == "compiled" and tool.mode(run(compiled=False)) == "captured"
    assert tool.mode(run("hyla/text/hyla", compiled=True)) == "compiled eager" and tool.mode(run("hyla/text/hyla")) == "eager"
    # an ACM phase-III run's finetune_step: compiled and captured at the compiled row's captured rate, compiled alone at its eager one
    modes = [tool.mode(run("acm/phase3-n4", **({"step": step} if step else {}))) for step in (None, "captured", "compiled", "compiled and captured")]
    assert modes == ["eager", "captured", "compiled eager", "compiled"]


def test_gpu_plan_applies_the_rules_of_run_md_to_the_rates():
    tool = load_tool("gpu-plan")
    rows = [{"family": "C-PVR a", "shared_steps_per_s": 100.0, "captured_shared_steps_per_s": 90.0, "captured_together_shared_steps_per_s": 250.0},
            {"family": "C-PVR b", "shared_steps_per_s": 100.0, "captured_error": "no graph", "together_error": "no graph"},
            {"family": "digits U-ViT c", "shared_steps_per_s": 10.0, "captured_shared_steps_per_s": 11.0},
            {"family": "sraven d", "shared_steps_per_s": 50.0, "captured_shared_steps_per_s": 100.0},
            {"family": "compiled sraven d", "shared_steps_per_s": 40.0, "captured_shared_steps_per_s": 109.0},
            {"family": "compiled-cublas sraven d", "shared_steps_per_s": 40.0, "captured_shared_steps_per_s": 100.0},
            {"family": "bf16 sraven d", "shared_steps_per_s": 60.0, "captured_shared_steps_per_s": 150.0},
            {"family": "C-PVR e", "shared_steps_per_s": 100.0}]
    lines = tool.decisions(rows)
    assert lines == [
        "C-PVR a, captured: 90 against eager 100 (0.90x): capture=False in hyper_ut.train_cpvr for runs not trained together (none while seeds_together is on)",
        "C-PVR a, together: 250 against eager 100 (2.50x): keep",
        "C-PVR b, captured: failed (no graph): capture=False in hyper_ut.train_cpvr for runs not trained together (none while seeds_together is on)",
        "C-PVR b, together: failed (no graph): seeds_together=False in the gpu row of lib/ponder/sizes/hyper_ut.py",
        "digits U-ViT c, captured: 11 against eager 10 (1.10x): keep",
        "compiled sraven d: 109 against 100 captured (1.09x): no change (below 1.1x)",
        "compiled-cublas sraven d: the compiled row (small products as sums) 109 against 100 (1.09x): keep SUM_SMALL_PRODUCTS",
        "bf16 sraven d: 150 against 100 captured (1.50x): reported only",
        "C-PVR e, captured: not measured: no change until the benchmark measures it",
        "C-PVR e, together: not measured: no change until the benchmark measures it",
        "C-PVR, together, all kinds: failed for one: seeds_together=False in the gpu row of lib/ponder/sizes/hyper_ut.py",
    ]
    rows[4]["captured_shared_steps_per_s"] = 110.0
    assert tool.decisions(rows)[5].endswith("(1.10x): compiled=True in the gpu row of lib/ponder/sizes/hyla.py")
    rows[5]["captured_shared_steps_per_s"] = 111.0
    assert tool.decisions(rows)[6].endswith("110 against 111 (0.99x): SUM_SMALL_PRODUCTS = False in lib/ponder/compilation.py")
    assert tool.small_products("compiled-cublas e", 50.0, None) == "compiled-cublas e: 50 captured; the compiled row not measured: no change"
    # seeds_together is one setting for every C-PVR kind: the H200's rates of 2026-11-27 keep it on
    # though Hyper-UT's is below its eager one, since a run-step of each kind takes less time in all
    h200 = [{"family": "C-PVR ut_act", "shared_steps_per_s": 220.9, "captured_together_shared_steps_per_s": 447.4},
            {"family": "C-PVR hyper_act", "shared_steps_per_s": 278.1, "captured_together_shared_steps_per_s": 265.4}]
    assert tool.decisions(h200) == [
        "C-PVR ut_act, captured: not measured: no change until the benchmark measures it",
        "C-PVR ut_act, together: 447 against eager 221 (2.03x): keep",
        "C-PVR hyper_act, captured: not measured: no change until the benchmark measures it",
        "C-PVR hyper_act, together: 265 against eager 278 (0.95x): below eager: see all kinds",
        "C-PVR, together, all kinds: a run-step of each of the 2 kinds takes 6.00 ms against eager 8.12 (0.74x): keep",
    ]
    h200[0]["captured_together_shared_steps_per_s"] = 150.0
    assert tool.decisions(h200)[-1].endswith("(1.28x): seeds_together=False in the gpu row of lib/ponder/sizes/hyper_ut.py")


def pack_runs(tmp_path, runs: dict[str, tuple[str, int, bool]], **env) -> tuple[str, set[str]]:
    """``tools/gpu-slice.sh`` with no step on a run cache of ``runs`` (``{name: (weights file, MiB,
    finished)}``) in ``tmp_path``, with ``env`` set: its output and the files of the pack it made."""
    for name, (weights, megabytes, finished) in runs.items():
        folder = tmp_path / "results" / "gpu" / name
        folder.mkdir(parents=True)
        (folder / weights).write_bytes(os.urandom(megabytes << 20))
        if finished:
            (folder / "metrics.json").write_text("{}")
    done = subprocess.run(["bash", str(ROOT / "tools" / "gpu-slice.sh"), str(tmp_path / "out"), "100"], cwd=tmp_path,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    parts = b"".join(part.read_bytes() for part in sorted((tmp_path / "out").glob("runs-gpu.tgz.part-*")))
    listing = subprocess.run(["tar", "tzf", "-"], input=parts, capture_output=True, check=True).stdout.decode().split()
    return done.stdout, {path for path in listing if not path.endswith("/")}


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("split") is None, reason="needs bash and coreutils")
def test_gpu_slice_packs_what_a_carry_can_hold(tmp_path):
    """A run over 10 MB, finished (a language model) or cut off (a 12-block ViT's checkpoint), stays
    out of the run cache's pack, which the next lease carries within 64 MiB; smaller runs, finished
    or still training (a checkpoint, no metrics), go in."""
    said, files = pack_runs(tmp_path, {"hyla/text/hyla/a": ("model.safetensors", 11, True), "hyla/sraven/hyla/b": ("model.safetensors", 2, True),
                                       "acm/base/c": ("checkpoint.safetensors", 12, False), "hyla/sraven/hyla/d": ("checkpoint.safetensors", 3, False)})
    assert "not packed, a run over 10 MB: results/gpu/hyla/text/hyla/a" in said
    assert "not packed, a run over 10 MB: results/gpu/acm/base/c" in said
    assert files == {"results/gpu/hyla/sraven/hyla/b/model.safetensors", "results/gpu/hyla/sraven/hyla/b/metrics.json",
                     "results/gpu/hyla/sraven/hyla/d/checkpoint.safetensors"}


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("split") is None, reason="needs bash and coreutils")
def test_gpu_slice_packs_the_folders_asked_for_within_its_megabytes(tmp_path):
    """``PACK`` names the run folders a later lease reads and ``PACK_MB`` caps the pack, so that it comes
    back whole (64 MiB with the figures and logs): a run cut off goes in first, though its name sorts
    last, then the finished runs while they fit; every run left out is named with why. ``du`` rounds
    up: the cut-off run's 3 MiB count 3 or 4 MB, the first finished run's 1 MiB and metrics 2, the
    second's 2 MiB 3: the first two fit 6 MB, the third does not."""
    said, files = pack_runs(tmp_path, {"hyla/sraven/hyla/x": ("checkpoint.safetensors", 3, False), "hyla/sraven/hyla/b": ("model.safetensors", 2, True),
                                       "hyla/fuzzy/hyla/c": ("model.safetensors", 1, True), "hut/cpvr/ut/z": ("model.safetensors", 1, True)},
                            PACK="hyla", PACK_MB="6")
    assert "not packed, over the pack's 6 MB: results/gpu/hyla/sraven/hyla/b" in said
    assert "not packed, not in PACK: results/gpu/hut/cpvr/ut/z" in said
    assert files == {"results/gpu/hyla/sraven/hyla/x/checkpoint.safetensors",
                     "results/gpu/hyla/fuzzy/hyla/c/model.safetensors", "results/gpu/hyla/fuzzy/hyla/c/metrics.json"}


def test_gpu_slice_runs_the_probes_and_the_benchmarks_it_is_given(tmp_path):
    """First the committed ledger's rows go back into the run cache (``tools/ledger-rows.py``); then
    ``probes`` compares the stacked and the alone gradients of hyper_act and ut_act,
    ``lengths`` runs the fuzzy-logic length probe, ``scenes`` the image stand-in probe, ``captures`` the CUDA tests of the ways
    ACM's phase III may train and then the capture probe, ``sraven-batch`` the three
    sraven runs at smaller batches side by side (in any order), ``bench:kernels,train`` those two benchmarks (each in
    a process of its own, ``python -m ponder.bench``'s way); here with a stand-in ``python3`` that only records its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/calls\n')
    (bin_dir / "python3").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(ROOT / "tools" / "gpu-slice.sh"), str(tmp_path / "out"), "100", "probes", "lengths", "scenes", "sraven-batch",
                           "bench:kernels,train", "captures"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = [line for line in (tmp_path / "calls").read_text().splitlines() if not line.startswith("-c ")]
    side_by_side = ["tools/sraven-probe.py hyla 80000 128 600", "tools/sraven-probe.py softmax 80000 128 600", "tools/sraven-probe.py hyla 40000 256 300"]
    every_step = ",".join(map(str, range(1, 30)))
    assert calls[:6] == ["tools/ledger-rows.py gpu", "tools/together-probe.py hyper_act --log-every 1", f"tools/together-probe.py hyper_act --gradients {every_step}",
                         "tools/together-probe.py hyper_act --updates 12,13,14,15,16,17,18,19,20", "tools/length-probe.py fuzzy gpu --steps 2000,8000 --jobs 6",
                         "tools/scene-probe.py gpu noise=0.15 texture=0.7 jitter=0.5,texture=0.6,noise=0.1 --jobs 3"]
    assert sorted(calls[6:9]) == sorted(side_by_side) and calls[9:] == ["-m ponder.bench kernels train", "-m pytest -q tests/test_gpu.py -k phase_three_trains_alike or compiled_variant or compiled_language_model",
                                                                         "tools/capture-probe.py ACM phase III,A-ViT,text"]


def test_gpu_plan_speeds_up_the_eager_families_at_the_sraven_rules_gain():
    """ACM's phase-III runs and the language models train eagerly; the rule takes the fastest of the ways
    they can take (ACM: capturing, compiling, both; the language models validate inside their loss at steps
    the host reads, so only compiling), at 1.1 times the eager rate side by side (each a knob of the gpu row
    alone), and says what was not measured."""
    tool = load_tool("gpu-plan")
    plain = {"family": "ACM phase III f", "shared_steps_per_s": 26.0, "captured_shared_steps_per_s": 28.0}
    fused = {"family": "compiled ACM phase III f", "shared_steps_per_s": 40.0, "captured_shared_steps_per_s": 52.0}
    assert tool.decisions([plain, fused])[:-1] == [  # the last line: the C-PVR families, not measured here
        "ACM phase III f, captured: 28 against eager 26 (1.08x): no change (below 1.1x)",
        "compiled ACM phase III f, compiled and captured: 52 against eager 26 (2.00x): finetune_step=\"compiled and captured\" in the gpu row "
        "of lib/ponder/sizes/acm.py"]
    failed = {"family": "compiled ACM phase III f", "shared_steps_per_s": 29.0, "captured_error": "operation not permitted when stream is capturing"}
    assert tool.decisions([plain, failed])[1] == "compiled ACM phase III f, compiled: 29 against eager 26 (1.12x): finetune_step=\"compiled\" in the gpu row of lib/ponder/sizes/acm.py"
    assert tool.decisions([{"family": "ACM phase III f", "shared_steps_per_s": 26.0}, {"family": "compiled ACM phase III f", "error": "no compiler"}])[:-1] == [
        "ACM phase III f: not measured (no captured rate): no change", "compiled ACM phase III f: not measured (no compiler): no change"]
    assert tool.decisions([fused])[0] == "compiled ACM phase III f: not measured (no eager rate side by side): no change"
    text = [{"family": "text g", "shared_steps_per_s": 100.0, "captured_shared_steps_per_s": 300.0},
            {"family": "compiled text g", "shared_steps_per_s": 140.0, "captured_shared_steps_per_s": 400.0}]
    assert tool.decisions(text)[:-1] == ["compiled text g, compiled: 140 against eager 100 (1.40x): compiled=True in the gpu row of TEXT in lib/ponder/sizes/hyla.py"]
    text[1]["shared_steps_per_s"] = 105.0
    assert tool.decisions(text)[0] == "compiled text g, compiled: 105 against eager 100 (1.05x): no change (below 1.1x)"


def test_capture_probe_gives_the_bench_rows_of_the_families_named():
    """On the CPU only the eager rates (a step is captured on a GPU alone), in bench-train.json's format:
    the family's row, then its compiled variant's (the bench's other variants are not the probe's). One
    process: each of processes side by side would compile the step again."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "TQDM_DISABLE": "1", "PONDER_WORKERS": "1"}
    probe = [sys.executable, str(ROOT / "tools" / "capture-probe.py")]
    done = subprocess.run([*probe, "ACM phase III", "--profile", "smoke"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row["family"].split(" N=")[0] for row in rows] == ["ACM phase III", "compiled ACM phase III"]
    for row in rows:
        assert row["profile"] == "smoke" and row["steps_per_s"] > 0 and "error" not in row
        assert not [key for key in row if key.startswith("captured")]
    unknown = subprocess.run([*probe, "no such family", "--profile", "smoke"], env=env, capture_output=True, text=True, timeout=300)
    assert unknown.returncode != 0 and "no family starts with" in unknown.stderr


def test_gpu_slice_installs_the_wheels_once_per_machine(tmp_path):
    """The next call on a warm machine finds the same wheels installed and skips pip; other wheels
    (a carry with one more) are installed again."""
    bin_dir, wheels = tmp_path / "bin", tmp_path / ".whl"
    bin_dir.mkdir(), wheels.mkdir()
    (wheels / "a-1-py3-none-any.whl").write_text("")
    (bin_dir / "python3").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/calls\n')
    (bin_dir / "python3").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GPU_SLICE_SITE": str(tmp_path / "site")}
    installs = []
    for extra in (None, None, "b-1-py3-none-any.whl"):
        if extra:
            (wheels / extra).write_text("")
        done = subprocess.run(["bash", str(ROOT / "tools" / "gpu-slice.sh"), str(tmp_path / "out"), "100"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        installs.append(sum(line.startswith("-m pip install") for line in (tmp_path / "calls").read_text().splitlines()))
    assert installs == [1, 1, 2]


def test_gpu_plan_counts_the_training_streams_drawn_before_the_runs(tmp_path, capsys):
    tool = load_tool("gpu-plan")
    from ponder.experiments.hyper_ut import SIZES

    gpu = SIZES["gpu"]
    chunks, steps = tool.stream_steps("gpu")
    per_seed = gpu["steps"] + gpu["depth_grid"]["steps"]  # the main task's stream and the depth grid's, each seed
    assert chunks == len(gpu["seeds"]) * -(-per_seed // 500) and steps == len(gpu["seeds"]) * per_seed
    measured = tmp_path / "streams.json"
    measured.write_text(json.dumps({"median_ms": {"draw a batch": 5.0, "draw a gpu-size batch": 30.0}}))
    tool.print_streams("gpu", measured)
    assert f"{steps * 30 / 6e4:.1f} CPU-min at 30.0 ms a batch" in capsys.readouterr().out


def test_together_probe_replays_seeds_together_against_each_alone(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "PONDER_RESULTS": str(tmp_path)}
    env.pop("CUBLAS_WORKSPACE_CONFIG", None)
    probe = [sys.executable, str(ROOT / "tools" / "together-probe.py")]
    done = subprocess.run([*probe, "ut_act", "2", "--log-every", "5", "--attention", "fused"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(line["setting"], line["log_every"]) for line in lines] == [("default, fused attention", 5)] * 2
    # on the CPU the two trainings agree to float32 rounding (with PyTorch's fused attention too, which
    # the CPU otherwise skips at these lengths), and a replay repeats the first bit for bit
    assert all(len(line["max"]) == 3 and max(line["max"]) < 1e-5 and line["first_step_over_1e-4"] == [None] * 3 for line in lines)
    assert all(len(steps) == 6 and max(steps) < 1e-5 for line in lines for steps in line["by_step"])  # 30 steps, every 5th read
    assert all(end["weights"][1] < 1e-5 and end["halting_steps_differ"] == 0 and end["logits"] < 1e-4 for end in lines[0]["end"])
    assert "alone_drift" not in lines[0] and lines[1]["alone_drift"] == lines[1]["together_drift"] == [0.0] * 3
    # gradient noise of 1e-5 of each gradient's size, on the weights or on attention's inputs, moves the
    # CPU's losses by less than itself: no amplification
    for on in ("weights", "attention"):
        noisy = subprocess.run([*probe, "ut_act", "--grad-noise", "1e-5", "--noise-on", on, "--log-every", "5"], env=env, capture_output=True, text=True, timeout=300)
        assert noisy.returncode == 0, noisy.stderr
        (line,) = [json.loads(line) for line in noisy.stdout.splitlines()]
        assert (line["grad_noise"], line["noise_on"]) == (1e-5, on) and len(line["max"]) == 3 and 0 < max(line["max"]) < 1e-5
    # one step's gradients, stacked against alone, tensor by tensor: on the CPU float32 rounding, with
    # the halting unit held at step 0 (its two tensors get none) and training from step 12 on
    stepped = subprocess.run([*probe, "hyper_act", "--gradients", "0,12"], env=env, capture_output=True, text=True, timeout=300)
    assert stepped.returncode == 0, stepped.stderr
    lines = [json.loads(line) for line in stepped.stdout.splitlines()]
    assert [line["gradients_at"] for line in lines] == [0, 12] and all(len(line["seeds"]) == 3 for line in lines)
    assert [{seed["of"] for seed in line["seeds"]} for line in lines] == [{38}, {40}]
    assert all(seed["above_1e-5"] == 0 and len(seed["furthest"]) == 3 and 0 < seed["furthest"][0][1] < 1e-5 for line in lines for seed in line["seeds"])
    # and both paths are float32's rounding away from the same gradients in float64
    assert all(0 < seed[path][0][1] < 1e-5 for line in lines for seed in line["seeds"] for path in ("alone_from_float64", "stacked_from_float64"))
    # one whole update (gradients, clipping, AdamW) from the same checkpointed state: float32's rounding of
    # the weights, a few 1e-5 of an update of 3e-3 of them; the probe's runs leave no trace in the cache
    updated = subprocess.run([*probe, "hyper_act", "--updates", "1,13"], env=env, capture_output=True, text=True, timeout=300)
    assert updated.returncode == 0, updated.stderr
    lines = [json.loads(line) for line in updated.stdout.splitlines()]
    assert [line["update_at"] for line in lines] == [1, 13] and [{seed["of"] for seed in line["seeds"]} for line in lines] == [{38}, {40}]
    assert all(0 < seed["furthest"][0][1] < 1e-4 for line in lines for seed in line["seeds"])
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]
    assert subprocess.run([*probe, "hyper_act", "--updates", "0"], env=env, capture_output=True, text=True, timeout=300).returncode != 0
    refused = subprocess.run([*probe, "ut_act", "--deterministic"], env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0 and "CUBLAS_WORKSPACE_CONFIG=:4096:8" in refused.stderr


def test_length_probe_trains_the_profiles_runs_at_each_length_and_judges_the_first_kind(capsys):
    """``tools/length-probe.py``: one JSON line per kind × length × seed; at the profile's own length
    the probe's run is the profile's run (the same cache entry, the same score); per length, the first
    kind against the others by the ledger's rule."""
    from ponder.experiments import hyla

    probe = load_tool("length-probe")
    probe.main(["fuzzy", "smoke", "--steps", "3,6", "--kinds", "hyla,softmax", "--jobs", "1"])
    out = capsys.readouterr().out.splitlines()
    lines = [json.loads(line) for line in out if line.startswith("{")]
    assert [(line["kind"], line["steps"], line["seed"]) for line in lines] == [(kind, steps, seed) for steps in (3, 6) for kind in ("hyla", "softmax") for seed in (0, 1, 2)]
    assert all(line["examples"] == line["steps"] * 16 and line["batch_size"] == 16 for line in lines)
    base = hyla.fuzzy_setup("smoke", kind="hyla")
    assert base.steps == 6
    own = next(line for line in lines if (line["kind"], line["steps"], line["seed"]) == ("hyla", 6, 0))
    own_metrics = hyla.train_fuzzy_once(base, "smoke", 0)[1]
    assert own["ood"] == own_metrics["test_r2"] and own["baseline"] == own_metrics["test_r2_task_average"]  # the trivial predictor beside it
    summary = [line for line in out if not line.startswith("{")]
    assert summary[0].startswith("3 steps: hyla ") and "softmax" in summary[0] and summary[2].startswith("6 steps: ")
    assert "; ignoring the context " in summary[0]
    verdicts = ("holds", "does not hold", "inconclusive")
    assert summary[1].startswith("  hyla > softmax: ") and summary[1].split(": ")[1].split(" (")[0] in verdicts
    assert summary[4] == "6 steps against 3:" and len(summary) == 7
    assert [line.split(": ")[0] for line in summary[5:]] == ["  hyla gains", "  softmax gains"] and all(line.split(": ")[1].split(" (")[0] in verdicts for line in summary[5:])
    assert all(line["held_out"] == 0.7 for line in lines)
    # hyla-2's drop: two held-out fractions, each kind's drop from the lower to the higher, paired by seed
    probe.main(["fuzzy", "smoke", "--steps", "3", "--kinds", "hyla,linear", "--held-out", "0.3,0.7", "--jobs", "1"])
    out = capsys.readouterr().out.splitlines()
    ood = {(line["kind"], line["held_out"], line["seed"]): line["ood"] for line in map(json.loads, (line for line in out if line.startswith("{")))}
    assert len(ood) == 12 and ood["hyla", 0.3, 0] == hyla.train_fuzzy_once(hyla.fuzzy_setup("smoke", kind="hyla", steps=3, frac_test=0.3), "smoke", 0)[1]["test_r2"]
    summary = [line for line in out if not line.startswith("{")]
    assert summary[0].startswith("0.3 held out, 3 steps: hyla ") and summary[2].startswith("0.7 held out, 3 steps: hyla ")
    drop = sum(ood["hyla", 0.3, seed] - ood["hyla", 0.7, seed] for seed in range(3)) / 3
    assert summary[4].startswith(f"3 steps, the drop from 0.3 to 0.7 held out: hyla {drop:+.3g}") and summary[5].startswith("  hyla drops less than linear: ")
    for bad in (["--kinds", "hyla"], ["--kinds", "hyla,nope"]):
        with pytest.raises(SystemExit):
            probe.main(["fuzzy", "smoke", "--steps", "3", *bad])


def test_ledger_rows_puts_the_committed_rows_back_for_the_notebooks_not_run(isolated_outputs, monkeypatch):
    """A gpu lease starts with no claims files: the committed ledger's rows come back as its notebooks
    recorded them, with the code its header names (so ``gather`` marks them older), a row already
    older keeps its mark, and a target with a file of its own keeps that file."""
    from ponder import claims

    tool = load_tool("ledger-rows")
    monkeypatch.setattr(claims, "code_version", lambda: "aaaa/bbbb")
    claims.claim("acm-9", "grouped is fast", 0.79, claims.below([0.9, 0.8, 0.7], 0.5), profile="gpu", paper="—")
    claims.claim("acm-9", "a row that describes | with a bar", "1.5x", None, profile="gpu")
    claims.claim("hyla-2", "HYLA drops least", 0.01, claims.greater([0.3, 0.2, 0.25], [0.1, 0.15, 0.05]), profile="gpu")
    made = claims.rows("gpu")
    text = claims.gather("gpu").read_text()
    assert tool.committed_rows(text) == {"acm-9": made[:2], "hyla-2": made[2:]}

    monkeypatch.setattr(claims, "code_version", lambda: "cccc/dddd")
    older = tool.committed_rows(claims.gather("gpu").read_text())
    assert {r["code"] for rows in older.values() for r in rows} == {"older than cccc/dddd"}

    claims.clear("gpu")
    claims.claim("hyla-2", "HYLA drops least", 0.02, None, profile="gpu")
    monkeypatch.setattr(tool, "committed", lambda root, ref, path: text.encode() if path == "figures/gpu/CLAIMS.md" else None)
    assert tool.restore("gpu") == ["acm-9"]
    assert claims.rows("gpu") == made[:2] + [dict(made[2], ours="0.02", verdict=None, noise="", code="cccc/dddd")]
    assert "Rows made by other code than cccc/dddd (marked *older*" in claims.gather("gpu").read_text()


def test_scene_probe_trains_the_base_vit_and_its_exits_per_scene_in_the_run_cache(tmp_path):
    """``tools/scene-probe.py``: one JSON line per scene, the scene's knobs as given over the profile's
    (textured) ones; its runs go to the run cache, keyed by the scene (the base model's config holds
    it), so a scene probed again trains nothing; a malformed scene is refused before anything trains."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "PONDER_RESULTS": str(tmp_path / "results"), "TQDM_DISABLE": "1"}
    probe = [sys.executable, str(ROOT / "tools" / "scene-probe.py"), "smoke"]
    runs = lambda: sorted(p.parent.relative_to(tmp_path) for p in (tmp_path / "results").rglob("metrics.json"))  # noqa: E731
    done = subprocess.run([*probe, "textured", "noise=0.2,jitter=0.5"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["scene"] for line in lines] == ["textured", "noise=0.2,jitter=0.5"]
    assert lines[0]["knobs"] == {"jitter": 0.25, "texture": 0.3, "noise": 0.03} and lines[1]["knobs"] == {"jitter": 0.5, "texture": 0.3, "noise": 0.2}
    assert all(0 <= line["base_accuracy"] <= 1 and line["base_mmacs"] > 0 for line in lines)
    assert len(runs()) == 4  # per scene a base model and its exits
    # each scene in a fresh process: the second scene's knobs are not the first one's changed again
    again = subprocess.run([*probe, "noise=0.2", "jitter=0.5", "--jobs", "1"], env=env, capture_output=True, text=True, timeout=300)
    assert [json.loads(line)["knobs"] for line in again.stdout.splitlines()] == [{"jitter": 0.25, "texture": 0.3, "noise": 0.2}, {"jitter": 0.5, "texture": 0.3, "noise": 0.03}]
    trained = runs()
    assert len(trained) == 8
    repeated = subprocess.run([*probe, "noise=0.2,jitter=0.5"], env=env, capture_output=True, text=True, timeout=300)
    assert json.loads(repeated.stdout) == lines[1] and runs() == trained
    refused = subprocess.run([*probe, "blur=2"], env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0 and "KNOB=VALUE" in refused.stderr
