"""New unprivileged namespaces (stdlib ctypes only): a user namespace with a network one (network off: no
route anywhere) and/or a mount one (`readonly`). In: the calling single-threaded process; out: the same
process inside them, with the same uid and gid."""

from __future__ import annotations

import ctypes
import os

_CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000  # a mount namespace: paths kept read-only (`readonly`)
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


class NamespaceError(OSError):
    pass


def isolate_network() -> None:
    """Enter a fresh network namespace (only a down loopback in it), keeping the same uid/gid."""
    enter(CLONE_NEWNET)


def proxy_listener(channel: int) -> int:
    """In a fresh network namespace: bring its loopback up, listen on it, hand the listening socket to the egress
    proxy outside over `channel` (a Unix socket pair's end) and close both here. Returns the port listened on."""
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(probe, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | _IFF_UP))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener, socket.socket(fileno=channel) as way_out:
        listener.bind(("127.0.0.1", 0))
        listener.listen(128)
        socket.send_fds(way_out, [b"L"], [listener.fileno()])
        return listener.getsockname()[1]


def enter(flags: int) -> None:
    """Enter a new user namespace, and the namespaces `flags` name, keeping the same uid/gid.

    Must run before Landlock: the id maps are files under /proc this process writes."""
    uid, gid = os.geteuid(), os.getegid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWUSER | flags) != 0:
        errno = ctypes.get_errno()
        raise NamespaceError(
            errno,
            f"unshare(user{'+net' if flags & CLONE_NEWNET else ''}"
            f"{'+mount' if flags & CLONE_NEWNS else ''}): {os.strerror(errno)}",
        )
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
        except FileNotFoundError:
            if name != "setgroups":  # kernels before 3.19 have no setgroups file
                raise
