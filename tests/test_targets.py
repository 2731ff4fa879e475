"""The target table (``ponder.targets``) against what the notebooks save and what ``TARGETS.md`` specifies."""

import json
import re

from ponder import targets
from ponder.paths import ROOT

SAVED = re.compile(r'save_figure\(fig, "([a-z]+-[a-z0-9]+)"')


def saved_by_notebooks() -> dict[str, str]:
    """``{target id: notebook name}`` from the ``save_figure(fig, "<id>", ...)`` calls of each notebook's code."""
    found = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        found |= dict.fromkeys(SAVED.findall(code), path.stem)
    return found


def test_each_target_is_saved_by_its_notebook_and_every_saved_figure_is_a_target():
    assert saved_by_notebooks() == {target.id: target.notebook for target in targets.TARGETS}


def test_the_table_holds_the_targets_targets_md_specifies():
    specified = re.findall(r"^\| ((?:hut|acm|hyla|survey)-[a-z0-9]+) \|", (ROOT / "TARGETS.md").read_text(), re.M)
    assert {t.id for t in targets.TARGETS} <= set(specified), sorted({t.id for t in targets.TARGETS} - set(specified))


def test_the_timed_targets_notebooks_and_headlines_come_from_the_table():
    assert targets.TIMED == ("acm-9", "survey-4") and targets.TIMED_NOTEBOOKS == ("acm_latency", "survey_table")
    assert targets.HEADLINES[0] == ("hut-3", "Hyper-UT is the most accurate beyond the training hops")
    assert targets.of_notebooks()["notebooks/hyper_ut_modules.ipynb"] == ["hut-6", "hut-10"]
    assert len({t.id for t in targets.TARGETS}) == len(targets.TARGETS)
