"""What confinement this host offers: the Landlock ABI, unprivileged user + network
namespaces, bubblewrap, sandbox-exec. In: nothing; out: a Probe."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable

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


def netns_works() -> bool:
    """Whether an unprivileged user + network namespace can be entered here (a child process tries)."""
    # unshare(CLONE_NEWUSER) refuses multithreaded callers, so ask a fresh single-threaded child
    try:
        done = subprocess.run([sys.executable, "-I", "-S", LAUNCHER, "--probe-netns"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def probe() -> Probe:
    return probe_with(netns_works)


def probe_with(namespaces: Callable[[], bool]) -> Probe:
    """The probe, with the namespace question answered by `namespaces` (asked on Linux only)."""
    linux = sys.platform.startswith("linux")
    return Probe(
        platform=sys.platform,
        landlock_abi=landlock.abi_version() if linux else 0,
        network_namespace=namespaces() if linux else False,
        bwrap=shutil.which("bwrap") if linux else None,
        sandbox_exec=SANDBOX_EXEC if sys.platform == "darwin" and os.path.exists(SANDBOX_EXEC) else None,
    )
