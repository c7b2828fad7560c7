"""Every package folder ships: pyproject.toml lists its packages one by one, and a folder missing there works in
an editable checkout (its parent's folder is mapped) but is absent from a real install (`pip install .`), where
every command then fails with ModuleNotFoundError."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_folder_is_listed_in_pyproject():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    folders = {name: Path(folder) for name, folder in setuptools["package-dir"].items()}
    found = set()
    for name, folder in folders.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "node_modules" in init.parts:
                continue
            relative = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *relative.parts]))
    # a folder mapped to a package of its own (compiler/testing is dshc.testing) is that package, not a subpackage
    found -= {
        f"dshc.compiler.{Path(folder).name}"
        for name, folder in setuptools["package-dir"].items()
        if Path(folder).parent.name == "compiler"
    }
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
