"""RUN.md beside a profile's figures (ponder.repro.provenance): a row per executed notebook, the others kept."""

from ponder.repro import provenance


def test_executed_notebooks_replace_their_rows_and_keep_the_others(tmp_path):
    path = provenance.record(
        tmp_path,
        "quick",
        [("acm_vit", ["acm-1", "acm-3"], 61.4, None), ("hyla_lm", ["hyla-6"], 12.0, "RuntimeError: boom\nmore")],
    )
    text = path.read_text()
    assert (
        text.startswith(provenance.TITLE)
        and "| notebook acm_vit | acm-1, acm-3 | `python -m ponder.repro run acm_vit --profile quick` |" in text
    )
    assert (
        "| 61 s (its runs trained ahead) | made by this commit's code |" in text
        and "| failed: RuntimeError: boom |" in text
    )
    preamble, rows = provenance.read(path)
    rows["benchmark bench-x.json"] = dict.fromkeys(provenance.COLUMNS, "a | b")  # a row written by hand, with a pipe
    rows["benchmark bench-x.json"]["made by"] = "benchmark bench-x.json"
    provenance.write(path, preamble + "A note kept above the table.\n", rows)
    provenance.record(tmp_path, "quick", [("hyla_lm", ["hyla-6"], 9.0, None)])
    _, rows = provenance.read(path)
    assert list(rows) == ["benchmark bench-x.json", "notebook acm_vit", "notebook hyla_lm"]
    assert rows["notebook hyla_lm"]["status"] == "made by this commit's code" and rows["notebook acm_vit"][
        "wall time"
    ].startswith("61 s")
    assert rows["benchmark bench-x.json"]["files"] == "a | b" and "A note kept above the table." in path.read_text()
    assert rows["notebook hyla_lm"]["device"] == provenance.device() and rows["notebook hyla_lm"]["commit"].startswith(
        "`"
    )


def test_the_committed_gpu_provenance_reads_as_a_table():
    from ponder.paths import ROOT

    _, rows = provenance.read(ROOT / "figures" / "gpu" / "RUN.md")
    assert {"notebook acm_vit", "notebook hyper_ut_vision", "notebook hyla_ablations", "notebook acm_latency"} <= set(
        rows
    )
    assert all(set(row) == set(provenance.COLUMNS) for row in rows.values())
