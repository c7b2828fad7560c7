"""Where dshc's own data lives: the folder of one of its packages (the grammar, the shipped catalogs,
presets and policies).

A wheel installs dshc as files, so the folder is a plain path. importlib.resources would answer the
same and load tempfile, shutil and zipfile into every process to do it (~10 ms of a hook's start-up).
"""
from __future__ import annotations

import importlib
from pathlib import Path


def package_dir(package: str) -> Path:
    """The folder of `package` (a dotted name such as `dshc.catalogs`)."""
    return Path(next(iter(importlib.import_module(package).__path__)))
