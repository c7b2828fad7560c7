"""Where dshc's own data lives: the folder of one of its packages (the grammar, the shipped catalogs,
presets and policies).

A wheel installs dshc as files, so the folder is a plain path. importlib.resources would answer the
same and load tempfile, shutil and zipfile into every process to do it (~10 ms of a hook's start-up);
`package_path` answers with a string, for the code a hook runs, which does not import pathlib (and
with it urllib.parse and ipaddress: ~4 ms).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from pathlib import Path


def package_path(package: str) -> str:
    """The folder of `package` (a dotted name such as `dshc.catalogs`)."""
    __import__(package)  # importlib.import_module's work, without importing importlib (and warnings)
    return next(iter(sys.modules[package].__path__))


def package_dir(package: str) -> Path:
    """The same folder as a Path."""
    from pathlib import Path

    return Path(package_path(package))
