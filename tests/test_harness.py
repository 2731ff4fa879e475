"""Profiles, the claims ledger, deterministic figures and the notebooks' conventions."""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import nbformat
import papermill
import pytest

from ponder import claims, notebooks
from ponder.checks import check_choice
from ponder.paths import figures_dir
from ponder.plots import save_figure, set_theme
from ponder.profiles import PROFILES, by_profile, check_profile


def test_unknown_profile_names_the_allowed_ones():
    with pytest.raises(ValueError, match=r"profile='fast' is not allowed; choose one of 'smoke', 'quick', 'gpu', 'paper'"):
        check_profile("fast")


@pytest.mark.parametrize(
    "seed, error, message",
    [("abc", TypeError, "seed must be an integer, got 'abc'"), ("3", TypeError, "seed must be an integer"), (1.5, TypeError, "seed must be an integer"),
     (True, TypeError, "seed must be an integer, got True"), (None, TypeError, "seed must be an integer"), (-1, ValueError, "seed=-1 must be >= 0"),
     (2**32, ValueError, "seed=4294967296 must be <= 4294967295")],
)
def test_setup_rejects_a_bad_seed(seed, error, message):
    """The second cell of every notebook: papermill may pass anything as ``seed``."""
    from ponder.session import setup

    with pytest.raises(error, match=message):
        setup("smoke", seed)


def test_setup_takes_a_non_negative_int_seed():
    import numpy as np

    from ponder.session import setup

    setup("smoke", np.int64(7))
    first = np.random.rand()
    setup("smoke", 7)
    assert np.random.rand() == first


def test_by_profile_reads_the_row_and_demands_every_profile():
    assert by_profile({"smoke": 1, "quick": 2, "gpu": 4, "paper": 3}, "quick") == 2
    with pytest.raises(KeyError, match="paper"):
        by_profile({"smoke": 1, "quick": 2}, "smoke")


def test_unknown_model_kind_style_error():
    with pytest.raises(ValueError, match="kind='lstm' is not allowed; choose one of 'ut', 'act'"):
        check_choice("kind", "lstm", ["ut", "act"])


def test_quick_figures_go_to_figures_and_others_to_subfolders(isolated_outputs):
    assert figures_dir("quick") == isolated_outputs / "figures"
    assert figures_dir("smoke") == isolated_outputs / "figures" / "smoke"


def test_claims_are_recorded_replaced_and_gathered():
    claims.claim("hut-3", "Hyper-UT is best beyond training", ours=0.71, holds=True, profile="smoke", paper="best")
    claims.claim("hut-3", "Hyper-UT is best beyond training", ours=0.42, holds=False, profile="smoke")
    claims.claim("hut-10", "pool sizes", ours="see figure", holds=None, profile="smoke")
    claims.claim("hut-2", "deeper for more hops", ours="yes", holds=True, profile="smoke")
    rows = claims.rows("smoke")
    assert [r["id"] for r in rows] == ["hut-2", "hut-3", "hut-10"]  # natural order, replaced not duplicated
    assert rows[1]["ours"] == "0.42" and rows[1]["holds"] is False
    text = claims.gather("smoke").read_text()
    assert "| hut-3 | Hyper-UT is best beyond training | — | 0.42 | **no** |" in text
    assert "| hut-10 | pool sizes | — | see figure | — |" in text


def test_claim_rejects_a_non_boolean_verdict():
    with pytest.raises(TypeError, match="holds must be True, False or None"):
        claims.claim("hut-2", "x", ours=1, holds="yes", profile="smoke")


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


NOTEBOOKS = notebooks.find()


def test_there_are_notebooks():
    assert any(p.stem == "explore_hops" for p in NOTEBOOKS)


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
        if cell.cell_type == "code" and ("ponder.widgets" in cell.source or "ipywidgets" in cell.source):
            assert "nbval-skip" in tags and "if interactive" in cell.source, cell.source
        if cell.cell_type == "code" and "nbval-check-output" not in tags:
            assert not cell.outputs, f"only checked cells keep outputs: {cell.source[:60]}"


def test_unknown_notebook_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="explore_hops"):
        notebooks.find(["nope"])


def test_cpvr_explorer_reacts_to_its_controls():
    from ponder.widgets import cpvr_explorer

    plt.close("all")
    box = cpvr_explorer(length=12, hops=3, seed=0)
    length, hops, button = box.children[0].children
    assert length.continuous_update is False and hops.continuous_update is False
    length.value = 5
    assert hops.max == 4  # a chain cannot be longer than the sequence
    hops.value = 4
    button.click()
    titles = [plt.figure(n).axes[0].get_title() for n in plt.get_fignums()]
    assert len(titles) == 4  # drawn at start, then once per control change
    assert titles[0].startswith("3 hops") and titles[-1].startswith("4 hops")
    plt.close("all")
