"""The linter and the type checker over the project's own code: no name that does not resolve, no import never
used, no syntax error (pyproject.toml's [tool.ruff] says which checks), the one code style, and no type error
mypy finds ([tool.mypy]). They run here so that CI runs them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    found = subprocess.run(
        [ruff, "check", "--output-format", "concise", "."], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert found.returncode == 0, found.stdout + found.stderr


def test_the_code_is_formatted_as_ruff_formats_it():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    found = subprocess.run([ruff, "format", "--check", "."], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert found.returncode == 0, "run `ruff format .`:\n" + found.stdout + found.stderr


def test_mypy_finds_no_type_error(tmp_path):
    """mypy over compiler/, runtime/, cli/ and common/, laid out as the installed `dshc` package (the folders
    are its subpackages by pyproject's package-dir, and their relative imports need that layout)."""
    package = tmp_path / "dshc"
    package.mkdir()
    (package / "__init__.py").write_text("")
    parts = ("common", "cli", "compiler", "runtime")
    for part in parts:
        (package / part).symlink_to(ROOT / part, target_is_directory=True)
    found = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
        + [arg for part in parts for arg in ("-p", f"dshc.{part}")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert found.returncode == 0, found.stdout[-6000:] + found.stderr
