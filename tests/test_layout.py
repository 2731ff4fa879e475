"""The library's layers: a module imports only from its own layer or the layers below it
(docs/development.md, "Layout of lib/ponder")."""

import pytest

from ponder.runs import PACKAGE, imported_by

# lowest first; a top-level module or package of ``ponder`` by its first name under ``ponder``
LAYERS = (
    ("foundation", {"", "numerics", "exact", "products", "checks", "profiles", "paths"}),
    ("papers", {"tasks", "models"}),
    (
        "runner",
        {"runs", "training", "specs", "parallel", "ensemble", "streams", "cuda_graphs", "compilation", "timing"},
    ),
    ("experiments", {"sizes", "experiments", "registry"}),
    ("analysis", {"analysis"}),
    ("methods", {"methods"}),
    (
        "presentation",
        {
            "plots",
            "widgets",
            "bench",
            "ledger",
            "provenance",
            "measured",
            "targets",
            "migrate",
            "readme",
            "regression",
            "verify",
            "notebooks",
            "execution",
            "session",
            "kernels",
        },
    ),
)
RANK = {part: rank for rank, (_, parts) in enumerate(LAYERS) for part in parts}


def part_of(module: str) -> str:
    """``ponder.models.act`` -> ``models``; ``ponder`` and ``ponder.__main__`` -> ``""``."""
    part = (module.split(".") + [""])[1]
    return "" if part in ("__init__", "__main__") else part


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
    for module in ("plots/__init__", "models/__init__", "models/act", "tasks/__init__", "tasks/cpvr", "analysis/acm"):
        (tmp_path / module).parent.mkdir(exist_ok=True)
        (tmp_path / f"{module}.py").write_text("")
    source = tmp_path / "models" / "x.py"
    source.write_text(
        "import ponder.plots\nfrom . import act\nfrom ..tasks import cpvr\n\n\n"
        "def f():\n    from ..analysis import acm\n"
    )
    found = {"ponder.plots", "ponder.models", "ponder.models.act", "ponder.tasks", "ponder.tasks.cpvr"}
    assert imports(source, tmp_path) == found | {"ponder.analysis.acm"}  # what exists, ``from . import x`` as x
    assert upward(source, tmp_path) == ["ponder.analysis.acm", "ponder.plots"]
