"""A file outside the writable roots keeps its mode, times and extended attributes: Landlock refuses writes, not
chmod(2), utimensat(2) or setxattr(2), so a confined command could make its owner's `~/.ssh` readable by all,
backdate a file, or set an attribute another program trusts — in any mode, `read-only` too. Every mount but
the writable roots is now read-only in the command's own mount namespace (EROFS), as bubblewrap's
`--ro-bind / /` makes it. Real processes; a file inside the workspace still changes as before."""

from __future__ import annotations

import os

import pytest

from dshc.runtime import sandbox

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace or not PROBE.seccomp,
    reason="needs Landlock, user namespaces and libseccomp",
)
needs_bwrap = pytest.mark.skipif(PROBE.bwrap is None or not PROBE.seccomp, reason="needs bubblewrap and libseccomp")

CHANGES = (
    "chmod 777 {f}; echo chmod=$?; touch -d 2001-01-01 {f}; echo utime=$?; "
    "python3 -c \"import os; os.setxattr('{f}', 'user.planted', b'1')\" 2>/dev/null; echo setxattr=$?; "
    "python3 -c \"import os; os.removexattr('{f}', 'user.kept')\" 2>/dev/null; echo removexattr=$?; "
    "chown $(id -u):$(id -g) {f}; echo chown=$?"
)
STEPS = ("chmod", "utime", "setxattr", "removexattr", "chown")


@pytest.fixture
def target(outside):
    path = outside / "kept"
    path.write_text("x")
    os.chmod(path, 0o640)
    os.utime(path, (1_000_000_000, 1_000_000_000))
    os.setxattr(path, "user.kept", b"1")
    return path


def _as_it_was(path) -> None:
    info = os.stat(path)
    assert (info.st_mode & 0o7777, info.st_mtime) == (0o640, 1_000_000_000)
    assert os.listxattr(path) == ["user.kept"]


def _refused(output: str) -> None:
    for step in STEPS:
        assert f"{step}=0" not in output, (step, output)


@needs_namespaces
@pytest.mark.parametrize(
    "context",
    [{"network": True}, {}, {"sandbox": "read-only", "network": True}],
    ids=["network-allow", "network-off", "read-only"],
)
def test_a_file_outside_keeps_its_mode_times_and_attributes(run_bash, target, workspace, context):
    inside = workspace / "inside"
    inside.write_text("y")
    os.chmod(inside, 0o600)
    mode = context.get("sandbox", "workspace-write")
    output = run_bash(CHANGES.format(f=target) + f"; chmod 644 {inside}; echo inside=$?", **context)
    _refused(output)
    _as_it_was(target)
    # inside the workspace, workspace-write still changes a mode; read-only changes nothing
    assert ("inside=0" in output) is (mode == "workspace-write"), output
    assert (os.stat(inside).st_mode & 0o777 == 0o644) is (mode == "workspace-write")


@needs_bwrap
def test_bubblewrap_keeps_them_too(run_bash, target):
    output = run_bash(CHANGES.format(f=target), network=True, sandbox_backend="bwrap")
    _refused(output)
    _as_it_was(target)
