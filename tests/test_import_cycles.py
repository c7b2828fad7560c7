"""No import cycle among dshc's modules: the import graph, read from the source text (every import
statement, at module level, in a function, or under `if TYPE_CHECKING:`), is acyclic. A function-level
import that closes a loop only defers the problem, and an annotation-only one is a loop a type checker
follows, so both count."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("cli", "common", "compiler", "runtime")  # the folders that install as dshc.* code


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = ["dshc", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = ROOT, parts=PARTS) -> nx.DiGraph:
    """module -> module it imports, for every module of the package (`from P import m` of a submodule
    `m` is an edge to P.m, of any other name an edge to P)."""
    paths = [path for part in parts for path in sorted((root / part).rglob("*.py"))]
    modules = {module_name(path, root): path for path in paths}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            graph.add_edges_from((name, target) for target in targets if target in modules and target != name)
    return graph


def test_the_modules_import_one_another_without_a_cycle():
    cycles = sorted(sorted(c) for c in nx.simple_cycles(import_graph()))
    assert cycles == []


def test_the_graph_sees_a_cycle_held_open_by_a_function_level_import(tmp_path):
    """The check can fail: two modules where one imports the other inside a function make a cycle."""
    package = tmp_path / "compiler"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import B\n")
    (package / "b.py").write_text("B = 1\n\ndef later():\n    from . import a\n    return a\n")
    (package / "c.py").write_text("from .b import B\nTYPE_CHECKING = False\nif TYPE_CHECKING:\n    from .d import D\n")
    (package / "d.py").write_text("from .c import later\nD = 1\n")
    graph = import_graph(tmp_path, ("compiler",))
    assert sorted(sorted(c) for c in nx.simple_cycles(graph)) == [
        ["dshc.compiler.a", "dshc.compiler.b"],
        ["dshc.compiler.c", "dshc.compiler.d"],
    ]
