"""The import layers of docs/architecture.md, checked on the source: no module imports a layer
above its own, and no two modules import each other, directly or round a loop.

Every import counts for the layers, lazy ones inside functions and ``TYPE_CHECKING`` ones
included (a lower layer that names a higher one's type still depends on it). For cycles the
imports that run count: a ``TYPE_CHECKING`` import inside one package is a type reference, not
an import-order hazard.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "envcheck"

# Low to high: a module may import its own layer's package and any layer before it.
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "version",
        "errors",
        "numeric",
        "terminal",
        "fileio",
        "inputs",
        "redact",
        "output",
        "cachefiles",
        "patterns",
        "names",
    ),
    ("dataclass_methods", "dataclass_code", "regex_programs", "regex_code"),
    ("model",),
    ("probes", "binaries"),
    ("index",),
    ("matrix",),
    ("facts",),
    ("settings",),
    ("ingest",),
    ("rules",),
    ("engine",),
    ("plan",),
    ("triage",),
    ("matrix_validate",),
    ("cluster",),
    ("formats",),
    ("commands",),
    ("cli",),
    ("api", "ray_hook", "__main__", "__init__"),
)


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    typing_only: bool


def module_names(root: Path) -> dict[str, Path]:
    names: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def edges(root: Path) -> Iterator[Edge]:
    """Each import of a module of the package by another, as import-linter counts them:
    ``from pkg import mod`` depends on ``pkg.mod`` when that is a module, else on ``pkg``."""
    modules = module_names(root)
    top = root.name
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_lines = _type_checking_lines(tree)
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                for alias in node.names:
                    full = f"{module}.{alias.name}"
                    targets.append(full if full in modules else module)
            else:
                continue
            for imported in targets:
                if not (imported == top or imported.startswith(top + ".")):
                    continue
                target = imported
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in modules and target != name:
                    yield Edge(name, target, node.lineno, node.lineno in typing_lines)


def layer_of(module: str) -> int:
    parts = module.split(".")
    head = parts[1] if len(parts) > 1 else "__init__"
    for index, layer in enumerate(LAYERS):
        if head in layer:
            return index
    raise AssertionError(f"{module}: in no layer of tests/test_layers.py (add its package)")


def upward(root: Path) -> list[str]:
    return sorted(
        f"{e.source}:{e.line} imports {e.target}"
        for e in edges(root)
        if layer_of(e.target) > layer_of(e.source)
    )


def cycles(root: Path) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for e in edges(root):
        if not e.typing_only:
            graph.setdefault(e.source, set()).add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_is_in_a_layer() -> None:
    for module in module_names(PACKAGE):
        layer_of(module)


def test_no_module_imports_a_higher_layer() -> None:
    assert upward(PACKAGE) == []


def test_no_import_cycles() -> None:
    assert cycles(PACKAGE) == []


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "envcheck"
    for package in ("model", "rules", "formats"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    return root


def test_the_check_sees_an_upward_import(tree: Path) -> None:
    (tree / "model" / "report.py").write_text("def f():\n    from envcheck.rules import base\n")
    (tree / "rules" / "base.py").write_text("")
    assert upward(tree) == ["envcheck.model.report:2 imports envcheck.rules.base"]


def test_the_check_sees_a_cycle_and_passes_over_a_type_reference(tree: Path) -> None:
    (tree / "formats" / "a.py").write_text("from envcheck.formats import b\n")
    (tree / "formats" / "b.py").write_text("import envcheck.formats.a\n")
    (tree / "model" / "x.py").write_text("from envcheck.model.y import Y\n")
    (tree / "model" / "y.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from envcheck.model.x import X\n"
    )
    assert cycles(tree) == [["envcheck.formats.a", "envcheck.formats.b"]]
