"""dshc killed (SIGKILL) while the launcher is still confining itself must not leave the command running
unsupervised: the supervisor used to take whatever parent it had when it got there (by then init, or a
subreaper) as dshc, and never saw dshc go (3 of 40 calls killed in their first 0.4 s). The launcher is now
told dshc's pid and starts nothing once dshc is no longer its parent; the command dies with the supervisor
(PR_SET_PDEATHSIG). Real processes: dshc's side is a process that starts the launcher and exits at once."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import psutil
import pytest

from dshc.runtime import sandbox

PROBE = sandbox.probe()
needs_landlock = pytest.mark.skipif(
    not sys.platform.startswith("linux") or PROBE.landlock_abi < 1 or not PROBE.seccomp,
    reason="needs Landlock and libseccomp",
)

STARTER = """
import json, os, subprocess, sys
from dshc.runtime.sandbox import confinement_in, plan
workspace, tmp, mode = sys.argv[1:4]
conf = confinement_in(mode, workspace, tmp, network=True)
launch = plan(conf, ["/bin/sh", "-c", "echo $$ > started; exec sleep 60"], -1, parent=os.getpid())
child = subprocess.Popen(launch.argv, cwd=workspace, start_new_session=True, stdout=subprocess.DEVNULL)
print(json.dumps(child.pid), flush=True)
os._exit(0)  # as a SIGKILL would: no clean-up, the launcher is mid-confinement
"""


@needs_landlock
@pytest.mark.parametrize("mode", ["workspace-write", "danger-full-access"])
def test_a_command_does_not_start_once_dshc_is_gone(workspace, tmp_path, mode):
    (tmp_path / "tmp").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", STARTER, str(workspace), str(tmp_path / "tmp"), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    launcher = json.loads(done.stdout)
    deadline = time.monotonic() + 30  # a bound for a slow machine, not a measurement
    while time.monotonic() < deadline and _alive(launcher):
        time.sleep(0.05)
    try:
        assert not _alive(launcher), "the launcher outlived dshc"
        assert not (workspace / "started").exists()
    finally:
        if (workspace / "started").exists():
            psutil.Process(int((workspace / "started").read_text())).kill()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
