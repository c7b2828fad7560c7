"""Every capability given up for good (stdlib ctypes only, so the launcher can load it). In: the calling process,
root or not, in a user namespace or not; out: no capability in any set, an empty bounding set wherever it could
be emptied, and no_new_privs: nothing it runs gains privilege again (a set-user-ID program, a file's
capabilities, uid 0's exec) — or CapabilityError, and the command must not run."""

from __future__ import annotations

import ctypes
import os

_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAP_SETPCAP = 8
_VERSION_3 = 0x20080522  # two 32-bit words per set
_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")


class CapabilityError(OSError):
    pass


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def held() -> dict[str, int]:
    """This process's capability sets, as /proc/self/status shows them."""
    found = {}
    with open("/proc/self/status") as handle:
        for line in handle:
            name, _, value = line.partition(":")
            if name in _SETS:
                found[name] = int(value.strip(), 16)
    return found


def drop_all() -> None:
    """Run after whatever needs a capability (the mounts) and before the command."""
    libc = ctypes.CDLL(None, use_errno=True)

    def check(done: int, what: str) -> None:
        if done != 0:
            errno = ctypes.get_errno()
            raise CapabilityError(errno, f"{what}: {os.strerror(errno)}")

    check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    # the bounding set caps what uid 0 gets back at its next exec; emptying it needs CAP_SETPCAP, which root (or
    # anyone in its own user namespace) has; without it nothing can be gained back anyway (no_new_privs)
    bounding = held().get("CapBnd", 0)
    can_empty = held().get("CapEff", 0) >> _CAP_SETPCAP & 1
    if can_empty:
        for cap in range(bounding.bit_length()):
            if bounding >> cap & 1:
                check(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), f"prctl(CAPBSET_DROP, {cap})")
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before 4.3: there is none to clear
    data = (_Data * 2)()
    check(libc.capset(ctypes.byref(_Header(_VERSION_3, 0)), data), "capset")
    left = {name: value for name, value in held().items() if value and (name != "CapBnd" or can_empty)}
    if left:  # what the kernel says, not what the calls returned
        raise CapabilityError(0, "capabilities still held: " + ", ".join(f"{k} {v:x}" for k, v in left.items()))
