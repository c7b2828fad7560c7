"""The linter over the project's own code: no name that does not resolve, no import never used, no syntax
error (pyproject.toml's [tool.ruff] says which checks). It runs here so that CI runs it."""

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
