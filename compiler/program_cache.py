"""A per-user disk cache of loaded Programs, for processes that load the same sources every time.

In: the declaration files a process would load. Out: the Program, unpickled when the same
sources, catalog and dshc code were loaded before (saving the parse and resolve), else loaded
and stored. The key hashes every input byte, so any change loads afresh. The cache is used only
in a folder the user owns and nobody else can write: a pickle is code.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
import tempfile
from importlib import resources

from .program import Program, read_paths, shipped_sources

VERSION = b"dshc-program-cache-1"


def _folder() -> str | None:
    if os.environ.get("DSHC_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "dshc", "programs")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return folder


def _code_files():
    for package in ("dshc.compiler", "dshc.compiler.gates", "dshc.compiler.policy", "dshc.catalogs"):
        for entry in sorted(resources.files(package).iterdir(), key=lambda e: e.name):
            if entry.name.endswith((".py", ".lark", ".json")):
                yield entry


def _key(files) -> str:
    digest = hashlib.sha256(VERSION + sys.version.encode())
    for entry in _code_files():  # the code and catalog that built the pickle must be the ones running
        digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    for file in files:
        digest.update(file.path.encode() + b"\0" + file.data + b"\0")
    return digest.hexdigest()


def load(paths, shipped: bool = True, catalog=None) -> Program:
    """`catalog`: a Catalog with user overlays; such a program is built afresh, never cached."""
    files = (shipped_sources() if shipped else []) + read_paths(paths)
    folder = _folder()
    if folder is None or catalog is not None:
        return Program.from_files(files, catalog)
    target = os.path.join(folder, _key(files) + ".pickle")
    try:
        # a planted link or a file someone else could have written is never unpickled
        with os.fdopen(os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_uid == os.getuid() and stat.S_ISREG(info.st_mode) \
                    and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        pass  # absent or unreadable: load afresh and replace it
    program = Program.from_files(files)
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            pickle.dump(program, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, target)  # whole or not at all, even with hooks running side by side
    except OSError:
        pass
    return program
