"""The library's layers: a module imports only from its own layer or the ones below it.

Read from the import statements (:func:`ponder.runs.imported_by`), so a new module must be placed in a
layer here before it passes, and an import that reaches up (a model reading the ledger, an experiment
reading a plot) fails with its name.
"""

import pytest

from ponder.runs import PACKAGE, imported_by

# from the bottom up; a top-level module or package of ponder belongs to exactly one
LAYERS = {
    "foundation": ("numerics", "checks", "profiles", "paths"),
    "papers": ("tasks", "models", "sizes"),
    "runner": ("runs", "training", "parallel", "ensemble", "cuda_graphs", "compilation", "streams", "timing"),
    "experiments": ("experiments",),
    "analysis": ("analysis", "bench"),
    "presentation": (
        "ledger",
        "plots",
        "widgets",
        "regression",
        "notebooks",
        "readme",
        "provenance",
        "verify",
        "session",
        "kernels",
    ),
}
LEVEL = {part: level for level, parts in enumerate(LAYERS.values()) for part in parts}
MODULES = sorted(
    "ponder." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
    for path in PACKAGE.rglob("*.py")
    if path != PACKAGE / "__init__.py" and path.name != "__main__.py"
)


def part(module: str) -> str:
    return module.split(".")[1]


def test_every_module_has_a_layer():
    assert sorted({part(m) for m in MODULES} - set(LEVEL)) == []


@pytest.mark.parametrize("module", MODULES)
def test_no_import_reaches_a_higher_layer(module):
    upward = [m for m in sorted(imported_by(module)) if m != "ponder" and LEVEL[part(m)] > LEVEL[part(module)]]
    assert upward == [], f"{module} ({LEVEL[part(module)]}) imports from a higher layer: {upward}"
