"""Landlock through raw syscalls (stdlib ctypes only, so the launcher can load it without the
package). In: the roots a process may write under; out: the calling process confined for good."""

from __future__ import annotations

import ctypes
import os

# the syscall numbers are the same on every architecture (added to the unified table in 5.13)
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_VERSION_FLAG = 1
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
_PR_SET_NO_NEW_PRIVS = 38

# filesystem rights (ABI 1 unless noted)
WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2: renames and links across directories
TRUNCATE = 1 << 14  # ABI 3
# network rights (ABI 4)
BIND_TCP = 1 << 0
CONNECT_TCP = 1 << 1
# scopes (ABI 6): no connecting to abstract Unix sockets or signalling processes outside the domain
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

_WRITE_V1 = (
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM
)
# the only rights a rule on a non-directory may carry
_FILE_RIGHTS = WRITE_FILE | TRUNCATE


class LandlockError(OSError):
    pass


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """The kernel's Landlock ABI, 0 when it has none (not built, disabled at boot, or no Linux)."""
    try:
        version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def write_rights(abi: int) -> int:
    rights = _WRITE_V1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def restrict_writes(roots: list[str], *, deny_tcp: bool = False, connect_port: int | None = None) -> int:
    """Let this process (and everything it execs or forks) write only under `roots`; reads
    stay open. Missing roots are skipped. With `deny_tcp` and ABI >= 4, TCP bind/connect are
    refused as a second layer under the network namespace, but a connect to `connect_port` (the egress
    proxy's, on the namespace's loopback); with ABI >= 6 the process cannot
    signal processes outside its sandbox or reach their abstract Unix sockets (ptrace out of
    the domain is refused at every ABI). Returns the ABI used."""
    abi = abi_version()
    if abi < 1:
        raise LandlockError("Landlock is not available in this kernel")
    libc = _libc()
    handled = write_rights(abi)
    attr = _RulesetAttr(
        handled,
        (BIND_TCP | CONNECT_TCP) if deny_tcp and abi >= 4 else 0,
        (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0,
    )
    # an older kernel accepts the longer struct as long as the fields it does not know are zero
    ruleset = libc.syscall(
        _CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        raise LandlockError(ctypes.get_errno(), f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for root in roots:
            try:
                fd = os.open(root, os.O_PATH | os.O_CLOEXEC)
            except FileNotFoundError:
                continue
            try:
                is_dir = os.path.isdir(f"/proc/self/fd/{fd}")
                rule = _PathBeneathAttr(handled if is_dir else handled & _FILE_RIGHTS, fd)
                if (
                    libc.syscall(
                        _ADD_RULE,
                        ctypes.c_int(ruleset),
                        ctypes.c_int(_RULE_PATH_BENEATH),
                        ctypes.byref(rule),
                        ctypes.c_uint32(0),
                    )
                    < 0
                ):
                    errno = ctypes.get_errno()
                    raise LandlockError(errno, f"landlock_add_rule `{root}`: {os.strerror(errno)}")
            finally:
                os.close(fd)
        if connect_port is not None and deny_tcp and abi >= 4:
            port = _NetPortAttr(CONNECT_TCP, connect_port)
            if (
                libc.syscall(
                    _ADD_RULE,
                    ctypes.c_int(ruleset),
                    ctypes.c_int(_RULE_NET_PORT),
                    ctypes.byref(port),
                    ctypes.c_uint32(0),
                )
                < 0
            ):
                errno = ctypes.get_errno()
                raise LandlockError(errno, f"landlock_add_rule port {connect_port}: {os.strerror(errno)}")
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            errno = ctypes.get_errno()
            raise LandlockError(errno, f"prctl(NO_NEW_PRIVS): {os.strerror(errno)}")
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            errno = ctypes.get_errno()
            raise LandlockError(errno, f"landlock_restrict_self: {os.strerror(errno)}")
    finally:
        os.close(ruleset)
    return abi
