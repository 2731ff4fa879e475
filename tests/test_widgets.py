"""The C-PVR explorers draw the decoy task's decoy chain apart from the real one (plain C-PVR has none), and
``make lab`` names each copy of a notebook that its notebook has moved on from."""

import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.patches import FancyArrowPatch

from ponder.repro import lab
from ponder.studies.hyper_ut.explorer import cpvr_explorer, decoy_end, draw_task
from ponder.studies.hyper_ut.plots.task import decoy_chain, draw_chain
from ponder.tasks import cpvr_decoys
from ponder.tasks.cpvr import pointer_chain

MAKEFILE = Path(__file__).resolve().parents[1] / "Makefile"


@pytest.mark.parametrize("hops", [1, 2, 5])
def test_the_decoy_chain_is_followed_back_from_its_end(hops):
    x, _, _, ends, values = cpvr_decoys.sample(200, 12, hops, seed=hops)
    for row, end, value in zip(x.tolist(), ends.tolist(), values.tolist()):
        decoy = decoy_chain(row, end)
        assert len(decoy) == hops and decoy[-1] == end and row[end] == value <= end
        assert [row[q] for q in decoy[:-1]] == decoy[1:]  # q_i points to q_(i+1)
        assert not set(decoy) & set(pointer_chain(row))


def test_decoy_end_is_that_of_the_explorers_example():
    x, _, _, ends, _ = cpvr_decoys.sample(1, 12, 4, seed=7)
    assert draw_task("decoy", 12, 4, seed=7)[0].tolist() == x[0].tolist() and decoy_end(12, 4, seed=7) == ends[0]


def arrows(ax: plt.Axes) -> list[str]:
    """The linestyle of each arrow on ``ax``: ``"-"`` solid, ``"--"`` dashed."""
    return ["--" if p.get_linestyle() == "--" else "-" for p in ax.patches if isinstance(p, FancyArrowPatch)]


def test_the_explorer_draws_the_decoy_chain_on_the_decoy_task_only():
    plt.close("all")
    box = cpvr_explorer(length=12, hops=3, seed=0)
    task = box.children[0].children[0]
    task.value = "plain"
    decoy_ax, plain_ax = (plt.figure(n).axes[0] for n in plt.get_fignums())
    assert arrows(decoy_ax) == ["-"] * 3 + ["--"] * 2  # 3 hops from position 0; the decoy's 3 positions, 2 links
    assert re.fullmatch(r"3 hops: 0( → \d+){3}, label \d+; decoy \d+( → \d+){2}, value \d+", decoy_ax.get_title())
    legend = [t.get_text() for t in decoy_ax.get_legend().get_texts()]
    assert legend == ["chain from position 0 (its end holds the label)", "decoy chain (not reached from position 0)"]
    assert arrows(plain_ax) == ["-"] * 3 and plain_ax.get_legend() is None and "decoy" not in plain_ax.get_title()
    plt.close("all")


def test_the_trained_model_explorer_draws_the_decoy_chain():
    from ponder.studies.hyper_ut.cpvr import build
    from ponder.studies.hyper_ut.sizes.cpvr import MODEL
    from ponder.studies.hyper_ut.widgets import ponder_explorer

    plt.close("all")
    model = build("hyper_act", 8, dict(MODEL, dim=16, heads=2, steps=4, pool_size=4, code_dim=8, rank=2))
    ponder_explorer({"hyper_act": model}, 8, max_hops=3, hops=3, train_hops=(1, 2))
    chain_ax = plt.figure(plt.get_fignums()[0]).axes[0]
    assert arrows(chain_ax) == ["-"] * 3 + ["--"] * 2 and "; decoy " in chain_ax.get_title()
    plt.close("all")


def test_a_plain_chain_is_drawn_without_decoy():
    """The worked example of :mod:`ponder.tasks.cpvr`, as hut-1 draws it."""
    fig, ax = plt.subplots()
    draw_chain(ax, [3, 9, 4, 6, 0, 2, 8, 1, 5, 7])
    assert ax.get_title() == "3 hops: 0 → 3 → 6 → 8, label 5" and arrows(ax) == ["-"] * 3
    assert ax.get_legend() is None
    plt.close(fig)


# -- make lab's copies ---------------------------------------------------------------------------
def notebook(path: Path, *sources: str, output: str = "") -> None:
    """A notebook of code cells with ``sources``, each with ``output`` printed."""
    outputs = [{"output_type": "stream", "name": "stdout", "text": output}] if output else []
    cells = [{"cell_type": "code", "source": s, "outputs": outputs, "metadata": {}} for s in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


@pytest.fixture
def lab_dirs(tmp_path):
    """``(notebooks, copies)``: ``a.ipynb`` and its copy, just made (as ``make lab`` copies) and recorded."""
    notebooks, copies = tmp_path / "notebooks", tmp_path / "build" / "lab"
    notebooks.mkdir()
    copies.mkdir(parents=True)
    notebook(notebooks / "a.ipynb", "x = 1")
    (copies / "a.ipynb").write_bytes((notebooks / "a.ipynb").read_bytes())
    assert lab.stale_copies(notebooks, copies) == []
    return notebooks, copies


def test_a_copy_run_or_edited_while_its_notebook_stays_is_not_stale(lab_dirs):
    notebooks, copies = lab_dirs
    notebook(copies / "a.ipynb", "x = 1", output="1")  # run: outputs only
    assert lab.stale_copies(notebooks, copies) == []
    notebook(copies / "a.ipynb", "x = 2", "print(x)")  # the user's own edits
    assert lab.stale_copies(notebooks, copies) == []


def test_a_copy_kept_after_its_notebook_changed_is_named_with_how_to_refresh_it(lab_dirs, capsys):
    """``cp -u`` keeps a copy saved after its notebook changed: the warning names it."""
    notebooks, copies = lab_dirs
    notebook(notebooks / "a.ipynb", "x = 1", "y = 2")  # a git pull
    notebook(copies / "a.ipynb", "x = 1", output="1")  # then autosaved: newer than the notebook
    lab.main([str(notebooks), str(copies)])
    (warning,) = capsys.readouterr().err.splitlines()
    assert warning == (
        f"warning: {copies / 'a.ipynb'} is stale: {notebooks / 'a.ipynb'} has changed since it was copied; to refresh"
        f" it (your copy kept as a.ipynb.~N~): cp --backup=numbered {notebooks / 'a.ipynb'} {copies}/"
    )
    (copies / "a.ipynb").write_bytes((notebooks / "a.ipynb").read_bytes())  # refreshed
    assert lab.stale_copies(notebooks, copies) == []
    notebook(copies / "a.ipynb", "x = 3")  # the user's edits of the refreshed copy
    assert lab.stale_copies(notebooks, copies) == []


def test_a_copy_without_record_that_differs_may_be_stale(lab_dirs):
    notebooks, copies = lab_dirs
    (copies / lab.RECORD).unlink()
    notebook(copies / "a.ipynb", "x = 0")
    notebook(notebooks / "b.ipynb", "z = 1")  # no copy yet: make lab copies it
    (warning,) = lab.stale_copies(notebooks, copies)
    assert warning.startswith(f"{copies / 'a.ipynb'} may be stale: its cells differ from {notebooks / 'a.ipynb'}'s")
    assert json.loads((copies / lab.RECORD).read_text()) == {}


def test_make_lab_checks_the_copies_after_copying():
    target = MAKEFILE.read_text().split("\nlab:", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert "cp -uv --backup=numbered notebooks/*.ipynb build/lab/" in target[0]
    assert target[1].split("#")[0].strip() == "$(PY) -m ponder.repro.lab notebooks build/lab"
