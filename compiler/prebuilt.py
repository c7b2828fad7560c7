"""What the package build computes once for every user (setup.py runs `python -m dshc.compiler.build_shipped`):
the shipped presets' and policies' program, the grammar's parse tables and the shipped catalog's passed
checks, as the files the user's cache would hold. A user's cache that misses looks here before parsing or
checking anything, so the first call after installing costs about what a later one does.

The program is found by a key over the bytes of the compiler's code, the shipped catalog and the sources
(not their file times, which installing changes): anything edited after the build is loaded afresh.
A checkout (an editable install) has no such folder, and nothing changes.
"""

from __future__ import annotations

import os
import sys

from ..common.digest import sha256
from .package_data import package_path

FOLDER = "prebuilt"  # in the installed dshc.compiler package; absent from a checkout
FORMAT = b"dshc-prebuilt-1"
CODE_PACKAGES = ("dshc.common", "dshc.compiler", "dshc.catalogs")  # what a compiled program depends on
CODE_SUFFIXES = (".py", ".lark", ".json", ".j2")


def code_entries():
    """(name, os.DirEntry) of every file of the compiler's code and of the shipped catalog, in a fixed
    order; bytecode and this folder are not code."""

    def walk(folder, prefix):
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir():
                    if entry.name not in ("__pycache__", FOLDER):
                        yield from walk(entry.path, f"{prefix}{entry.name}/")
                elif entry.name.endswith(CODE_SUFFIXES):
                    yield f"{prefix}{entry.name}", entry

    for package in CODE_PACKAGES:
        yield from walk(package_path(package), package + "/")


def program_name(files) -> str:
    """The name the program of `files` (SourceFiles) has here: a hash of every byte it was built from."""
    digest = sha256(FORMAT + sys.version.encode())
    for name, entry in code_entries():
        with open(entry.path, "rb") as handle:
            digest.update(name.encode() + b"\0" + handle.read() + b"\0")
    for file in files:
        digest.update(file.path.encode() + b"\0" + file.data + b"\0")
    return f"program-{digest.hexdigest()}.json"


def folder() -> str:
    return os.path.join(package_path("dshc.compiler"), FOLDER)


def read(name: str) -> bytes | None:
    """The bytes of the built file `name`, or None when this install has none (a checkout, a build that
    could not make it) or the user asked for no cache (DSHC_NO_CACHE)."""
    if os.environ.get("DSHC_NO_CACHE") or "/" in name or name.startswith("."):
        return None
    try:
        with open(os.path.join(folder(), name), "rb") as handle:
            return handle.read()
    except OSError:
        return None


def has_stamp(name: str) -> bool:
    """Whether the build left the stamp `name` (as user_cache.has_stamp reads the user's)."""
    return read(name) == name.encode()
