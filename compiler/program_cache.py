"""A per-user disk cache of loaded Programs, for processes that load the same sources every time.

In: the declaration files a process would load. Out: the Program, rebuilt from JSON data when the
same sources, catalog and dshc code were loaded before (saving the parse and resolve), else loaded
and stored. The key hashes every source byte and the running code's file metadata, so any change
loads afresh. The files are plain data (data_codec: nothing in them can run code) in the user's
private cache folder (user_cache).
"""

from __future__ import annotations

import os
import sys

from . import data_codec, prebuilt, user_cache
from ..common.digest import sha256
from .program import Program, SourceFile, read_paths, shipped_sources

VERSION = b"dshc-program-cache-4"
PREFIX = "program-"
KEEP = 32  # programs kept; the oldest go first (each edit of a policy makes a new key)


def _code_files():
    """(name, size, modification time, inode) of every file of the compiler's code and of the shipped
    catalog, in a fixed order. The running code is fingerprinted by its files' metadata, as Python
    keys its own bytecode cache, not by their bytes: reading and hashing 0.6 MB on every start cost
    a hook ~6 ms. Installing or editing a file gives it a new time (and inode), so a new key."""
    for name, entry in prebuilt.code_entries():
        facts = entry.stat()
        yield name, facts.st_size, facts.st_mtime_ns, facts.st_ino


def key(files: list[SourceFile]) -> str:
    digest = sha256(VERSION + sys.version.encode())
    # the code and catalog that built the program must be the ones running (one update: a call per file was
    # a third of the key's cost)
    digest.update(
        "".join([f"{n}\0{size}\0{modified}\0{inode}\0" for n, size, modified, inode in _code_files()]).encode()
    )
    digest.update(b"".join([part for file in files for part in (file.path.encode(), b"\0", file.data, b"\0")]))
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
        program = _from_build(files, folder, name)
        if program is not None:
            return program
        program = Program.from_files(files)
        try:
            user_cache.write(folder, name, data_codec.dumps((program.resolved, program.sources)).encode("utf-8"))
            user_cache.prune(folder, PREFIX, KEEP)
        except (OSError, data_codec.Unencodable, RecursionError, ValueError):
            pass  # the next process loads afresh; nothing is lost
        return program
    finally:
        os.close(folder)


def _from_build(files: list[SourceFile], folder: int, name: str) -> Program | None:
    """The program the package build made of these very files (the shipped ones, unedited), kept in
    the user's cache as `name`; None when the build made none of them."""
    text = prebuilt.read(prebuilt.program_name(files))
    if text is None:
        return None
    try:
        resolved, sources = data_codec.loads(text)
    except Exception:  # noqa: BLE001 - a damaged install: load afresh, as for a damaged cache
        return None
    try:
        user_cache.write(folder, name, text)
        user_cache.prune(folder, PREFIX, KEEP)
    except OSError:
        pass
    return Program(resolved, sources)
