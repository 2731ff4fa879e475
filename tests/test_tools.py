"""The tool beside the library: ``tools/length-probe.py`` trains a profile's attention kinds at several
training lengths (or held-out fractions) and judges them by the ledger's rule."""

import importlib.util
import json

import pytest

from ponder.paths import ROOT


def load_tool(name: str):
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_length_probe_trains_the_profiles_runs_at_each_length_and_judges_the_first_kind(capsys):
    """``tools/length-probe.py``: one JSON line per kind × length × seed; at the profile's own length
    the probe's run is the profile's run (the same cache entry, the same score); per length, the first
    kind against the others by the ledger's rule."""
    from ponder.studies.hyla import experiments as hyla

    probe = load_tool("length-probe")
    probe.main(["fuzzy", "smoke", "--steps", "3,6", "--kinds", "hyla,softmax", "--jobs", "1"])
    out = capsys.readouterr().out.splitlines()
    lines = [json.loads(line) for line in out if line.startswith("{")]
    assert [(line["kind"], line["steps"], line["seed"]) for line in lines] == [
        (kind, steps, seed) for steps in (3, 6) for kind in ("hyla", "softmax") for seed in (0, 1, 2)
    ]
    assert all(line["examples"] == line["steps"] * 16 and line["batch_size"] == 16 for line in lines)
    base = hyla.fuzzy_setup("smoke", kind="hyla")
    assert base.steps == 6
    own = next(line for line in lines if (line["kind"], line["steps"], line["seed"]) == ("hyla", 6, 0))
    own_metrics = hyla.train_fuzzy_once(base, "smoke", 0)[1]
    assert (
        own["ood"] == own_metrics["test_r2"] and own["baseline"] == own_metrics["test_r2_task_average"]
    )  # the trivial predictor beside it
    summary = [line for line in out if not line.startswith("{")]
    assert summary[0].startswith("3 steps: hyla ") and "softmax" in summary[0] and summary[2].startswith("6 steps: ")
    assert "; ignoring the context " in summary[0]
    verdicts = ("holds", "does not hold", "inconclusive")
    assert summary[1].startswith("  hyla > softmax: ") and summary[1].split(": ")[1].split(" (")[0] in verdicts
    assert summary[4] == "6 steps against 3:" and len(summary) == 7
    assert [line.split(": ")[0] for line in summary[5:]] == ["  hyla gains", "  softmax gains"] and all(
        line.split(": ")[1].split(" (")[0] in verdicts for line in summary[5:]
    )
    assert all(line["held_out"] == 0.7 for line in lines)
    # hyla-2's drop: two held-out fractions, each kind's drop from the lower to the higher, paired by seed
    probe.main(["fuzzy", "smoke", "--steps", "3", "--kinds", "hyla,linear", "--held-out", "0.3,0.7", "--jobs", "1"])
    out = capsys.readouterr().out.splitlines()
    ood = {
        (line["kind"], line["held_out"], line["seed"]): line["ood"]
        for line in map(json.loads, (line for line in out if line.startswith("{")))
    }
    assert (
        len(ood) == 12
        and ood["hyla", 0.3, 0]
        == hyla.train_fuzzy_once(hyla.fuzzy_setup("smoke", kind="hyla", steps=3, frac_test=0.3), "smoke", 0)[1][
            "test_r2"
        ]
    )
    summary = [line for line in out if not line.startswith("{")]
    assert summary[0].startswith("0.3 held out, 3 steps: hyla ") and summary[2].startswith(
        "0.7 held out, 3 steps: hyla "
    )
    drop = sum(ood["hyla", 0.3, seed] - ood["hyla", 0.7, seed] for seed in range(3)) / 3
    assert summary[4].startswith(f"3 steps, the drop from 0.3 to 0.7 held out: hyla {drop:+.3g}") and summary[
        5
    ].startswith("  hyla drops less than linear: ")
    for bad in (["--kinds", "hyla"], ["--kinds", "hyla,nope"]):
        with pytest.raises(SystemExit):
            probe.main(["fuzzy", "smoke", "--steps", "3", *bad])
