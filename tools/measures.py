"""The library's shape in numbers: code lines per part, the largest modules, import cycles and fan-out.

    .venv/bin/python tools/measures.py

A code line is a line of ``lib/ponder`` (ruff-formatted, as ``make test`` keeps it) that is not blank,
not a comment and not inside a docstring or another bare string. Parts are named by the folders and
modules the library has today (:data:`PARTS`); a module in no part is listed as such, so the table cannot
silently leave code out. Imports are read from the syntax tree, functions' bodies included.
"""

import ast
import io
import sys
import tokenize
from collections import defaultdict
from pathlib import Path

from ponder.repro.migrate import experiment_modules, module_name
from ponder.runner.runs import imported_by

PACKAGE = Path(__file__).resolve().parents[1] / "lib" / "ponder"

# what each part of the library is, by module path under lib/ponder (a folder: every module in it); the first
# part that names a module holds it
PARTS = {
    "GPU-only execution": ("runner/gpu", "models/acm_triton.py"),
    "runner": ("runner",),
    "ledger": ("ledger",),
    "repro": ("repro", "targets.py"),
    "foundation": ("__init__.py", "numerics.py", "exact.py", "products.py", "checks.py", "profiles.py", "paths.py"),
    "shipped bench": ("bench",),
    "papers: tasks and models": ("tasks", "models"),
    "papers: studies (runs, sizes, analysis, plots, widgets, methods)": ("studies", "plots.py"),
}
MACHINERY = ("runner", "ledger", "repro", "foundation", "shipped bench")


def code_lines(path: Path) -> int:
    """Lines of ``path`` holding code: not blank, not only a comment, not part of a bare string statement."""
    source = path.read_text()
    strings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            strings.update(range(node.lineno, node.end_lineno + 1))
    code = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            code.update(range(token.start[0], token.end[0] + 1))
    return len(code - strings)


def part_of(relative: str) -> str | None:
    """The part of :data:`PARTS` a module (path under lib/ponder) belongs to, or ``None``."""
    for part, members in PARTS.items():
        for member in members:
            if relative == member or relative.startswith(member.rstrip("/") + "/"):
                return part
    return None


def dotted(path: Path) -> str:
    """``lib/ponder/runner/runs.py`` -> ``ponder.runner.runs`` (:func:`ponder.repro.migrate.module_name`)."""
    return module_name(str(path.relative_to(PACKAGE.parents[1])))


def imports(path: Path) -> set[str]:
    """The ``ponder`` modules ``path`` imports, by any statement (:func:`ponder.runner.runs.imported_by`)."""
    return imported_by(dotted(path), every_statement=True)


def graph(paths: list[Path]) -> dict[str, set[str]]:
    """``{module: the modules of the library it imports}``."""
    known = {dotted(p): p for p in paths}
    return {name: {m for m in imports(p) if m in known and m != name} for name, p in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in edges:
        if v not in index:
            visit(v)
    return found


def profile_table_reads(paths: list[Path]) -> int:
    """Reads of a profile's sizes table (``by_profile(...)`` or ``SIZES[...]``) in the modules that define runs."""
    count, defining = 0, set(experiment_modules(PACKAGE.parent))
    for path in paths:
        if dotted(path) not in defining:
            continue
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "by_profile":
                count += 1
            elif isinstance(node, ast.Subscript) and getattr(node.value, "id", "").endswith("SIZES"):
                count += 1
    return count


def main() -> None:
    paths = sorted(PACKAGE.rglob("*.py"))
    lines = {p: code_lines(p) for p in paths}
    per_part, unplaced = defaultdict(int), []
    for path, n in lines.items():
        part = part_of(path.relative_to(PACKAGE).as_posix())
        if part is None:
            unplaced.append(path.relative_to(PACKAGE).as_posix())
        else:
            per_part[part] += n
    edges = graph(paths)
    largest = max(lines, key=lines.get)
    fan_out = max(edges, key=lambda m: len(edges[m]))
    rows = [
        ("machinery: " + " + ".join(MACHINERY), sum(per_part[p] for p in MACHINERY)),
        *((f"  {part}", per_part[part]) for part in PARTS),
        ("largest module", f"{lines[largest]} ({largest.relative_to(PACKAGE)})"),
        ("modules >= 200 code lines", sum(n >= 200 for n in lines.values())),
        ("import cycles", f"{len(cycles(edges))} {cycles(edges) or ''}".strip()),
        ("largest fan-out", f"{len(edges[fan_out])} ({fan_out})"),
        ("reads of a profile's sizes table in the run modules", profile_table_reads(paths)),
        ("modules / code lines in all", f"{len(paths)} / {sum(lines.values())}"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    if unplaced:
        print("modules in no part:", ", ".join(unplaced))


if __name__ == "__main__":
    main()
