"""New unprivileged namespaces (stdlib ctypes only): a user namespace with a network one (network off: no
route anywhere) and/or a mount one (`readonly`). In: the calling single-threaded process; out: the same
process inside them, with the same uid and gid."""
from __future__ import annotations

import ctypes
import os

_CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000  # a mount namespace: paths kept read-only (`readonly`)


class NamespaceError(OSError):
    pass


def isolate_network() -> None:
    """Enter a fresh network namespace (only a down loopback in it), keeping the same uid/gid."""
    enter(CLONE_NEWNET)


def enter(flags: int) -> None:
    """Enter a new user namespace, and the namespaces `flags` name, keeping the same uid/gid.

    Must run before Landlock: the id maps are files under /proc this process writes."""
    uid, gid = os.geteuid(), os.getegid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWUSER | flags) != 0:
        errno = ctypes.get_errno()
        raise NamespaceError(errno, f"unshare(user{'+net' if flags & CLONE_NEWNET else ''}"
                                    f"{'+mount' if flags & CLONE_NEWNS else ''}): {os.strerror(errno)}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
        except FileNotFoundError:
            if name != "setgroups":   # kernels before 3.19 have no setgroups file
                raise
