"""Grammar text + a build function → lark parser, with the LALR tables kept as plain JSON data.

The cache lives in the user's cache folder and is trusted only when it is ours and nobody else
can write it; anything else is reported on stderr and the tables are rebuilt from the grammar.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Callable

import lark
from lark import Lark
from lark.grammar import Rule
from lark.lark import _LOAD_ALLOWED_OPTIONS
from lark.lexer import TerminalDef

FORMAT = 1
# JSON has no tuples and no integer keys; lark's serialised tables use both
_TUPLE, _INT_KEYS = "#t", "#i"
_SAFE_OPEN = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class UntrustedCache(Exception):
    """The cache folder or file is not safe or not sound to use; the message says why."""


def cache_root() -> Path | None:
    """The user's cache folder (XDG_CACHE_HOME, else ~/.cache; ~/Library/Caches on macOS)."""
    env = os.environ.get("XDG_CACHE_HOME")
    if env and os.path.isabs(env):
        return Path(env)
    home = Path(os.path.expanduser("~"))
    if not home.is_absolute():
        return None  # no home to speak of: never a cache relative to the working folder
    return home / "Library" / "Caches" if sys.platform == "darwin" else home / ".cache"


def load_parser(grammar: str, build: Callable[[], Lark], load_options: dict, *, report=None) -> Lark:
    """The parser for `grammar`: from the cache when it is trustworthy, else `build()` (and cache it)."""
    report = report or _warn
    if os.environ.get("DSHC_NO_PARSER_CACHE") or not hasattr(os, "geteuid") or not _SAFE_OPEN:
        return build()
    key = hashlib.sha256(f"{FORMAT}\0{lark.__version__}\0{grammar}".encode("utf-8")).hexdigest()
    name = f"grammar-{key[:32]}.json"
    try:
        folder = _open_folder()
    except UntrustedCache as exc:
        report(f"not using the parser cache: {exc}")
        return build()
    except OSError:
        return build()  # no cache folder can be made (read-only home): cold start, nothing unsafe
    try:
        try:
            return Lark.__new__(Lark)._load(_read(folder, name, key), **load_options)
        except FileNotFoundError:
            pass
        except UntrustedCache as exc:
            report(f"ignoring the parser cache: {exc}")
        except Exception as exc:  # noqa: BLE001 - any unreadable cache means a rebuild, never a failure
            report(f"ignoring the parser cache `{name}`: it is corrupt ({type(exc).__name__})")
        parser = build()
        try:
            _write(folder, name, key, parser)
        except OSError:
            pass  # a full disk costs the next run a rebuild, nothing more
        return parser
    finally:
        os.close(folder)


def _warn(message: str) -> None:
    print(f"dshc: warning: {message}", file=sys.stderr)


def _open_folder() -> int:
    """An fd on <cache root>/dshc, made 0700 if missing; refused unless ours and closed to others."""
    root = cache_root()
    if root is None:
        raise FileNotFoundError("no cache folder")
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = root / "dshc"
    try:
        os.mkdir(path, 0o700)  # fails if anything is already there: what is there gets checked below
    except FileExistsError:
        pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _SAFE_OPEN)
    except OSError as exc:
        if os.path.islink(path):
            raise UntrustedCache(f"`{path}` is a symbolic link") from exc
        raise
    try:
        _check_owned(os.fstat(fd), path, stat.S_ISDIR)
    except UntrustedCache:
        os.close(fd)
        raise
    return fd


def _check_owned(info: os.stat_result, path, kind_ok) -> None:
    if not kind_ok(info.st_mode):
        raise UntrustedCache(f"`{path}` is not a {'folder' if kind_ok is stat.S_ISDIR else 'regular file'}")
    if info.st_uid != os.geteuid():
        raise UntrustedCache(f"`{path}` belongs to user {info.st_uid}, not to this user")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UntrustedCache(f"`{path}` can be written by other users (mode {stat.S_IMODE(info.st_mode):o})")


def _read(folder: int, name: str, key: str) -> dict:
    try:
        fd = os.open(name, os.O_RDONLY | _SAFE_OPEN, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise FileNotFoundError(name) from exc
        raise UntrustedCache(f"`{name}` cannot be opened safely ({exc.strerror}; a symbolic link?)") from exc
    with os.fdopen(fd, "rb") as handle:
        _check_owned(os.fstat(handle.fileno()), name, stat.S_ISREG)
        header, _, body = handle.read().partition(b"\n")
    meta = json.loads(header)
    if meta.get("key") != key or meta.get("sha256") != hashlib.sha256(body).hexdigest():
        raise ValueError("key or checksum mismatch")
    return json.loads(body, object_hook=_decode)


def _write(folder: int, name: str, key: str, parser: Lark) -> None:
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    # options that carry code (callbacks) are given again at load time; they are never stored
    data["options"] = {n: v for n, v in data["options"].items() if n not in _LOAD_ALLOWED_OPTIONS}
    body = json.dumps(_encode({"data": data, "memo": memo}), separators=(",", ":")).encode("utf-8")
    header = json.dumps({"format": FORMAT, "lark": lark.__version__, "key": key,
                         "sha256": hashlib.sha256(body).hexdigest()}).encode("utf-8")
    temp = f".{name}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _SAFE_OPEN, 0o600, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(header + b"\n" + body)
        # a reader sees the old file or the whole new one, never a torn one
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=folder)
        except OSError:
            pass
        raise


def _encode(value):
    if isinstance(value, dict):
        if all(type(k) is str for k in value):
            return {k: _encode(v) for k, v in value.items()}
        return {_INT_KEYS: [[k, _encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {_TUPLE: [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _decode(obj: dict):
    if len(obj) == 1:
        if _TUPLE in obj:
            return tuple(obj[_TUPLE])
        if _INT_KEYS in obj:
            return {k: v for k, v in obj[_INT_KEYS]}
    return obj
