"""Profiles, the claims ledger, deterministic figures and the notebooks' conventions."""

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import nbformat
import papermill
import pytest
import torch

from ponder.checks import check_choice
from ponder.ledger import rows as ledger
from ponder.ledger import verdicts
from ponder.paths import claims_dir, figures_dir, results_dir, runs_dir
from ponder.plots import save_figure, set_theme
from ponder.profiles import PROFILES, by_profile, check_device, check_profile
from ponder.repro import cli, execution, notebooks, registry
from ponder.runner.specs import Chosen, declared


def test_unknown_profile_names_the_allowed_ones():
    with pytest.raises(
        ValueError, match=r"profile='fast' is not allowed; choose one of 'smoke', 'quick', 'cpu', 'gpu', 'paper'"
    ):
        check_profile("fast")


@pytest.mark.parametrize(
    "seed, error, message",
    [
        ("abc", TypeError, "seed must be an integer, got 'abc'"),
        ("3", TypeError, "seed must be an integer"),
        (1.5, TypeError, "seed must be an integer"),
        (True, TypeError, "seed must be an integer, got True"),
        (None, TypeError, "seed must be an integer"),
        (-1, ValueError, "seed=-1 must be >= 0"),
        (2**32, ValueError, "seed=4294967296 must be <= 4294967295"),
    ],
)
def test_setup_rejects_a_bad_seed(seed, error, message):
    """The second cell of every notebook: papermill may pass anything as ``seed``."""
    from ponder.repro.session import setup

    with pytest.raises(error, match=message):
        setup("smoke", seed)


def test_setup_takes_a_non_negative_int_seed():
    import numpy as np

    from ponder.repro.session import setup

    setup("smoke", np.int64(7))
    first = np.random.rand()
    setup("smoke", 7)
    assert np.random.rand() == first


def test_by_profile_reads_the_row_and_demands_every_profile():
    assert by_profile({"smoke": 1, "quick": 2, "gpu": 4, "paper": 3}, "quick") == 2
    with pytest.raises(KeyError, match="paper"):
        by_profile({"smoke": 1, "quick": 2}, "smoke")


def test_cpu_reads_its_own_row_or_quicks():
    assert by_profile({"smoke": 1, "quick": 2, "gpu": 4, "paper": 3}, "cpu") == 2
    assert by_profile({"smoke": 1, "quick": 2, "cpu": 5, "gpu": 4, "paper": 3}, "cpu") == 5


def test_cpu_shares_quicks_run_cache_but_keeps_its_own_ledger_and_figures(isolated_outputs):
    assert runs_dir("cpu") == runs_dir("quick") == results_dir("quick")
    assert runs_dir("smoke") == results_dir("smoke")
    assert claims_dir("cpu") != claims_dir("quick")
    assert figures_dir("cpu") == isolated_outputs / "figures" / "cpu"


def test_unknown_model_kind_style_error():
    with pytest.raises(ValueError, match="kind='lstm' is not allowed; choose one of 'ut', 'act'"):
        check_choice("kind", "lstm", ["ut", "act"])


def test_quick_figures_go_to_figures_and_others_to_subfolders(isolated_outputs):
    assert figures_dir("quick") == isolated_outputs / "figures"
    assert figures_dir("smoke") == isolated_outputs / "figures" / "smoke"


def test_claims_are_recorded_replaced_and_gathered():
    ledger.claim(
        "hut-3",
        "Hyper-UT is best beyond training",
        ours=0.71,
        verdict=verdicts.greater([0.7, 0.8, 0.9], [0.1, 0.2, 0.3]),
        profile="smoke",
        paper="best",
    )
    ledger.claim(
        "hut-3",
        "Hyper-UT is best beyond training",
        ours=0.42,
        verdict=verdicts.greater([0.4, 0.4, 0.4], [0.5, 0.5, 0.6]),
        profile="smoke",
    )
    ledger.claim("hut-10", "pool sizes", ours="see figure", verdict=None, profile="smoke")
    ledger.claim(
        "hut-2",
        "deeper for more hops",
        ours="yes",
        verdict=verdicts.exact(True),
        profile="smoke",
        kind="exactness check",
    )
    ledger.claim("hut-4", "steps grow", ours="+0.1", verdict=verdicts.above([0.2], 0.05), profile="smoke")
    rows = ledger.rows("smoke")
    assert [r["id"] for r in rows] == ["hut-2", "hut-3", "hut-4", "hut-10"]  # natural order, replaced not duplicated
    assert rows[1]["ours"] == "0.42" and rows[1]["verdict"] == "does not hold"
    text = ledger.gather("smoke").read_text()
    assert verdicts.RULE in text and "seed 0, commit " in text
    assert "1 holds, 1 does not hold, 1 inconclusive, 1 describe." in text
    assert "By kind: paper claims 1 does not hold, 1 inconclusive; exactness checks 1 holds." in text
    assert (
        "| hut-3 | Hyper-UT is best beyond training | — | 0.42 | d = -0.133 ± 0.033 (n=3), p = 0.029 "
        "| **does not hold** | paper claim |" in text
    )
    assert (
        "| hut-4 | steps grow | — | +0.1 | d = +0.15 (n=1); the rule needs 3 seeds | inconclusive | paper claim |"
        in text
    )
    assert "| hut-10 | pool sizes | — | see figure |  | — | — |" in text
    assert (
        "No rows (their notebooks have not run into this ledger): hut-1, hut-5," in text
        and "Rows made by other code" not in text
    )


def test_a_claim_a_notebook_no_longer_makes_leaves_the_ledger(monkeypatch):
    """A target's rows are those its last run recorded: after a new process (a notebook's next kernel) claims the
    target again, an old claim text is gone; within one process every claim of the target stays."""
    ledger.claim("hut-8", "matches ViT", ours=1, verdict=None, profile="smoke")
    ledger.claim("hut-8", "saves layers", ours=2, verdict=None, profile="smoke")
    monkeypatch.setattr(ledger, "_RECORDED", {})  # the notebook's next run, in a new kernel
    ledger.claim("hut-8", "matches the ViT's top-1", ours=3, verdict=None, profile="smoke")
    ledger.claim("hut-8", "saves layers", ours=4, verdict=None, profile="smoke")
    assert [(r["claim"], r["ours"]) for r in ledger.rows("smoke")] == [
        ("matches the ViT's top-1", "3"),
        ("saves layers", "4"),
    ]


def test_the_ledger_marks_rows_whose_code_changed_since():
    ledger.claim("hut-2", "made before", ours=1, verdict=verdicts.exact(True), profile="smoke")
    ledger.claim("hut-3", "made now", ours=1, verdict=verdicts.exact(True), profile="smoke")
    path = claims_dir("smoke") / "hut-2.json"
    (row,) = json.loads(path.read_text())
    assert row["made by"]["notebook"] is None and "ponder.ledger.rows" in row["made by"]["modules"]
    path.write_text(json.dumps([{**row, "code": "0123abcdef01"}]))  # as if the code had changed since
    text = ledger.gather("smoke").read_text()
    assert (
        "Rows whose code has changed since they were made (marked *older*; their notebooks have not run since): "
        "hut-2." in text
    )
    assert (
        "| hut-2 | made before | — | 1 | exact: no noise | holds (*older*) |" in text
        and "| hut-3 | made now | — | 1 | exact: no noise | holds |" in text
    )
    assert set(ledger.target_ids()) >= {"hut-1", "acm-9", "hyla-a1", "survey-4"}


def test_a_rows_code_covers_what_its_kernel_imported_and_its_notebooks_code_cells(tmp_path, monkeypatch):
    """Changing a module the row's kernel imported, or a code cell of its notebook, marks it older; a docstring,
    a comment, a Markdown cell or a module it did not import does not; a module or notebook gone marks it too."""
    (tmp_path / "notebooks").mkdir()
    used, unused, book = tmp_path / "used.py", tmp_path / "unused.py", tmp_path / "notebooks" / "n.ipynb"
    monkeypatch.setattr(ledger, "ROOT", tmp_path)
    monkeypatch.setattr(ledger, "module_file", lambda name: {"ponder.used": used, "ponder.unused": unused}.get(name))

    def write_notebook(markdown: str, code: str) -> None:
        cells = [{"cell_type": "markdown", "source": [markdown]}, {"cell_type": "code", "source": [code]}]
        book.write_text(json.dumps({"cells": cells}))

    used.write_text('"""Doc."""\nx = 1\n')
    unused.write_text("y = 1\n")
    write_notebook("# Title", "print(x)")
    made = {"notebook": "n.ipynb", "modules": ["ponder.used"]}
    code = ledger.code_of(made)
    used.write_text('"""Another doc."""\nx = 1  # a comment\n')
    unused.write_text("y = 2\n")
    write_notebook("# Another title", "print(x)")
    assert ledger.code_of(made) == code
    write_notebook("# Another title", "print(x + 1)")
    assert ledger.code_of(made) not in (code, "gone")
    write_notebook("# Title", "print(x)")
    used.write_text("x = 2\n")
    assert ledger.code_of(made) not in (code, "gone")
    used.unlink()
    assert ledger.code_of(made) == "gone"
    assert ledger.is_older({"id": "hut-2", "code": "0123abcd/4567ef01"})  # a row made before rows named their code


def test_a_row_is_made_by_the_modules_its_process_imported_but_the_registry(monkeypatch):
    """The registry says what trains ahead, never what a notebook computes: editing it marks no row older."""
    from ponder.repro import registry  # noqa: F401

    monkeypatch.setenv("PONDER_NOTEBOOK", "hyla_lm.ipynb")
    made = ledger.made_by()["made by"]
    assert made["notebook"] == "hyla_lm.ipynb"
    assert {"ponder.ledger.rows", "ponder.studies.hyla.experiments"} <= set(made["modules"])
    assert "ponder.repro.registry" not in made["modules"]


def test_rows_of_an_older_format_are_named_and_cleared(isolated_outputs):
    ledger.claim("hut-2", "kept", ours=1, verdict=None, profile="smoke")
    (claims_dir("smoke") / "hut-9.json").write_text('[{"id": "hut-9", "claim": "old", "holds": true}]')
    with pytest.raises(ValueError, match="hut-9.json holds a row of an older ledger format"):
        ledger.rows("smoke")
    ledger.clear("smoke")
    assert ledger.rows("smoke") == []


def test_record_writes_an_analysis_functions_claims_as_rows_in_order():
    claims = [
        verdicts.Claim("hut-5", "UT beats the Transformer", ours="0.8 vs 0.7", verdict=verdicts.exact(True)),
        verdicts.Claim("hut-5", "params", ours=1200, verdict=None, paper=1000),
    ]
    assert ledger.record(claims, "smoke") is None
    assert [(r["claim"], r["ours"], r["paper"], r["verdict"]) for r in ledger.rows("smoke")] == [
        ("UT beats the Transformer", "0.8 vs 0.7", "—", "holds"),
        ("params", "1200", "1000", None),
    ]


def test_claim_rejects_a_verdict_not_made_by_the_rule():
    with pytest.raises(TypeError, match="verdict must come from ponder.ledger.verdicts"):
        ledger.claim("hut-2", "x", ours=1, verdict=True, profile="smoke")
    with pytest.raises(TypeError, match="holds must be True or False"):
        verdicts.exact("yes")
    with pytest.raises(ValueError, match="a judged row's kind is one of paper claim, design check"):
        ledger.claim("hut-2", "x", ours=1, verdict=verdicts.exact(True), profile="smoke", kind="sanity")
    with pytest.raises(ValueError, match="a judged row's kind"):
        ledger.claim("hut-2", "x", ours=1, verdict=None, profile="smoke", kind="timing")


def test_a_timed_targets_rows_are_timings_unless_they_say_otherwise():
    row = ledger.claim("acm-9", "fast", ours=1, verdict=verdicts.above([1.0, 1.1, 1.2], 0.5), profile="smoke")
    assert row["kind"] == "timing"
    assert ledger.claim("acm-1", "x", ours=1, verdict=verdicts.exact(True), profile="smoke")["kind"] == "paper claim"


def test_figures_are_byte_identical_across_saves(isolated_outputs):
    set_theme()

    def draw():
        fig, ax = plt.subplots()
        ax.plot([0, 1, 2], [1, 0, 2], label="a")
        ax.legend()
        paths = save_figure(fig, "test-1", "smoke")
        plt.close(fig)
        return [p.read_bytes() for p in paths]

    first, second = draw(), draw()
    assert first == second
    assert b"CreationDate" not in first[1] and b"matplotlib" not in first[0].lower()


NOTEBOOKS = execution.find()


def test_there_are_notebooks():
    assert any(p.stem == "explore_hops" for p in NOTEBOOKS)


def test_a_misspelt_notebook_is_a_usage_error_not_a_traceback(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "hyla_sraven", "hyper_utt", "--profile", "smoke"])
    assert stop.value.code == 2  # argparse's exit status for a bad argument, before anything runs
    assert "unknown notebook(s) ['hyper_utt']; choose from" in capsys.readouterr().err


@pytest.mark.parametrize(
    "main", [lambda argv: cli.main(["run", *argv]), registry.main], ids=["notebooks", "experiments"]
)
def test_a_gpu_profile_without_a_gpu_is_a_usage_error_before_anything_trains(main, monkeypatch, capsys):
    """``make figures PROFILE=gpu`` (or ``make results``) on a machine without CUDA would train for days
    in silence: it stops with the reason and what to do, unless ``PONDER_ALLOW_CPU=1`` asks for it."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("PONDER_ALLOW_CPU", raising=False)

    def train(*args):
        raise AssertionError("started training")

    monkeypatch.setattr(notebooks, "run", train)
    monkeypatch.setattr(registry, "train_all", train)
    for profile in ("gpu", "paper"):
        with pytest.raises(SystemExit) as stop:
            main(["--profile", profile])
        assert stop.value.code == 2
        assert f"profile '{profile}' is sized for GPUs and no CUDA device is visible" in capsys.readouterr().err
    assert check_device("quick") == "quick"
    monkeypatch.setenv("PONDER_ALLOW_CPU", "1")
    assert check_device("gpu") == "gpu"
    monkeypatch.delenv("PONDER_ALLOW_CPU")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert check_device("paper") == "paper"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_conventions(path):
    """profile/seed/interactive are papermill parameters; widget cells are skipped by nbval."""
    inferred = papermill.inspect_notebook(str(path))
    assert {"profile", "seed", "interactive"} <= set(inferred)
    assert json.loads(inferred["profile"]["default"]) in PROFILES
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "code" and (
            "ponder.studies.hyper_ut.explorer" in cell.source or "ipywidgets" in cell.source
        ):
            assert "nbval-skip" in tags and "if interactive" in cell.source, cell.source
        if cell.cell_type == "code" and "nbval-check-output" not in tags:
            assert not cell.outputs, f"only checked cells keep outputs: {cell.source[:60]}"


def test_unknown_notebook_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="explore_hops"):
        execution.find(["nope"])


def test_cpvr_explorer_reacts_to_its_controls():
    from ponder.studies.hyper_ut.explorer import cpvr_explorer

    plt.close("all")
    box = cpvr_explorer(length=12, hops=3, seed=0, train_hops=(1, 2, 3))
    task, length, hops, button = box.children[0].children
    assert task.value == "decoy" and length.continuous_update is False and hops.continuous_update is False
    assert (hops.min, hops.max) == (1, 5)  # beside its decoy, a chain of L = 12 holds at most 5 hops
    length.value = 7
    assert hops.max == 3
    hops.value = 3
    task.value = "plain"
    assert (hops.min, hops.max) == (0, 6)  # a plain chain can take every position
    hops.value = 5
    button.click()
    figures = [plt.figure(n) for n in plt.get_fignums()]
    assert len(figures) == 5  # drawn at start, then once per control that changed (the hops were 3 already)
    assert figures[0].axes[0].get_title().startswith("3 hops") and figures[-1].axes[0].get_title().startswith("5 hops")
    assert [f._suptitle.get_text() for f in (figures[0], figures[-1])] == [
        "3 hops: within the training hops 1–3",
        "5 hops: beyond the training hops 1–3 (out of distribution)",
    ]
    plt.close("all")


def test_cpvr_explorer_draws_once_when_a_shorter_sequence_clamps_the_hops():
    from ponder.studies.hyper_ut.explorer import cpvr_explorer

    plt.close("all")
    box = cpvr_explorer(length=12, hops=5, seed=0)
    _, length, hops, _ = box.children[0].children
    length.value = 5
    assert hops.value == hops.max == 2
    titles = [plt.figure(n).axes[0].get_title() for n in plt.get_fignums()]
    assert len(titles) == 2 and titles[-1].startswith("2 hops")  # the clamp redraws nothing by itself
    plt.close("all")


def test_the_explorers_draw_the_task_the_runs_train_on():
    """The explorers' decoy task is what the C-PVR runs' training streams and test sets draw."""
    from ponder.studies.hyper_ut import cpvr as hyper_ut
    from ponder.studies.hyper_ut import widgets as explorer
    from ponder.studies.hyper_ut.explorer import draw_task
    from ponder.tasks import cpvr_decoys

    assert hyper_ut.STREAM == "ponder.tasks.cpvr_decoys:sample" and explorer.sample is hyper_ut.sample
    x, _, label = hyper_ut.sample(1, 12, 4, seed=7)
    drawn, drawn_label = draw_task("decoy", 12, 4, seed=7)
    assert torch.equal(drawn, x[0]) and drawn_label == int(label[0])
    assert torch.equal(drawn, cpvr_decoys.sample(1, 12, 4, seed=7)[0][0])


def test_hop_status_says_within_beyond_or_below():
    from ponder.studies.hyper_ut.explorer import hop_status

    assert hop_status(2, (1, 2, 3)) == "2 hops: within the training hops 1–3"
    assert hop_status(4, [1, 2, 3]).endswith("(out of distribution)")
    assert hop_status(0, (1, 2, 3)) == "0 hops: below the training hops 1–3 (never trained)"


def test_the_parity_tab_opens_on_a_trained_weight():
    from ponder.studies.survey import parity as survey_parity
    from ponder.studies.survey.sizes.parity import PARITY
    from ponder.studies.survey.widgets import weight_options

    for profile in ("quick", "cpu"):
        options = weight_options(profile)
        label, (halting, weight) = options[0]
        assert label.endswith("(trained)") and weight in PARITY[profile]["grid"][survey_parity.KNOBS[halting]]
        assert len(options) == 6 and sum(label.endswith("(trained)") for label, _ in options) == sum(
            map(len, PARITY[profile]["grid"].values())
        )


def first_runs(profile: str) -> set[tuple[str, str]]:
    """``{(run name, cache key)}`` of every run ``profile``'s notebooks list (of a chosen run, the grid's it is
    chosen among), and of the learning-rate grids' runs upstream of them (C-PVR's, HYLA's); ACM's are left to
    test_acm's own check."""
    from ponder.repro.registry import notebook_jobs, upstream_jobs

    seen = set()
    for notebook, jobs in notebook_jobs(profile).items():
        for job in [*jobs, *upstream_jobs(profile).get(notebook, [])] if not notebook.startswith("acm") else []:
            for spec in job.among if isinstance(job, Chosen) else (job,) if declared(job) else ():
                seen.add((spec.name, spec.run.key))
    return seen


def test_every_run_quick_trains_but_fuzzy_logics_and_hut_8s_is_one_cpu_trains_under_the_same_key():
    quick, cpu = first_runs("quick"), first_runs("cpu")
    for prefix in (
        "hyla/fuzzy/",
        "hut/vision/",
    ):  # cpu trains them longer (ponder.studies.hyla.sizes, .hyper_ut_vision)
        own_quick = {(name, key) for name, key in quick if name.startswith(prefix)}
        own_cpu = {(name, key) for name, key in cpu if name.startswith(prefix)}
        assert own_quick and own_cpu and not own_quick & own_cpu
        quick = quick - own_quick
    # sraven: cpu chooses each kind's rate on a grid that holds quick's, so quick's base runs are cpu's tuning runs
    # at that rate, and quick's other runs serve cpu where it chooses quick's rate
    own_quick = {(name, key) for name, key in quick if name.startswith("hyla/sraven/")}
    assert own_quick & cpu
    quick = quick - own_quick
    assert quick < cpu  # one cache serves the rest: after make figures, PROFILE=cpu trains only what it adds


def test_train_all_trains_every_run_the_notebook_reads(tmp_path, monkeypatch):
    """``make results`` trains each notebook's jobs; the notebook's functions then train nothing."""
    from ponder.runner import training
    from ponder.studies.survey.analysis import parity as survey_parity

    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path))
    monkeypatch.setenv("PONDER_WORKERS", "1")
    registry.train_all("smoke", names=["survey_parity"])
    monkeypatch.setattr(training, "train", lambda *_, **__: pytest.fail("a run the notebook reads was not trained"))
    assert len(survey_parity.parity_frame("smoke")) and len(survey_parity.control_frame("smoke"))
