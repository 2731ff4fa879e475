"""The tools beside the library: ``tools/gpu-plan.py`` counts what a profile trains without training it."""
import importlib.util
import json

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
    assert all(runs > 0 and steps >= runs and how in tool.MODES for rows in table.values() for runs, steps, how in rows.values())
    assert table["acm_vit"]["acm/base"][0] == 1  # the base model once, though every ACM job builds on it
    assert not list((isolated_outputs / "results").rglob("metrics.json"))  # nothing trained, nothing cached
    assert tool.acm.train_run.__name__ == "train_run" and tool.ensemble.train_runs.__name__ == "train_runs"  # the trainers are back


def test_gpu_plan_counts_the_seeds_trained_together():
    tool = load_tool("gpu-plan")
    table = tool.plan("gpu")
    assert table["hyper_ut"]["hut/cpvr"][:1] + table["hyper_ut"]["hut/cpvr"][2:] == [18, "together"]  # 6 kinds x 3 seeds, each counted
    assert table["survey_parity"]["survey/parity"][2] == "eager" and table["hyla_sraven"]["hyla/sraven"][2] == "captured"


def test_gpu_plan_reads_the_measured_rates():
    tool = load_tool("gpu-plan")
    bench = ROOT / "figures" / "gpu" / "bench-train.json"
    rates = tool.rates(bench)
    assert {("sraven", "captured"), ("C-PVR", "together"), ("C-PVR", "eager"), ("ViT", "eager"), ("parity", "eager")} <= set(rates) and all(r > 0 for r in rates.values())
    assert tool.family("hut/depth") == ("C-PVR", True) and tool.family("survey/cpvr") == ("C-PVR", False) and tool.family("acm/speech/base") == ("ViT", False)
    rows = {row["family"].split()[0]: row for row in json.loads(bench.read_text())["families"]}
    # captured runs at the captured rate where one was measured, at the eager one where not (yet); together at the captured where not
    assert rates["sraven", "captured"] == rows["sraven"]["captured_shared_steps_per_s"] != rates["sraven", "eager"]
    assert ("captured_shared_steps_per_s" in rows["C-PVR"]) or rates["C-PVR", "captured"] == rates["C-PVR", "eager"]
    assert ("captured_together_shared_steps_per_s" in rows["C-PVR"]) or rates["C-PVR", "together"] == rates["C-PVR", "captured"]
