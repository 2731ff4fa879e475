"""The README's generated blocks (ponder.repro.readme): rewritten from the figures, and in step with them."""

import json

import pytest

import ponder  # noqa: F401  (pins numerics before anything imports torch)
from ponder import targets
from ponder.paths import ROOT
from ponder.repro import readme

LEDGER = """# Claims ledger (quick profile, seed 0, commit abc, code x/y)

2 holds, 0 does not hold, 1 inconclusive, 1 describe.

| id | claim | paper | ours | evidence | verdict |
| --- | --- | --- | --- | --- | --- |
| hut-1 | generator exact | — | 100 of 100 | exact: no noise | holds |
| hut-3 | a \\| b beats c | — | 0.64 | d = +0.2 ± 0.04 (n=3) | holds |
| hut-10 | pool sizes | — | N=1: 0.37 |  | — |
| acm-3 | on the front | on the front | +0.01 | d = +0.01 (n=1) | inconclusive |
"""


@pytest.fixture
def figures(tmp_path):
    (tmp_path / "CLAIMS.md").write_text(LEDGER)
    (tmp_path / "hut-3.md").write_text("| model | acc |\n| --- | --- |\n| UT | 0.45 |\n")
    return tmp_path


def block(spec: str, body: str = "stale\n") -> str:
    return f"<!-- generated: {spec} -->\n{body}<!-- end generated -->"


def test_blocks_are_rewritten_from_the_figures(figures):
    text = f"# R\n\n{block('tally')}\n\ntext 0.99 kept\n\n{block('table hut-3')}\n\n{block('ledger hut')}\n"
    out = readme.sync(text, figures)
    assert block("tally", "2 holds, 0 does not hold, 1 inconclusive, 1 describe.\n") in out
    assert block("table hut-3", "| model | acc |\n| --- | --- |\n| UT | 0.45 |\n") in out
    assert "text 0.99 kept" in out and "stale" not in out
    rows = out.split("<!-- generated: ledger hut -->\n")[1].split("<!-- end generated -->")[0].splitlines()
    assert rows[0] == "| id | claim | ours | verdict |"
    assert rows[2:] == [
        "| hut-1 | generator exact | 100 of 100 | holds |",
        "| hut-3 | a \\| b beats c | 0.64 | holds |",
        "| hut-10 | pool sizes | N=1: 0.37 | — |",
    ]  # not acm-3
    assert readme.sync(out, figures) == out


def test_a_block_can_show_another_profiles_figures(figures):
    (figures / "cpu").mkdir()
    (figures / "cpu" / "CLAIMS.md").write_text(LEDGER.replace("2 holds, 0 does not hold", "3 holds, 1 does not hold"))
    (figures / "cpu" / "hut-3.md").write_text("| model | acc |\n| --- | --- |\n| UT | 0.5 |\n")
    out = readme.sync(f"{block('tally')}\n{block('tally cpu')}\n{block('table hut-3 cpu')}\n", figures)
    assert block("tally", "2 holds, 0 does not hold, 1 inconclusive, 1 describe.\n") in out
    assert block("tally cpu", "3 holds, 1 does not hold, 1 inconclusive, 1 describe.\n") in out
    assert "| UT | 0.5 |" in out and "| UT | 0.45 |" not in out
    with pytest.raises(ValueError, match="unknown README block"):
        readme.sync(block("tally cpu gpu"), figures)


def test_bad_blocks_are_errors(figures):
    with pytest.raises(ValueError, match="unknown README block"):
        readme.sync(block("chart hut-3"), figures)
    with pytest.raises(ValueError, match="unknown README block"):
        readme.sync(block("ledger"), figures)
    with pytest.raises(readme.NotMade, match="no rows of targets survey"):
        readme.sync(block("ledger survey"), figures)
    with pytest.raises(readme.NotMade, match="hut-4.md"):
        readme.sync(block("table hut-4"), figures)
    with pytest.raises(ValueError, match="no '<!-- end generated -->'"):
        readme.sync("<!-- generated: tally -->\n2 holds\n", figures)


def test_sync_file_says_whether_it_changed(figures, tmp_path):
    path = tmp_path / "README.md"
    path.write_text(block("tally"))
    assert readme.sync_file(path, figures)
    assert not readme.sync_file(path, figures)


@pytest.mark.parametrize("document", readme.documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_committed_documents_show_the_committed_figures(document):
    """Every generated block of the README and docs/ is what `make figures` makes of figures/ (run it on
    the cached runs to mend)."""
    text = document.read_text()
    assert readme.sync(text, ROOT / "figures", readme.base_of(document, ROOT / "figures")) == text


def test_the_readme_and_paper_pages_carry_generated_results():
    counts = {path.name: path.read_text().count("<!-- generated: ") for path in readme.documents()}
    assert counts["README.md"] >= 3 and all(counts[page.split("/")[1]] >= 1 for _, page in readme.PAPERS.values())
    assert counts["gallery.md"] == 1


def test_headlines_thumbnails_and_gallery(figures):
    text = LEDGER.replace(
        "| hut-3 | a \\| b beats c |", "| hut-3 | Hyper-UT is the most accurate beyond the training hops (x) |"
    )
    (figures / "CLAIMS.md").write_text(text)
    with pytest.raises(readme.NotMade, match="hut-4"):
        readme.render("headlines", figures)
    (figures / "hut-3.png").write_bytes(b"png")
    gallery = readme.render("gallery", figures, "../figures/")
    assert gallery.startswith("### hut-3\n\n[![hut-3](../figures/hut-3.png)](../figures/hut-3.png)")
    assert "| Hyper-UT is the most accurate beyond the training hops (x) | 0.64 | holds |" in gallery
    assert "Made by [notebooks/hyper_ut.ipynb](../notebooks/hyper_ut.ipynb)." in gallery
    with pytest.raises(readme.NotMade, match="hut-4.png"):
        readme.render("thumbnails", figures)


def test_a_headline_row_reads_paper_ours_verdict_and_scale():
    rows = readme.headline_rows((ROOT / "figures" / "cpu" / "CLAIMS.md").read_text(), "cpu", "")
    lines = rows.splitlines()
    assert lines[0] == "| paper | claim | paper's number | ours | verdict | scale | more |"
    assert len(lines) == 2 + len(targets.HEADLINES)
    assert (
        lines[2].startswith("| Hyper-UT | Hyper-UT is the most accurate beyond the training hops")
        and "(docs/hyper-ut.md#hut-3)" in lines[2]
    )


def test_the_numerics_block_lists_each_recorded_cpu_with_its_entries_and_how_they_were_taken(tmp_path):
    record = {
        "about": "...",
        "how": {"Intel": "the whole probe", "AMD": "an older probe"},
        "machines": {"Intel": {"op: a": "1", "op: b": "2", "train: c": "3"}, "AMD": {"op: a": "1"}},
    }
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "numerics_hashes.json").write_text(json.dumps(record))
    rows = readme.render("numerics", tmp_path / "figures").splitlines()
    assert rows == [
        "| CPU | entries | how |",
        "| --- | --- | --- |",
        "| Intel | all 3 | the whole probe |",
        "| AMD | 1 of 3 | an older probe |",
    ]
