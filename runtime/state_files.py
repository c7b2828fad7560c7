"""dshc's own files (an event log, its `.torn` marker, its `.blobs` folder and the blobs in it), opened
relative to their folder's descriptor without following a symbolic link, and refused unless they are this
user's, of the expected type, with one hard link: a process the log records may have planted a link there
for dshc to write through (issue 49, C1/C2)."""

from __future__ import annotations

import errno
import os
import stat

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a planted FIFO must not hang the open


class UnsafeStateFile(OSError):
    """A file or folder of dshc's own that something else put in place: dshc does not use it."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(
            errno.EPERM,
            f"refusing `{path}`: {why}; dshc never writes through it (remove it if you did not put it there)",
        )


def open_folder(path: str) -> int:
    """A descriptor of the folder `path` (as the user named it), which must be a folder of this user's or root's."""
    fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        _check_owner(os.fstat(fd), path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(folder: int, name: str, flags: int, shown: str, mode: int = 0o600) -> int:
    """`name` in the folder `folder`: not a link, a regular file of this user's with one hard link."""
    try:
        fd = os.open(name, flags | _NOFOLLOW | _CLOEXEC | _NONBLOCK, mode, dir_fd=folder)
    except OSError as exc:
        raise _refusal(exc, folder, name, shown) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeStateFile(shown, "it is not a regular file")
        if info.st_nlink != 1:
            raise UnsafeStateFile(shown, f"it has {info.st_nlink} hard links (another name shares its contents)")
        _check_owner(info, shown, root_too=False)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_subfolder(folder: int, name: str, shown: str, create: bool) -> int:
    """The folder `name` in `folder` (made 0700 when missing and `create`): not a link, this user's."""
    if create:
        try:
            os.mkdir(name, 0o700, dir_fd=folder)
        except FileExistsError:
            pass
    try:
        fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=folder)
    except OSError as exc:
        raise _refusal(exc, folder, name, shown) from None
    try:
        _check_owner(os.fstat(fd), shown, root_too=False)
    except BaseException:
        os.close(fd)
        raise
    return fd


def kept_paths(log_path: str) -> tuple[str, ...]:
    """What a log at `log_path` writes: the log, its torn-tail marker and its blob folder (a folder's
    with a trailing `/`), for the sandbox to keep read-only to the commands the log records."""
    path = os.path.abspath(log_path)
    return path, path + ".torn", path + ".blobs/"


def _refusal(exc: OSError, folder: int, name: str, shown: str) -> OSError:
    """A failed open as the reason it failed: a link in the way is named as one."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        try:
            if stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
                return UnsafeStateFile(shown, "it is a symbolic link")
        except OSError:
            pass
        return UnsafeStateFile(shown, "it is not what dshc made there")
    return exc


def _check_owner(info: os.stat_result, shown: str, root_too: bool = True) -> None:
    """Owned by this user (a folder may be root's too: `/tmp`, `/var/log`)."""
    owners = {os.geteuid(), 0} if root_too else {os.geteuid()}
    if info.st_uid not in owners:
        raise UnsafeStateFile(shown, f"it belongs to user {info.st_uid}, not to this user")
