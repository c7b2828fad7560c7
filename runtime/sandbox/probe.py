"""What confinement this host offers: the Landlock ABI, unprivileged user + network
namespaces, bubblewrap, sandbox-exec. In: nothing; out: a Probe."""

from __future__ import annotations

import os
import sys

from .rows import REQUIRED, Row

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py")
EGRESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "egress.py")  # a policy's host lists
SANDBOX_EXEC = "/usr/bin/sandbox-exec"


class Probe(Row):
    platform: str
    landlock_abi: int
    network_namespace: bool
    bwrap: str | None
    sandbox_exec: str | None
    seccomp: bool
    FIELDS = {
        "platform": REQUIRED,
        "landlock_abi": REQUIRED,  # 0: none
        "network_namespace": REQUIRED,  # an unprivileged process can enter a new user + network namespace
        "bwrap": REQUIRED,  # path of bubblewrap when installed, or None
        "sandbox_exec": REQUIRED,  # macOS Seatbelt front end, or None
        "seccomp": REQUIRED,  # libseccomp loads: local sockets can be closed with the network (Linux)
    }


def netns_works() -> bool:
    """Whether an unprivileged user + network namespace can be entered here (a child process tries)."""
    # unshare(CLONE_NEWUSER) refuses multithreaded callers, so ask a fresh single-threaded child
    import subprocess

    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", LAUNCHER, "--probe-netns"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


_PROBED: list = []  # this process's probe, once made


def _probe_here() -> Probe:
    return probe_with(netns_works)


def probe() -> Probe:
    """This process's probe, made on first need (`functools.cache`'s, without importing functools)."""
    if not _PROBED:
        _PROBED.append(_probe_here())
    return _PROBED[0]


probe.__wrapped__ = _probe_here  # type: ignore[attr-defined]  # a probe made afresh, as functools.cache gives
probe.cache_clear = _PROBED.clear  # type: ignore[attr-defined]  # as functools.cache gives; no functools here


def probe_with(
    namespaces: Callable[[], bool], abi: Callable[[], int] | None = None, seccomp: Callable[[], bool] | None = None
) -> Probe:
    """The probe, with the namespace question answered by `namespaces`, the Landlock ABI by `abi` and
    whether libseccomp loads by `seccomp` (asked on Linux only; by default the kernel and the loader
    are asked, through ctypes)."""
    linux = sys.platform.startswith("linux")
    if linux and abi is None:
        from . import landlock  # ctypes: loaded only when the kernel is asked

        abi = landlock.abi_version
    return Probe(
        platform=sys.platform,
        landlock_abi=abi() if linux and abi is not None else 0,
        network_namespace=namespaces() if linux else False,
        bwrap=_which("bwrap") if linux else None,
        sandbox_exec=SANDBOX_EXEC if sys.platform == "darwin" and os.path.exists(SANDBOX_EXEC) else None,
        seccomp=(seccomp or seccomp_loads)() if linux else False,
    )


def seccomp_loads() -> bool:
    from . import seccomp  # ctypes: loaded only on Linux

    return seccomp.available()


def _which(name: str) -> str | None:
    """`shutil.which(name)` for a plain name (shutil's import is most of a hook's probe)."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None
