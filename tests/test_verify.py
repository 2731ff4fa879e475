"""``make verify`` on a tiny git repository: target by target, figures and ledger rows against HEAD."""

import subprocess

from ponder.repro import readme, verify

HEADER = (
    "# Claims ledger (quick profile, seed 0, commit {})\n\n"
    "| id | claim | paper | ours | evidence | verdict |\n"
    "| --- | --- | --- | --- | --- | --- |\n"
)


def ledger(commit: str, rows: list[str]) -> str:
    return HEADER.format(commit) + "".join(f"| {row} |\n" for row in rows)


def git(root, *args):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True, capture_output=True
    )


def repository(tmp_path):
    """figures/ committed: hut-2 (png, pdf), hut-10 (png), acm-9 (png), a ledger of three rows."""
    figures = tmp_path / "figures"
    figures.mkdir()
    for name in ("hut-2.png", "hut-2.pdf", "hut-10.png", "acm-9.png"):
        (figures / name).write_bytes(name.encode())
    (figures / "CLAIMS.md").write_text(
        ledger(
            "aaa",
            [
                "acm-9 | grouped is fast | — | 0.31x | d = +0.1 ± 0.02 (n=10) | holds",
                "hut-2 | deeper for more hops | — | 1:2.0 2:3.0 | d = +1 ± 0 (n=3) | holds",
                "hut-10 | pool sizes \\| generators | — | N=2: 0.51 |  | —",
            ],
        )
    )
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "figures")
    return figures


def test_an_unchanged_remake_is_identical_whatever_commit_the_ledger_names(tmp_path, capsys):
    figures = repository(tmp_path)
    (figures / "CLAIMS.md").write_text((figures / "CLAIMS.md").read_text().replace("commit aaa", "commit bbb"))
    assert verify.verify(tmp_path, "figures") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("acm-9     identical timing png identical; ledger rows identical")
    assert out[2:4] == [
        "hut-2     identical pdf identical, png identical; ledger rows identical",
        "hut-10    identical png identical; ledger rows identical",
    ]
    assert out[-1] == "2 identical, 0 differ (none), 1 timing"


def test_a_row_that_was_marked_older_is_identical_to_the_same_row_made_anew(tmp_path, capsys):
    """The mark of a row made by older code says where the row came from: a remake that gives the
    same row by the current code is identical."""
    figures = repository(tmp_path)
    committed = (
        (figures / "CLAIMS.md")
        .read_text()
        .replace("| d = +1 ± 0 (n=3) | holds |", "| d = +1 ± 0 (n=3) | holds (*older*) |")
    )
    (figures / "CLAIMS.md").write_text(committed)
    git(tmp_path, "commit", "-qam", "older row")
    (figures / "CLAIMS.md").write_text(committed.replace("holds (*older*)", "holds"))
    assert verify.verify(tmp_path, "figures") == 0
    assert "hut-2     identical pdf identical, png identical; ledger rows identical" in capsys.readouterr().out


def test_a_changed_target_is_named_with_its_rows_side_by_side(tmp_path, capsys):
    figures = repository(tmp_path)
    (figures / "hut-2.png").write_bytes(b"redrawn")
    (figures / "hut-10.png").unlink()
    (figures / "hut-5.png").write_bytes(b"new target")
    (figures / "acm-9.png").write_bytes(b"timed again")
    (figures / "CLAIMS.md").write_text(
        ledger(
            "bbb",
            [
                "acm-9 | grouped is fast | — | 0.52x | d = -0.1 ± 0.02 (n=10) | does not hold",
                "hut-2 | deeper for more hops | — | 1:2.0 2:2.0 | d = +0 ± 0 (n=3) | inconclusive",
                "hut-10 | pool sizes \\| generators | — | N=2: 0.51 |  | —",
            ],
        )
    )
    assert verify.verify(tmp_path, "figures") == 3  # not acm-9, a timing target
    out = capsys.readouterr().out
    assert "acm-9     DIFFERS   timing png differs; ledger rows differ (1 committed, 1 new)" in out
    assert "hut-2     DIFFERS   pdf identical, png differs; ledger rows differ (1 committed, 1 new)" in out
    assert "hut-5     DIFFERS   png new; ledger rows identical" in out
    assert "hut-10    DIFFERS   png not made; ledger rows identical" in out
    assert "    deeper for more hops\n" in out
    assert "      ours      1:2.0 2:3.0      | 1:2.0 2:2.0\n" in out
    assert "      verdict   holds            | inconclusive\n" in out
    assert out.endswith("0 identical, 3 differ (hut-2, hut-5, hut-10), 1 timing\n")


def test_rows_only_on_one_side_show_as_none():
    lines = verify.side_by_side(
        [{"id": "hut-3", "claim": "gone", "ours": "0.4"}], [{"id": "hut-3", "claim": "added", "ours": "0.5"}]
    )
    assert lines == [
        "    gone",
        "                committed | new",
        "      ours      0.4       | (none)",
        "    added",
        "                committed | new",
        "      ours      (none)    | 0.5",
    ]


def test_the_ledger_is_read_per_target_with_escaped_bars():
    rows = verify.ledger(ledger("aaa", ["hut-10 | pool sizes \\| generators | — | N=2: 0.51 |  | —"]))
    assert rows == {
        "hut-10": [
            {
                "id": "hut-10",
                "claim": "pool sizes | generators",
                "paper": "—",
                "ours": "N=2: 0.51",
                "evidence": "",
                "verdict": "—",
            }
        ]
    }


def test_targets_whose_notebooks_did_not_run_are_not_run_not_differing(tmp_path, capsys):
    """After ``make figures NOTEBOOKS=...``, the new ledger has rows of the notebooks that ran and names the
    others in its "No rows" line: those are reported as not run."""
    figures = repository(tmp_path)
    only_hut_2 = ledger("bbb", ["hut-2 | deeper for more hops | — | 1:2.0 2:3.0 | d = +1 ± 0 (n=3) | holds"])
    header, table = only_hut_2.split("| id |", 1)
    (figures / "CLAIMS.md").write_text(
        header + "No rows (their notebooks have not run into this ledger): acm-9, hut-10.\n\n| id |" + table
    )
    assert verify.verify(tmp_path, "figures") == 0
    out = capsys.readouterr().out
    assert "acm-9     not run   its notebook did not run into this ledger" in out
    assert "hut-10    not run   its notebook did not run into this ledger" in out
    assert "hut-2     identical pdf identical, png identical; ledger rows identical" in out
    assert out.endswith("1 identical, 0 differ (none), 0 timing, 2 not run (acm-9, hut-10)\n")


def test_verify_of_some_notebooks_compares_just_their_targets(tmp_path, capsys):
    """``make verify NOTEBOOKS=hyper_ut_depth`` compares hut-2 alone: the other targets are neither listed nor
    counted, so a remake of one notebook is not reported against the figures it did not make."""
    figures = repository(tmp_path)
    (figures / "hut-10.png").write_bytes(b"other bytes")
    assert verify.verify(tmp_path, "figures", only=readme.targets_of(["hyper_ut_depth.ipynb"])) == 0
    out = capsys.readouterr().out
    assert "hut-10" not in out.split("\n", 1)[1] and "acm-9 " not in out
    assert out.endswith("1 identical, 0 differ (none), 0 timing\n")
    assert verify.verify(tmp_path, "figures", only={"hut-10"}) == 1


def test_the_targets_of_a_notebook_are_the_figures_it_saves():
    assert readme.targets_of(["hyper_ut_depth"]) == {"hut-2"}
    assert readme.targets_of(["hyper_ut_modules.ipynb", "acm_latency"]) == {"hut-6", "hut-10", "acm-9"}
