"""Every target in one table: the notebook that makes it, whether it times the machine, its headline rows.

A target (``hut-3``, ``acm-9``, ...) is one figure of a paper, specified in ``TARGETS.md`` and made by
one notebook, which saves ``<id>.png`` (and ``.pdf``, sometimes a table ``<id>.md``) and records its
ledger rows. What the rest of the harness needs to know of targets is derived from :data:`TARGETS`:

* :data:`TIMED` and :data:`TIMED_NOTEBOOKS`: the targets whose figures and rows show wall-clock times,
  and their notebooks, which ``make figures`` executes alone at the end and ``make verify`` expects to differ;
* :data:`HEADLINES`: the rows of the README's "Results at a glance", each a target and the start of its
  row's claim;
* :func:`of_notebooks`: each notebook's targets (``RUN.md``'s files, ``make verify NOTEBOOKS=...``, the
  gallery's links).

``tests/test_targets.py`` holds the table to what the notebooks save and to ``TARGETS.md``.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """One target: its ``id``, its ``notebook`` (a name in ``notebooks/``), whether it is ``timed``, and
    ``headlines``, the starts of its ledger rows' claims that the README shows as its paper's headline."""

    id: str
    notebook: str
    timed: bool = False
    headlines: tuple[str, ...] = ()


TARGETS = (
    Target("hut-1", "explore_hops"),
    Target("hut-2", "hyper_ut_depth"),
    Target("hut-3", "hyper_ut", headlines=("Hyper-UT is the most accurate beyond the training hops",)),
    Target("hut-4", "hyper_ut", headlines=("Hyper-UT allocates more fairly",)),
    Target("hut-5", "hyper_ut"),
    Target("hut-6", "hyper_ut_modules"),
    Target("hut-7", "hyper_ut_scratchpad"),
    Target(
        "hut-8",
        "hyper_ut_vision",
        headlines=(
            "HyperU-ViT matches the ViT's top-1",
            "HyperU-ViT matches the 4-block ViT's top-1",
            "HyperU-ViT saves more than 70% of the layers",
        ),
    ),
    Target("hut-9", "hyper_ut"),
    Target("hut-10", "hyper_ut_modules"),
    Target("acm-1", "acm_vit"),
    Target("acm-3", "acm_vit", headlines=("ACM on the Pareto front",)),
    Target("acm-4", "acm_speech", headlines=("ACM better than MoEfication at every budget",)),
    Target("acm-5", "acm_vit", headlines=("most tokens need only 2-3 of 4 learners",)),
    Target("acm-6", "acm_vit"),
    Target("acm-7", "acm_speech"),
    Target("acm-8", "acm_ablations"),
    Target("acm-9", "acm_latency", timed=True),
    Target("acm-10", "acm_ablations"),
    Target("hyla-a1", "hyla_ablations", headlines=("sraven (K=2",)),
    Target("hyla-2", "hyla_fuzzy", headlines=("fuzzy logic (stand-in scale): HYLA's OOD R² drops least",)),
    Target("hyla-4", "hyla_sraven"),
    Target("hyla-5", "hyla_latent"),
    Target(
        "hyla-6", "hyla_lm", headlines=("LM (stand-in: bytes of torch's docs): HYLA reaches a lower validation loss",)
    ),
    Target("hyla-a2", "hyla_sraven"),
    Target("hyla-a5", "hyla_sraven"),
    Target("hyla-a9", "hyla_sraven"),
    Target("survey-1", "survey_parity", headlines=("PonderNet trains more stably than ACT",)),
    Target("survey-2", "survey_early_exit", headlines=("early exit saves layers on easy examples",)),
    Target("survey-3", "survey_mod"),
    Target("survey-4", "survey_table", timed=True),
)
BY_ID = {target.id: target for target in TARGETS}
TIMED = tuple(target.id for target in TARGETS if target.timed)
TIMED_NOTEBOOKS = tuple(dict.fromkeys(target.notebook for target in TARGETS if target.timed))
HEADLINES = tuple((target.id, start) for target in TARGETS for start in target.headlines)


def of_notebooks() -> dict[str, list[str]]:
    """``{notebooks/NAME.ipynb: [its target ids]}``, in the table's order."""
    found: dict[str, list[str]] = {}
    for target in TARGETS:
        found.setdefault(f"notebooks/{target.notebook}.ipynb", []).append(target.id)
    return found
