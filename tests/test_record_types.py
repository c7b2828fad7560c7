"""A type checker reads `record` classes as frozen dataclasses (`typing.dataclass_transform` on `record`):
their constructors' parameters and types, and that their fields cannot be assigned. Run where mypy is
installed (it is not a dependency)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SNIPPET = """from dshc.compiler._base.frozen import field, record

@record
class Point:
    x: int
    label: str = field(default="origin")

@record(slots=False, kw_only=True)
class Named:
    name: str

Point(1)
Point(1, "a")
Named(name="n")
Point()                # line 15: x is missing
Point(1, 2)            # line 16: label is a str
Point(1).x = 2         # line 17: frozen
Named("n")             # line 18: keyword-only
"""


def test_mypy_sees_the_constructors_and_the_frozen_fields_of_records(tmp_path, monkeypatch):
    api = pytest.importorskip("mypy.api")
    package = tmp_path / "path" / "dshc"
    package.mkdir(parents=True)
    for part in ("compiler", "common"):
        os.symlink(ROOT / part, package / part)
    (tmp_path / "snippet.py").write_text(SNIPPET)
    monkeypatch.setenv("MYPYPATH", str(tmp_path / "path"))
    out, err, _ = api.run(
        [
            str(tmp_path / "snippet.py"),
            "--follow-imports=silent",
            "--ignore-missing-imports",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
        ]
    )
    lines = sorted({int(found) for found in re.findall(r"snippet\.py:(\d+): error", out)})
    assert lines == [15, 16, 17, 18], out + err
