"""Local sockets closed with the network, through libseccomp (loaded with ctypes, so the launcher needs
no package). In: nothing; out: the calling process and everything it runs refused any Unix socket that
could reach a process outside: socket(AF_UNIX), a datagram socketpair (it can be pointed at a pathname
socket) and io_uring (which opens sockets without socket(2)). A stream socketpair stays: it is anonymous.

A network namespace leaves pathname sockets reachable and Landlock's file rights do not cover connect(2),
so without this a command reaches dockerd (`docker run -v /:/host`) or the session bus (`systemd-run
--user`), which act outside the sandbox. A syscall of another architecture than the process's own is
refused by libseccomp's default (the process is killed): no 32-bit entry point walks around the rules."""
from __future__ import annotations

import ctypes
import errno

LIBRARY = "libseccomp.so.2"
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000  # | errno: the call fails with it
_CMP_EQ, _CMP_MASKED_EQ = 4, 7
AF_UNIX = 1
SOCK_DGRAM = 2
_SOCK_TYPE_MASK = 0xF  # the type without SOCK_NONBLOCK / SOCK_CLOEXEC
# io_uring's calls are numbered alike on every architecture (the unified table, since 5.1): a libseccomp
# older than them cannot name them, the kernel still knows them by number
_IO_URING = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}


class SeccompError(OSError):
    """libseccomp is missing or refused the filter: nothing was installed."""


class _Compare(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def available() -> bool:
    """Whether libseccomp can be loaded here."""
    try:
        _library()
    except SeccompError:
        return False
    return True


def _library():
    try:
        lib = ctypes.CDLL(LIBRARY, use_errno=True)
    except OSError as exc:
        raise SeccompError(f"libseccomp is not installed ({LIBRARY}: {exc})") from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_Compare)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def close_local_sockets() -> None:
    """Install the filter on this process for good (libseccomp sets no_new_privs first, as it must)."""
    lib = _library()
    context = lib.seccomp_init(_ALLOW)
    if not context:
        raise SeccompError("libseccomp could not start a filter")
    refuse = _ERRNO | errno.EPERM
    try:
        _add(lib, context, refuse, "socket", _Compare(0, _CMP_EQ, AF_UNIX, 0))
        _add(lib, context, refuse, "socketpair", _Compare(0, _CMP_EQ, AF_UNIX, 0),
             _Compare(1, _CMP_MASKED_EQ, _SOCK_TYPE_MASK, SOCK_DGRAM))
        for name, number in _IO_URING.items():
            _add(lib, context, refuse, name, number=number)
        done = lib.seccomp_load(context)
        if done < 0:
            raise SeccompError(f"the kernel refused the filter: {errno.errorcode.get(-done, -done)}")
    finally:
        lib.seccomp_release(context)


def _add(lib, context, action: int, name: str, *compares: _Compare, number: int | None = None) -> None:
    found = lib.seccomp_syscall_resolve_name(name.encode())
    syscall = found if found >= 0 else number
    if syscall is None:
        raise SeccompError(f"libseccomp does not know `{name}`")
    array = (_Compare * len(compares))(*compares) if compares else None
    done = lib.seccomp_rule_add_array(context, action, syscall, len(compares), array)
    if done < 0:
        raise SeccompError(f"libseccomp refused the rule on `{name}`: {errno.errorcode.get(-done, -done)}")
