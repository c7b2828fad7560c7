"""What confinement this host offers: the Landlock ABI, unprivileged user + network
namespaces, bubblewrap, sandbox-exec. In: nothing; out: a Probe."""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from ...compiler import user_cache
from . import landlock

LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py")
SANDBOX_EXEC = "/usr/bin/sandbox-exec"


@dataclass(frozen=True)
class Probe:
    platform: str
    landlock_abi: int          # 0: none
    network_namespace: bool    # an unprivileged process can enter a new user + network namespace
    bwrap: str | None          # path of bubblewrap when installed
    sandbox_exec: str | None   # macOS Seatbelt front end


def _netns_works() -> bool:
    """Whether an unprivileged user + network namespace can be entered, remembered per boot when it can.

    The test is a child Python (~45 ms of a `dshc decide` of a shell tool). Only "it can" is
    remembered: a stale record makes a launch fail in its child, which enters the namespace itself
    (status 125), and never lets a command run with less confinement than the host offers.
    """
    stamp = _works_stamp()
    if stamp is not None and user_cache.has_stamp(stamp):
        return True
    works = _test_netns()
    if works and stamp is not None:
        user_cache.put_stamp(stamp)
    return works


def _works_stamp() -> str | None:
    """The name of the per-boot record (boot id, kernel, user, interpreter); None off Linux's /proc."""
    boot = _boot_id()
    if boot is None:
        return None
    facts = "\0".join((boot, os.uname().release, str(os.geteuid()), sys.executable, LAUNCHER))
    return "netns-works-" + hashlib.sha256(facts.encode()).hexdigest()[:32]


def _boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip() or None
    except (OSError, ValueError):
        return None


def _test_netns() -> bool:
    # unshare(CLONE_NEWUSER) refuses multithreaded callers, so ask a fresh single-threaded child
    try:
        done = subprocess.run([sys.executable, "-I", "-S", LAUNCHER, "--probe-netns"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def probe() -> Probe:
    linux = sys.platform.startswith("linux")
    return Probe(
        platform=sys.platform,
        landlock_abi=landlock.abi_version() if linux else 0,
        network_namespace=_netns_works() if linux else False,
        bwrap=shutil.which("bwrap") if linux else None,
        sandbox_exec=SANDBOX_EXEC if sys.platform == "darwin" and os.path.exists(SANDBOX_EXEC) else None,
    )

