"""What the launcher says when it cannot confine a command is words, not Python's `[Errno N] …`: a folder removed
while the command was being started (a race with the command before it) is named with the system's own text.
A real launcher, whose working folder is removed between its start and its confinement."""

from __future__ import annotations

import os
import subprocess

import pytest

from dshc.runtime import sandbox
from dshc.runtime.sandbox import confinement_in, plan, read_report

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace or not PROBE.seccomp,
    reason="needs Landlock, user namespaces and libseccomp",
)


@needs_namespaces
def test_a_folder_gone_mid_start_is_reported_in_words(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "t").mkdir()
    gone = tmp_path / "ws" / "sub"
    gone.mkdir()
    read_fd, write_fd = os.pipe()
    launch = plan(
        confinement_in("workspace-write", str(tmp_path / "ws"), str(tmp_path / "t")),
        ["/bin/sh", "-c", "touch ran"],
        write_fd,
    )
    # the child is already in the folder when it goes: the launcher finds no working directory
    child = subprocess.Popen(launch.argv, cwd=gone, pass_fds=(write_fd,), preexec_fn=lambda: os.rmdir(gone))
    os.close(write_fd)
    try:
        report = read_report(read_fd)
    finally:
        os.close(read_fd)
    assert child.wait(timeout=30) == 125
    assert report.startswith("cannot confine the command: ") and "[Errno" not in report, report
    assert "No such file or directory" in report, report
