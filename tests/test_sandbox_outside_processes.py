"""A sandboxed command cannot reach the user's other processes: no signal, no ptrace, no terminal input.
A process of the same user outside the sandbox is not confined: ptrace(2) into it (`gdb -p`) runs anything
there, and `kill` stops the user's work. Landlock (ABI 6 scopes signals; ptrace since ABI 1) keeps them apart
on the default mechanism; bubblewrap needs its own process namespace for that (`--unshare-pid`), and a new
session so the command cannot push input into the terminal it was started from (TIOCSTI, CVE-2017-5226).
Real processes."""

from __future__ import annotations

import subprocess

import pytest

from dshc.runtime import sandbox
from dshc.runtime.sandbox import confinement_in
from dshc.runtime.sandbox.confine import bwrap_argv

PROBE = sandbox.probe()
needs_bwrap = pytest.mark.skipif(PROBE.bwrap is None, reason="needs bubblewrap")
needs_scopes = pytest.mark.skipif(
    PROBE.landlock_abi < 6 or not PROBE.network_namespace,
    reason="needs Landlock ABI 6 (signal scopes) and user namespaces",
)


@pytest.fixture
def outside():
    """A process of this user that no sandbox holds."""
    process = subprocess.Popen(["sleep", "60"])
    yield process.pid
    process.kill()
    process.wait()


PTRACE = (
    'python3 -c "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); '
    "r = libc.ptrace(16, {pid}, 0, 0); print('ptrace', r, os.strerror(ctypes.get_errno()) if r else 'attached')\""
)


@pytest.mark.parametrize(
    "backend", [pytest.param("auto", marks=needs_scopes), pytest.param("bwrap", marks=needs_bwrap)]
)
def test_a_process_outside_cannot_be_signalled_or_traced(run_bash, outside, backend):
    output = run_bash(f"kill -0 {outside}; echo signal=$?; " + PTRACE.format(pid=outside), sandbox_backend=backend)
    assert "signal=0" not in output and "attached" not in output, output
    assert "ptrace -1" in output, output


def test_bubblewrap_gets_its_own_processes_and_session(tmp_path):
    argv = bwrap_argv(confinement_in("workspace-write", str(tmp_path), "/tmp/t"), "/usr/bin/bwrap", ["true"])
    assert "--unshare-pid" in argv and "--new-session" in argv
    assert argv.index("--new-session") < argv.index("--")
