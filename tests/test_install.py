"""The install: our requirements never contradict torch's, and every package the library imports is declared.

torch's CUDA wheels pin packages of their own (torch 2.13.0 as the public index publishes it for
Linux x86-64 requires ``triton==3.7.1``); a pin of ours on the same package that excludes that
version makes the install fail for every user of that platform. The check reads torch's requirements
from its installed metadata and ours from ponder's (what pip resolved), on each platform the README
names, and is itself tested on a pair that contradicts.
"""

import ast
import importlib.metadata
import pathlib
import sys

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

LIB = pathlib.Path(__file__).resolve().parents[1] / "lib" / "ponder"
PLATFORMS = {  # the platforms the README says the project installs on
    "Linux x86-64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
    "Linux ARM": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64"},
    "macOS": {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64"},
}
# torch 2.13.0's published requirement on Linux x86-64 that a former pin of ours contradicted
PUBLISHED_TORCH_TRITON = "triton==3.7.1; platform_system == 'Linux' and platform_machine == 'x86_64'"


def applies(requirement: Requirement, platform: dict, extra: str = "") -> bool:
    """Whether ``requirement``'s marker holds on ``platform`` (with ``extra`` asked for)."""
    if requirement.marker is None:
        return True
    return requirement.marker.evaluate({**default_environment(), **platform, "extra": extra})


def contradictions(ours: list[str], torchs: list[str]) -> list[str]:
    """The pairs (ours, torch's) on one package and platform where a version one side pins with ``==``
    is excluded by the other side's specifier. ``ours`` are read with the ``dev`` extra."""
    found = []
    for name, platform in PLATFORMS.items():
        mine = [Requirement(r) for r in ours if applies(Requirement(r), platform, "dev")]
        theirs = [Requirement(r) for r in torchs if applies(Requirement(r), platform)]
        for a in mine:
            for b in theirs:
                if canonicalize_name(a.name) != canonicalize_name(b.name):
                    continue
                for pinned, other in ((a, b), (b, a)):
                    versions = [s.version for s in pinned.specifier if s.operator == "=="]
                    if any(not other.specifier.contains(v, prereleases=True) for v in versions):
                        found.append(f"{name}: ours {a} vs torch's {b}")
    return sorted(set(found))


def test_our_requirements_agree_with_installed_torchs():
    ours = importlib.metadata.requires("ponder") or []
    torchs = importlib.metadata.requires("torch") or []
    assert ours, "ponder is not installed with its metadata (pip install -e '.[dev]')"
    assert contradictions(ours, torchs) == []


def test_our_requirements_agree_with_torchs_published_linux_requirement():
    ours = importlib.metadata.requires("ponder")
    assert contradictions(ours, [PUBLISHED_TORCH_TRITON]) == []


def test_a_contradicting_pin_is_found():
    pin = "triton==3.9.0; sys_platform == 'linux' and platform_machine == 'x86_64' and extra == 'dev'"
    assert contradictions([pin], [PUBLISHED_TORCH_TRITON]) == [
        f"Linux x86-64: ours {Requirement(pin)} vs torch's {Requirement(PUBLISHED_TORCH_TRITON)}"
    ]
    assert contradictions(["torch==2.13.0"], ["torch>=2.14"]) != []  # either side's pin counts
    assert contradictions([pin], ["triton==3.9.0; platform_machine == 'x86_64'"]) == []
    assert contradictions([pin], ["triton==3.7.1; platform_machine == 'aarch64'"]) == []  # other platforms


def imported_top_level(folder: pathlib.Path) -> set[str]:
    """Top-level names of every absolute import in the Python files under ``folder``."""
    names = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def test_every_package_the_library_imports_is_declared():
    declared = {canonicalize_name(Requirement(r).name) for r in importlib.metadata.requires("ponder")}
    distributions = importlib.metadata.packages_distributions()
    undeclared = {}
    for module in imported_top_level(LIB) - set(sys.stdlib_module_names) - {"ponder"}:
        owners = {canonicalize_name(d) for d in distributions.get(module, [])}
        if not owners & declared:
            undeclared[module] = sorted(owners) or "not installed"
    assert undeclared == {}


@pytest.mark.parametrize("module", ["json", "torch", "pandas"])
def test_the_import_scan_sees_the_library(module):
    assert module in imported_top_level(LIB)
