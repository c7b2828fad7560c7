"""The system calls a sandboxed command is refused, through libseccomp (loaded with ctypes, so the launcher needs
no package). In: whether local sockets close too; out: the calling process and everything it runs refused them
for good (EPERM).

Always: what only privilege could do and a command has no business with — device nodes (mknod of a block or
character device: raw access to a disk), mounts, the hostname and domain name, the clock; AF_VSOCK sockets (the
host of a virtual machine, reachable with no network); pushing input into a terminal (TIOCSTI, TIOCLINUX: a
command typing into the shell it was started from, CVE-2017-5226). Every capability is dropped besides
(`privilege`): the filter holds where that does not (a terminal the command controls needs no capability).

With local sockets closed (the network off): any Unix socket that could reach a process outside —
socket(AF_UNIX), a datagram socketpair (it can be pointed at a pathname socket) and io_uring (which opens
sockets without socket(2)). A stream socketpair stays: it is anonymous. A network namespace leaves pathname
sockets reachable and Landlock's file rights do not cover connect(2), so without this a command reaches dockerd
(`docker run -v /:/host`) or the session bus (`systemd-run --user`), which act outside the sandbox.

A 32-bit argument (a socket's family, an ioctl's request) is compared on its lower half only: the kernel
ignores the upper one, so a filter comparing all 64 bits is walked around with a bit set there (CVE-2019-10063).
A syscall of another architecture than the process's own is refused by libseccomp's default (the process is
killed): no 32-bit entry point walks around the rules."""

from __future__ import annotations

import ctypes
import errno

LIBRARY = "libseccomp.so.2"
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000  # | errno: the call fails with it
_CMP_EQ, _CMP_MASKED_EQ = 4, 7
AF_UNIX, AF_VSOCK = 1, 40
SOCK_DGRAM = 2
_SOCK_TYPE_MASK = 0xF  # the type without SOCK_NONBLOCK / SOCK_CLOEXEC
_INT = 0xFFFFFFFF  # the half of a register the kernel reads for an int
_S_IFMT, _S_IFCHR, _S_IFBLK = 0o170000, 0o020000, 0o060000
# asm-generic/ioctls.h (every architecture but alpha, mips, powerpc and sparc, which libseccomp's default kills
# when they are not the process's own)
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
# calls numbered alike on every architecture (the unified table): a libseccomp older than them cannot name
# them, the kernel still knows them by number
_IO_URING = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
_NEW_MOUNT_API = {
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
}
# what only privilege does; named where this architecture has them (`stime` and `umount` are 32-bit x86's)
_PRIVILEGED = (
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "sethostname",
    "setdomainname",
    "settimeofday",
    "stime",
    "clock_settime",
    "clock_settime64",
    "clock_adjtime",
    "clock_adjtime64",
    "adjtimex",
)


class SeccompError(OSError):
    """libseccomp is missing or refused the filter: nothing was installed."""


class _Compare(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


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
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_Compare),
    ]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def install(close_local_sockets: bool, mounts: bool = False) -> None:
    """Install the filter on this process for good (libseccomp sets no_new_privs first, as it must). `mounts`
    leaves the mount calls open: bubblewrap, started after it, needs them (and drops its own capabilities)."""
    lib = _library()
    context = lib.seccomp_init(_ALLOW)
    if not context:
        raise SeccompError("libseccomp could not start a filter")
    refuse = _ERRNO | errno.EPERM
    try:
        for name in _PRIVILEGED:
            if not (mounts and name in ("mount", "umount", "umount2", "pivot_root")):
                _add(lib, context, refuse, name, optional=True)
        if not mounts:
            for name, number in _NEW_MOUNT_API.items():
                _add(lib, context, refuse, name, number=number)
        for name, mode in (("mknod", 1), ("mknodat", 2)):
            for kind in (_S_IFCHR, _S_IFBLK):
                _add(lib, context, refuse, name, _Compare(mode, _CMP_MASKED_EQ, _S_IFMT, kind), optional=True)
        _add(lib, context, refuse, "socket", _Compare(0, _CMP_MASKED_EQ, _INT, AF_VSOCK))
        for request in (TIOCSTI, TIOCLINUX):
            _add(lib, context, refuse, "ioctl", _Compare(1, _CMP_MASKED_EQ, _INT, request))
        if close_local_sockets:
            _add(lib, context, refuse, "socket", _Compare(0, _CMP_MASKED_EQ, _INT, AF_UNIX))
            _add(
                lib,
                context,
                refuse,
                "socketpair",
                _Compare(0, _CMP_MASKED_EQ, _INT, AF_UNIX),
                _Compare(1, _CMP_MASKED_EQ, _SOCK_TYPE_MASK, SOCK_DGRAM),
            )
            for name, number in _IO_URING.items():
                _add(lib, context, refuse, name, number=number)
        done = lib.seccomp_load(context)
        if done < 0:
            raise SeccompError(f"the kernel refused the filter: {errno.errorcode.get(-done, -done)}")
    finally:
        lib.seccomp_release(context)


def _add(
    lib, context, action: int, name: str, *compares: _Compare, number: int | None = None, optional: bool = False
) -> None:
    """A rule on `name` (by `number` when this libseccomp cannot name it). `optional`: a call this architecture
    does not have is skipped (libseccomp names it with a negative pseudo-number, or not at all)."""
    found = lib.seccomp_syscall_resolve_name(name.encode())
    if optional and found < 0:
        return
    syscall = found if found >= 0 else number
    if syscall is None:
        raise SeccompError(f"libseccomp does not know `{name}`")
    array = (_Compare * len(compares))(*compares) if compares else None
    done = lib.seccomp_rule_add_array(context, action, syscall, len(compares), array)
    if done < 0:
        raise SeccompError(f"libseccomp refused the rule on `{name}`: {errno.errorcode.get(-done, -done)}")
