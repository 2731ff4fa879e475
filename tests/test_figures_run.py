"""`make figures` (``ponder.repro.notebooks.run``): a failing notebook is reported, the others still run,
the ledger is still gathered, and the exit status says something failed."""

from functools import partial

import nbformat
import pytest

from ponder.repro import execution, notebooks


def notebook(path, source: str) -> None:
    nb = nbformat.v4.new_notebook(
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        }
    )
    nb.cells = [
        nbformat.v4.new_code_cell("profile = 'quick'\nseed = 0\ninteractive = True", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(source),
    ]
    nbformat.write(nb, path)


def test_a_failing_notebook_leaves_the_others_and_the_ledger(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    notebook(folder / "a_fails.ipynb", "raise RuntimeError('planted failure')")
    notebook(
        folder / "b_works.ipynb",
        "from ponder.ledger.verdicts import exact\nfrom ponder.ledger.rows import claim\n"
        "claim('t-1', 'the working notebook ran', 1, exact(True), profile=profile)",
    )
    monkeypatch.setattr(execution, "NOTEBOOKS", folder)
    monkeypatch.setattr(notebooks, "ROOT", tmp_path)
    with pytest.raises(SystemExit) as stop:
        notebooks.run("smoke", jobs=2)
    assert stop.value.code == 1
    out, err = capsys.readouterr()
    assert "[2/2]" in out and "a_fails.ipynb FAILED" in out and "b_works.ipynb done" in out
    assert (
        "FAILED a_fails.ipynb: RuntimeError: planted failure" in err
        and str(tmp_path / "build" / "smoke" / "a_fails.ipynb") in err
    )
    ledger = tmp_path / "figures" / "smoke" / "CLAIMS.md"
    assert "the working notebook ran" in ledger.read_text()


def test_the_timing_notebooks_execute_alone_after_the_others(tmp_path, monkeypatch):
    """Two untimed notebooks share the cores (each waits, up to a minute, for the other to start
    before it ends: run one after the other, the first would end without the second having
    started); the timed one starts only when both have ended."""
    folder, log = tmp_path / "notebooks", tmp_path / "log.txt"
    folder.mkdir()
    for name, other in (("a", "b"), ("b", "a"), ("c_timed", None)):
        wait = (
            "deadline = time.time() + 60\n"
            f"while '{other} start' not in open({str(log)!r}).read() and time.time() < deadline:\n"
            "    time.sleep(0.05)\n"
            if other
            else ""
        )
        notebook(
            folder / f"{name}.ipynb",
            f"import time\nopen({str(log)!r}, 'a').write(f'{name} start {{time.time()}}\\n')\n{wait}"
            f"open({str(log)!r}, 'a').write(f'{name} end {{time.time()}}\\n')",
        )
    monkeypatch.setattr(execution, "NOTEBOOKS", folder)
    monkeypatch.setattr(notebooks, "ROOT", tmp_path)
    monkeypatch.setattr(notebooks, "TIMED_NOTEBOOKS", ("c_timed",))
    notebooks.run("smoke", jobs=2)
    events = {tuple(line.split()[:2]): float(line.split()[2]) for line in log.read_text().splitlines()}
    assert events["a", "start"] < events["b", "end"] and events["b", "start"] < events["a", "end"]  # side by side
    assert events["c_timed", "start"] > max(events["a", "end"], events["b", "end"])


def test_a_notebook_executes_as_soon_as_its_runs_are_trained(tmp_path, monkeypatch):
    """Run A is notebook a's, run B notebook b's, and B ends only once notebook a has started: a
    executes beside B, on the core A left, and b only after B."""
    from test_parallel import stamp

    folder, log = tmp_path / "notebooks", tmp_path / "log.txt"
    folder.mkdir()
    for name in ("a", "b"):
        notebook(
            folder / f"{name}.ipynb",
            f"import time\nopen({str(log)!r}, 'a').write(f'{name}-notebook start {{time.time()}}\\n')",
        )
    run = {"A": partial(stamp, str(log), "A"), "B": partial(stamp, str(log), "B", "a-notebook")}
    monkeypatch.setattr(execution, "NOTEBOOKS", folder)
    monkeypatch.setattr(notebooks, "ROOT", tmp_path)
    monkeypatch.setattr(
        notebooks, "training", lambda profile, seed, names: (list(run.values()), [], {"a": [run["A"]], "b": [run["B"]]})
    )
    notebooks.run("smoke", jobs=2)
    events = {tuple(line.split()[:2]): float(line.split()[2]) for line in log.read_text().splitlines()}
    assert events["A", "end"] <= events["a-notebook", "start"] < events["B", "end"] <= events["b-notebook", "start"]
    assert events["B", "end"] - events["B", "start"] < 30  # B did not time out waiting for notebook a


def test_a_subset_of_the_notebooks_leaves_a_readme_whose_rows_it_did_not_make(tmp_path, monkeypatch, capsys):
    """In a fresh clone, ``make figures NOTEBOOKS=...`` gathers a ledger of those notebooks' rows only:
    the README blocks of the others' targets are left as they were, with a line saying why."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    notebook(
        folder / "a.ipynb",
        "from ponder.ledger.verdicts import exact\nfrom ponder.ledger.rows import claim\n"
        "claim('t-1', 'ran', 1, exact(True), profile=profile)",
    )
    readme_text = (
        "<!-- generated: ledger t smoke -->\nold t rows\n<!-- end generated -->\n"
        "<!-- generated: ledger u smoke -->\nold u rows\n<!-- end generated -->\n"
    )
    (tmp_path / "README.md").write_text(readme_text)
    monkeypatch.setattr(execution, "NOTEBOOKS", folder)
    monkeypatch.setattr(notebooks, "ROOT", tmp_path)
    monkeypatch.setattr(notebooks.readme, "SHOWN", ("smoke",))
    notebooks.run("smoke", jobs=1)
    assert (tmp_path / "README.md").read_text() == readme_text
    assert "README.md left as it was: the ledger has no rows of targets u-*" in capsys.readouterr().err
