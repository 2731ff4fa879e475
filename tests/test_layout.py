"""The library's layers: a module imports only from its own layer or the layers below it
(docs/development.md, "Layout of lib/ponder")."""

import pytest

from ponder.runner.runs import PACKAGE, imported_by

# lowest first; a module of ``ponder`` by its first name under ``ponder``, a study's module by its role
LAYERS = (
    ("foundation", {"", "numerics", "exact", "products", "checks", "profiles", "paths", "targets", "plots"}),
    ("papers", {"tasks", "models"}),
    ("runner", {"runner"}),
    ("ledger", {"ledger"}),
    ("study runs", {"study runs"}),  # a study's run specs and sizes
    ("study analysis", {"study analysis"}),  # what its figures and rows read off the runs
    ("study presentation", {"study presentation"}),  # its figures, widgets and methods of one's own
    ("repro", {"repro", "bench"}),
)
RANK = {part: rank for rank, (_, parts) in enumerate(LAYERS) for part in parts}
PRESENTING = ("plots", "widgets", "explorer", "methods")


def part_of(module: str) -> str:
    """``ponder.models.act`` -> ``models``; ``ponder`` and ``ponder.__main__`` -> ``""``;
    ``ponder.studies.acm.analysis`` -> ``study analysis``."""
    parts = module.split(".")[1:] + [""]
    if parts[0] != "studies":
        return "" if parts[0] in ("__init__", "__main__") else parts[0]
    if "analysis" in parts:
        return "study analysis"
    return "study presentation" if set(PRESENTING) & set(parts) else "study runs"


def module_of(path, package=PACKAGE) -> str:
    """``<package>/models/act.py`` -> ``ponder.models.act`` (a package's ``__init__`` kept as a last part, so that
    ``..`` climbs from the package itself)."""
    return ".".join(("ponder", *path.relative_to(package).with_suffix("").parts))


def imports(path, package=PACKAGE) -> set[str]:
    """Every ``ponder`` module named by an import statement anywhere in ``path`` (functions' bodies included)."""
    parts = path.relative_to(package).with_suffix("").parts
    name = ".".join(("ponder", *(parts[:-1] if parts[-1] == "__init__" else parts)))
    return imported_by(name, package, every_statement=True)


def upward(path, package=PACKAGE) -> list[str]:
    """The modules ``path`` imports from a layer above its own."""
    own = RANK[part_of(module_of(path, package))]
    return sorted(name for name in imports(path, package) if RANK[part_of(name)] > own)


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_every_part_of_the_library_has_a_layer():
    parts = {part_of(module_of(path)) for path in SOURCES}
    assert parts <= set(RANK), sorted(parts - set(RANK))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_layer_above_its_own(path):
    assert not upward(path), f"{path.relative_to(PACKAGE)} imports from above its layer: {upward(path)}"


def test_the_rule_sees_upward_imports_at_any_depth_and_allows_its_own_layer(tmp_path):
    for module in ("plots", "models/__init__", "models/act", "tasks/__init__", "tasks/cpvr", "studies/acm/analysis"):
        (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{module}.py").write_text("")
    source = tmp_path / "models" / "x.py"
    source.write_text(
        "import ponder.plots\nfrom . import act\nfrom ..tasks import cpvr\n\n\n"
        "def f():\n    from ..studies.acm import analysis\n"
    )
    found = {"ponder.plots", "ponder.models", "ponder.models.act", "ponder.tasks", "ponder.tasks.cpvr"}
    assert imports(source, tmp_path) == found | {"ponder.studies.acm.analysis"}  # what exists, ``from . import x`` as x
    assert upward(source, tmp_path) == ["ponder.studies.acm.analysis"]


def test_a_studys_runs_may_not_import_its_analysis_or_figures():
    assert part_of("ponder.studies.hyper_ut.cpvr") == part_of("ponder.studies.hyper_ut.sizes.cpvr") == "study runs"
    assert part_of("ponder.studies.hyper_ut.analysis.cpvr") == "study analysis"
    assert part_of("ponder.studies.hyper_ut.plots.cpvr") == part_of("ponder.studies.survey.methods.converged")
    assert RANK["study runs"] < RANK["study analysis"] < RANK["study presentation"] < RANK["repro"]
