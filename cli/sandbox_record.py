"""The host's sandbox, as decide and explain describe it, without a child process per command.

Describing the sandbox a shell call would get needs to know whether unprivileged user + network
namespaces work, which a child Python finds out (~33 ms of a `dshc decide bash`). Here the answer
"they work" is remembered for the boot (a stamp in the private cache folder, keyed by boot id,
kernel release, uid, interpreter and launcher); a failure is never remembered, so a host opened up
since is seen at once. The Landlock ABI is remembered for the boot likewise (asking the kernel loads
ctypes, and a Claude Code hook plans a confinement on every shell call), and so is a "yes" to whether
libseccomp loads (ctypes again, on every shell call's description). Descriptions and the hook's plan
read the record; the launcher a plan starts confines itself by asking the kernel, so a record that lies
can only make a command fail closed, and the runtime's own launches probe afresh.
"""

from __future__ import annotations

import os
import sys

from ..compiler import user_cache
from ..common.digest import sha256
from ..compiler._base.memo import once


@once
def reported_probe():
    """The runtime's probe for a description: its namespace answer from this boot's record when one says
    yes. Once per process, as the runtime's own probe (a session describes every call's sandbox)."""
    from ..runtime import sandbox

    stamp = works_stamp()
    from ..runtime.sandbox.probe import seccomp_loads

    return sandbox.probe_with(
        lambda: remembered_yes(stamp, sandbox.netns_works),
        lambda: remembered_abi(stamp),
        lambda: remembered_yes(_record(stamp, "seccomp-loads-"), seccomp_loads),
    )


def remembered_abi(stamp: str | None) -> int:
    """The kernel's Landlock ABI, remembered for the boot (a hook asks on every shell call, and asking
    loads ctypes). A record that lies can only make a launch fail closed: the launcher asks the kernel."""
    name = _record(stamp, "landlock-abi-")
    known = user_cache.fetch(name) if name is not None else None
    if known is not None and known.isdigit():
        return int(known)
    from ..runtime.sandbox import landlock

    abi = landlock.abi_version()
    if name is not None:
        user_cache.store(name, str(abi).encode())
    return abi


def remembered_yes(stamp: str | None, test) -> bool:
    """`test()`, unless the stamp says it passed before; a pass is stamped, a failure never."""
    if stamp is not None and user_cache.has_stamp(stamp):
        return True
    passed = test()
    if passed and stamp is not None:
        user_cache.put_stamp(stamp)
    return passed


def _record(stamp: str | None, kind: str) -> str | None:
    """The name of this boot's record of another fact than namespaces (the same key, another prefix)."""
    return None if stamp is None else stamp.replace("netns-works-", kind, 1)


def works_stamp() -> str | None:
    """The name of this boot's record (boot id, kernel, uid, interpreter, launcher); None without a boot id."""
    boot = _boot_id()
    if boot is None:
        return None
    from ..runtime.sandbox.probe import LAUNCHER

    facts = "\0".join((boot, os.uname().release, str(os.geteuid()), sys.executable, LAUNCHER))
    return "netns-works-" + sha256(facts.encode()).hexdigest()[:32]


def _boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip() or None
    except (OSError, ValueError):
        return None
