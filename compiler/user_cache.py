"""The user's private cache folder: names in, bytes out, refused unless ours and closed to others.

Every dshc cache (parse tables, compiled programs, catalog checks) lives in <cache root>/dshc, made
0700; a file is read only through an fd on that folder, never through a link, and only when it is
a regular file of this user that nobody else can write. Writes are whole or not at all.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from _thread import get_ident  # not `threading`: a hook process loads neither it nor what it imports

SAFE_OPEN = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class UntrustedCache(Exception):
    """The cache folder or file is not safe or not sound to use; the message says why."""


def usable() -> bool:
    """False where the checks cannot be made (no uids, no O_NOFOLLOW): then nothing is cached."""
    return hasattr(os, "geteuid") and bool(SAFE_OPEN)


def cache_root() -> str | None:
    """The user's cache folder (XDG_CACHE_HOME, else ~/.cache; ~/Library/Caches on macOS)."""
    env = os.environ.get("XDG_CACHE_HOME")
    if env and os.path.isabs(env):
        return env
    home = os.path.expanduser("~")
    if not os.path.isabs(home):
        return None  # no home to speak of: never a cache relative to the working folder
    return os.path.join(home, "Library", "Caches") if sys.platform == "darwin" else os.path.join(home, ".cache")


def open_folder() -> int:
    """An fd on <cache root>/dshc, made 0700 if missing; refused unless ours and closed to others."""
    root = cache_root()
    if root is None:
        raise FileNotFoundError("no cache folder")
    os.makedirs(root, mode=0o700, exist_ok=True)
    path = os.path.join(root, "dshc")
    try:
        os.mkdir(path, 0o700)  # fails if anything is already there: what is there gets checked below
    except FileExistsError:
        pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | SAFE_OPEN)
    except OSError as exc:
        if os.path.islink(path):
            raise UntrustedCache(f"`{path}` is a symbolic link") from exc
        raise
    try:
        check_owned(os.fstat(fd), path, stat.S_ISDIR)
    except UntrustedCache:
        os.close(fd)
        raise
    return fd


def check_owned(info: os.stat_result, path, kind_ok) -> None:
    if not kind_ok(info.st_mode):
        raise UntrustedCache(f"`{path}` is not a {'folder' if kind_ok is stat.S_ISDIR else 'regular file'}")
    if info.st_uid != os.geteuid():
        raise UntrustedCache(f"`{path}` belongs to user {info.st_uid}, not to this user")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UntrustedCache(f"`{path}` can be written by other users (mode {stat.S_IMODE(info.st_mode):o})")


def read(folder: int, name: str) -> bytes:
    """The bytes of `name` in the folder; FileNotFoundError when absent, UntrustedCache when unsafe."""
    try:
        fd = os.open(name, os.O_RDONLY | SAFE_OPEN, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise FileNotFoundError(name) from exc
        raise UntrustedCache(f"`{name}` cannot be opened safely ({exc.strerror}; a symbolic link?)") from exc
    with os.fdopen(fd, "rb") as handle:
        check_owned(os.fstat(handle.fileno()), name, stat.S_ISREG)
        return handle.read()


def write(folder: int, name: str, data: bytes) -> None:
    """Store `data` as `name`, mode 0600; a reader sees the old file or the whole new one, never a torn one."""
    temp = f".{name}.{os.getpid()}.{get_ident()}.tmp"  # per thread too: two threads may store one name
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | SAFE_OPEN, 0o600, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=folder)
        except OSError:
            pass
        raise


def prune(folder: int, prefix: str, keep: int) -> None:
    """Remove the oldest `prefix…json` files beyond the newest `keep` (each edit of a source makes a new key)."""
    names = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(".json")]
    if len(names) <= keep:
        return
    aged = sorted(names, key=lambda n: os.stat(n, dir_fd=folder, follow_symlinks=False).st_mtime)
    for name in aged[: len(names) - keep]:
        try:
            os.unlink(name, dir_fd=folder)
        except OSError:
            pass


def fetch(name: str) -> bytes | None:
    """The bytes of `name` in the cache, or None: absent, unsafe, or no cache here (DSHC_NO_CACHE)."""
    if not usable() or os.environ.get("DSHC_NO_CACHE"):
        return None
    try:
        folder = open_folder()
    except (UntrustedCache, OSError):
        return None
    try:
        return read(folder, name)
    except (UntrustedCache, OSError):
        return None
    finally:
        os.close(folder)


def store(name: str, data: bytes, prefix: str | None = None, keep: int = 0) -> None:
    """Keep `data` as `name` if there is a usable cache (and prune `prefix` files to `keep`);
    a failure loses nothing: the next process computes it again."""
    if not usable() or os.environ.get("DSHC_NO_CACHE"):
        return
    try:
        folder = open_folder()
    except (UntrustedCache, OSError):
        return
    try:
        write(folder, name, data)
        if prefix:
            prune(folder, prefix, keep)
    except OSError:
        pass
    finally:
        os.close(folder)


def has_stamp(name: str) -> bool:
    """Whether a stamp `name` (a fact about some exact bytes, e.g. "this catalog passed its checks") is here."""
    return fetch(name) == name.encode()


def put_stamp(name: str) -> None:
    store(name, name.encode())
