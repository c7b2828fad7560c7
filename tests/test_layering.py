"""The compiler is pure: no module under compiler/ imports the runtime or the CLI layer; the runtime imports
nothing of the compiler, and common/ (stand-ins for slow standard-library imports) nothing of dshc.

Read from the source text (every import statement, module level or nested in a function), so a
lazy import inside a function is caught too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute dotted target) of each import in a module of the package rooted at `layer`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ["dshc", *path.relative_to(ROOT).with_suffix("").parts[:-1]]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            found.extend((node.lineno, f"{target}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return found


@pytest.mark.parametrize(
    "layer, forbidden",
    [
        ("compiler", ("dshc.runtime", "dshc.cli")),
        ("runtime", ("dshc.compiler", "dshc.cli")),
        # the standard-library stand-ins every layer may import
        ("common", ("dshc.compiler", "dshc.runtime", "dshc.cli")),
    ],
)
def test_layer_does_not_import(layer, forbidden):
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for path in sorted((ROOT / layer).rglob("*.py"))
        for line, target in _imports(path)
        if target == forbidden or target.startswith(tuple(f + "." for f in forbidden)) or target in forbidden
    ]
    assert offenders == []


def test_the_check_sees_a_relative_import(tmp_path):
    """The import reader resolves relative imports the way Python does, so the test above can fail."""
    module = ROOT / "compiler" / "policy" / "core.py"
    targets = {target for _, target in _imports(module)}
    assert any(t.startswith("dshc.compiler.") for t in targets)
