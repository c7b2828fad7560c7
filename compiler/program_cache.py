"""A per-user disk cache of loaded Programs, for processes that load the same sources every time.

In: the declaration files a process would load. Out: the Program, rebuilt from JSON data when the
same sources, catalog and dshc code were loaded before (saving the parse and resolve), else loaded
and stored. The key hashes every input byte, so any change loads afresh. The files are plain data
(data_codec: nothing in them can run code) in the user's private cache folder (user_cache).
"""
from __future__ import annotations

import hashlib
import os
import sys

from . import data_codec, user_cache
from .package_data import package_dir
from .program import Program, SourceFile, read_paths, shipped_sources

VERSION = b"dshc-program-cache-2"
PREFIX = "program-"
KEEP = 32  # programs kept; the oldest go first (each edit of a policy makes a new key)


def _code_files():
    """Every file of the compiler's code and of the shipped catalog, in a fixed order."""
    def walk(folder, prefix):
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.is_dir():
                if entry.name != "__pycache__":
                    yield from walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith((".py", ".lark", ".json", ".j2")):
                yield f"{prefix}{entry.name}", entry
    for package in ("dshc.compiler", "dshc.catalogs"):
        yield from walk(package_dir(package), package + "/")


def key(files: list[SourceFile]) -> str:
    digest = hashlib.sha256(VERSION + sys.version.encode())
    for name, entry in _code_files():  # the code and catalog that built the program must be the ones running
        digest.update(name.encode() + b"\0" + entry.read_bytes() + b"\0")
    for file in files:
        digest.update(file.path.encode() + b"\0" + file.data + b"\0")
    return digest.hexdigest()


def load(paths, shipped: bool = True, catalog=None) -> Program:
    return load_files((shipped_sources() if shipped else []) + read_paths(paths), catalog)


def load_files(files: list[SourceFile], catalog=None) -> Program:
    """The Program of `files`, from the cache when it holds it. `catalog`: a Catalog with user
    overlays; such a program is built afresh, never cached."""
    if catalog is not None or os.environ.get("DSHC_NO_CACHE") or not user_cache.usable():
        return Program.from_files(files, catalog)
    try:
        folder = user_cache.open_folder()
    except (user_cache.UntrustedCache, OSError):
        return Program.from_files(files)  # an unsafe or unmakeable folder: no cache, nothing else changes
    try:
        name = f"{PREFIX}{key(files)}.json"
        try:
            resolved, sources = data_codec.loads(user_cache.read(folder, name))
            return Program(resolved, sources)
        except Exception:  # noqa: BLE001 - absent, planted, corrupt or stale: load afresh and replace it
            pass
        program = Program.from_files(files)
        try:
            user_cache.write(folder, name, data_codec.dumps((program.resolved, program.sources)).encode("utf-8"))
            _prune(folder)
        except (OSError, data_codec.Unencodable, RecursionError, ValueError):
            pass  # the next process loads afresh; nothing is lost
        return program
    finally:
        os.close(folder)


def _prune(folder: int) -> None:
    names = [n for n in os.listdir(folder) if n.startswith(PREFIX) and n.endswith(".json")]
    if len(names) <= KEEP:
        return
    aged = sorted(names, key=lambda n: os.stat(n, dir_fd=folder, follow_symlinks=False).st_mtime)
    for name in aged[:len(names) - KEEP]:
        try:
            os.unlink(name, dir_fd=folder)
        except OSError:
            pass
