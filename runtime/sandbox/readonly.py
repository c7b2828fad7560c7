"""Everything outside the writable roots read-only, and paths kept read-only inside them (stdlib ctypes only).
`seal`: every mount of the process's own mount namespace remounted read-only, the writable roots bind-mounted
writable again: Landlock refuses writes, not a change of a file's mode, times or extended attributes, which a
read-only mount refuses (EROFS) — `chmod` of a file outside, as its owner, in any mode. `keep_read_only`: each
path becomes a read-only bind mount of
itself in the process's own mount namespace (`netns.enter(CLONE_NEWNS)` first). In: existing paths; out: writes
under them fail (EROFS), renaming them fails (a mount point), and so does renaming a folder that holds them
(each is pinned: a writable mount of itself). Landlock, applied after, forbids the command
any mount or unmount, so it cannot undo them. A missing directory (given with a trailing `/`) is made,
empty, first; a missing file is skipped: one created there later is not contained (the rules still decide
what the command names)."""

from __future__ import annotations

import ctypes
import errno
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME, _MS_STRICTATIME = 1024, 2048, 1 << 21, 1 << 24
# a mount's flags as statvfs(3) shows them -> as mount(2) takes them: a remount in a user namespace must keep
# the ones the parent namespace set (they are locked), or it is refused
_ST_NOSYMFOLLOW, _MS_NOSYMFOLLOW = 8192, 256  # not in `os`; a remount without it would follow links again
_KEPT = (
    (os.ST_NOSUID, _MS_NOSUID),
    (os.ST_NODEV, _MS_NODEV),
    (os.ST_NOEXEC, _MS_NOEXEC),
    (os.ST_NOATIME, _MS_NOATIME),
    (os.ST_NODIRATIME, _MS_NODIRATIME),
    (os.ST_RELATIME, _MS_RELATIME),
    (_ST_NOSYMFOLLOW, _MS_NOSYMFOLLOW),
)


class MountError(OSError):
    pass


def _mounter():
    """mount(2) through libc, raising MountError naming what failed."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]

    def mount(source, target, flags: int, what: str, kind=None) -> None:
        if libc.mount(source, target, kind, flags, None) != 0:
            code = ctypes.get_errno()
            raise MountError(code, f"{what} `{os.fsdecode(target)}`: {os.strerror(code)}")

    return mount


def keep_read_only(paths: list[str], pins: Sequence[str] = ()) -> None:
    """`paths` read-only; each of `pins` (the folders that hold them, shallowest first) a mount of itself,
    still writable, so that it cannot be renamed or removed and a new one made in its place."""
    mount = _mounter()
    # nothing mounted here reaches the host's namespace
    mount(None, b"/", _MS_REC | _MS_PRIVATE, "making the mounts private at")
    for path in paths:
        make_missing_directory(path)
    for folder in pins:  # before the read-only mounts, which then sit inside them
        if os.path.isdir(folder):
            target = os.fsencode(folder)
            mount(target, target, _MS_BIND | _MS_REC, "pinning")
    for path in paths:
        path = path.rstrip("/") or "/"
        if not os.path.lexists(path):
            continue
        target = os.fsencode(path)
        mount(target, target, _MS_BIND | _MS_REC, "bind-mounting")
        mount(None, target, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _flags(target), "making read-only")


def seal(writable: list[str]) -> None:
    """Every mount read-only but `writable` (the roots that exist), which stay as they were."""
    mount = _mounter()
    mount(None, b"/", _MS_REC | _MS_PRIVATE, "making the mounts private at")
    roots = [(root, _flags(root)) for root in writable if os.path.exists(root)]  # before anything changes
    for point in _mount_points():
        try:
            flags = _flags(point)
            mount(None, point, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | flags, "making read-only")
        except OSError as exc:
            # unmounted since the listing, out of this process's reach (then not a path it can name either), or
            # one the kernel will not remount here: left as it was, under Landlock still; the root never is
            if point == b"/" or exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.EINVAL):
                raise
    for root, flags in roots:
        target = os.fsencode(root)
        mount(target, target, _MS_BIND | _MS_REC, "binding the writable root")
        if not flags & _MS_RDONLY:
            mount(None, target, _MS_BIND | _MS_REMOUNT | flags, "making writable")


def _flags(path) -> int:
    """The flags of the mount holding `path` that a remount must keep, and whether it is read-only."""
    found = os.statvfs(path).f_flag
    flags = sum(ms for st, ms in _KEPT if found & st) | (_MS_RDONLY if found & os.ST_RDONLY else 0)
    return flags if flags & (_MS_NOATIME | _MS_RELATIME) else flags | _MS_STRICTATIME


def _mount_points() -> list[bytes]:
    """The mount points of this namespace, parents first (mountinfo's fifth field, octal escapes undone)."""
    with open("/proc/self/mountinfo", "rb") as handle:
        lines = handle.read().splitlines()
    points = []
    for line in lines:
        field = line.split(b" ")[4]
        points.append(
            field.replace(b"\\040", b" ").replace(b"\\011", b"\t").replace(b"\\012", b"\n").replace(b"\\134", b"\\")
        )
    return list(dict.fromkeys(points))


def make_missing_directory(path: str) -> None:
    """A protected directory (`path` ends in `/`) that is missing, made empty: the command could otherwise
    create and fill it (`.claude/settings.json` planted where there was none). Then it can be mounted
    read-only; a file cannot be made in advance, and is left."""
    if path.endswith("/") and not os.path.lexists(path):
        os.makedirs(path, exist_ok=True)


def hide(paths: list[str]) -> None:
    """Each path a read deny names, hidden: an empty read-only file system over a directory (given with a
    trailing `/`), the null device read-only over a file. The command reads nothing there, and cannot
    rename, link or (under Landlock, applied after) unmount its way to what was there."""
    mount = _mounter()
    mount(None, b"/", _MS_REC | _MS_PRIVATE, "making the mounts private at")
    for path in paths:
        target = os.fsencode(path.rstrip("/") or "/")
        if not os.path.lexists(target):  # gone since the plan was made: nothing is left there to hide
            continue
        if path.endswith("/"):
            mount(b"tmpfs", target, _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "hiding", kind=b"tmpfs")
        else:
            mount(b"/dev/null", target, _MS_BIND, "hiding")
            mount(None, target, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _flags(target), "making read-only")
