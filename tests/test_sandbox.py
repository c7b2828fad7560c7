"""The OS sandbox with real processes: Landlock write confinement per mode, children and
jobs and the persistent shell confined too, network off/on, approved and rejected
escalation through `dshc run`, failing closed without a mechanism, the supervisor that
outlives nothing, and the bubblewrap / Seatbelt command lines pinned."""

from __future__ import annotations

import io
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from dshc.cli.main import main
from dshc.runtime import sandbox
from dshc.runtime.sandbox import Confinement, Probe, plan, seatbelt
from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext, ToolError

from conftest import NO_OS_SANDBOX

PROBE = sandbox.probe()
needs_landlock = pytest.mark.skipif(PROBE.landlock_abi < 1, reason="the kernel offers no Landlock ABI")
needs_netns = pytest.mark.skipif(not PROBE.network_namespace, reason="unprivileged user namespaces are disabled")
GOLDEN = Path(__file__).parent / "test_sandbox"


@pytest.fixture
def run(workspace, state):
    def call(definition, args, sandbox="workspace-write", **kwargs):
        ctx = ToolContext(
            workspace=str(workspace),
            sandbox=sandbox,
            owner="agent-1",
            state=state,
            abort=threading.Event(),
            timeout_s=30,
            **kwargs,
        )
        return IMPLEMENTATIONS[definition](args, ctx)

    return call


def bash(command: str, **extra) -> dict:
    return {"command": command, "description": "test", **extra}


def listing(*folders: Path) -> list[str]:
    return sorted(str(p) for folder in folders for p in folder.rglob("*"))


# ---------------------------------------------------------------- filesystem confinement


@needs_landlock
def test_workspace_write_touch_outside_fails_and_inside_works(run, workspace, outside):
    result = run("tool-bash/bash", bash(f"touch {outside}/escaped; echo outside=$?; touch inside; echo inside=$?"))
    assert "outside=1" in result["output"] and "inside=0" in result["output"]
    assert listing(outside) == []
    assert (workspace / "inside").exists()


@needs_landlock
def test_read_only_writes_nowhere(run, workspace, outside):
    (workspace / "kept.txt").write_text("original")
    command = (
        f"touch {outside}/a; echo x > {workspace}/new; echo y >> {workspace}/kept.txt; "
        f"rm -f {workspace}/kept.txt; mkdir {workspace}/d; cat {workspace}/kept.txt; echo; "
        "echo scratch > $TMPDIR/t && echo tmp-ok; echo discard > /dev/null && echo null-ok"
    )
    result = run("tool-bash/bash", bash(command), sandbox="read-only")
    assert listing(outside) == []
    assert listing(workspace) == [str(workspace / "kept.txt")]
    assert (workspace / "kept.txt").read_text() == "original"
    # reading everywhere, the private temp dir and /dev/null stay usable
    assert "original" in result["output"] and "tmp-ok" in result["output"] and "null-ok" in result["output"]


@needs_landlock
@pytest.mark.parametrize(
    "how",
    [
        "sh -c 'touch {out}/sh'",
        "python3 -c \"open('{out}/py', 'w')\"",
        "(sleep 0.1; touch {out}/later) & wait",
        "setsid sh -c 'touch {out}/setsid'",
    ],
)
def test_children_of_the_shell_are_confined(run, outside, how):
    run("tool-bash/bash", bash(how.format(out=outside)))
    assert listing(outside) == []


@needs_landlock
def test_background_job_is_confined(run, workspace, outside):
    started = run(
        "tool-bash/bash", bash(f"touch {outside}/job; echo rc=$?; touch {workspace}/job-inside", run_in_background=True)
    )
    done = run("tool-jobs/job_output", {"job_id": started["job_id"], "wait": True, "timeout_ms": 10000})
    assert done["status"] == "exited" and "rc=1" in done["output"]
    assert listing(outside) == [] and (workspace / "job-inside").exists()


@needs_landlock
def test_persistent_shell_is_confined(run, workspace, outside):
    first = run("tool-bash-persistent/bash", {"command": f"cd {outside}; touch escaped; echo rc=$?"})
    again = run("tool-bash-persistent/bash", {"command": "pwd; python3 -c \"open('py', 'w')\"; echo rc=$?"})
    run("tool-bash-persistent/bash", {"command": f"touch {workspace}/inside"})
    assert "rc=1" in first["output"] and str(outside) in again["output"] and "rc=1" in again["output"]
    assert listing(outside) == [] and (workspace / "inside").exists()


@needs_landlock
def test_writable_roots_widen_workspace_write_only(run, workspace, outside):
    command = f"touch {outside}/allowed; echo rc=$?"
    assert "rc=0" in run("tool-bash/bash", bash(command), writable_roots=(str(outside),))["output"]
    (outside / "allowed").unlink()
    assert "rc=1" in run("tool-bash/bash", bash(command), sandbox="read-only", writable_roots=(str(outside),))["output"]
    assert listing(outside) == []


def test_danger_full_access_is_unconfined(run, outside):
    run("tool-bash/bash", bash(f"touch {outside}/free"), sandbox="danger-full-access")
    assert (outside / "free").exists()


# ---------------------------------------------------------------- network


@pytest.fixture
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


def connect(port: int) -> str:
    return (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); "
        "print('connected')\"; echo rc=$?"
    )


@needs_landlock
@needs_netns
def test_network_off_refuses_a_loopback_listener(run, listener):
    result = run("tool-bash/bash", bash(connect(listener)))
    assert "connected" not in result["output"] and "rc=1" in result["output"]
    persistent = run("tool-bash-persistent/bash", {"command": connect(listener)})
    assert "connected" not in persistent["output"]


@needs_landlock
def test_network_allow_reaches_the_listener(run, listener):
    assert "connected" in run("tool-bash/bash", bash(connect(listener)), network=True)["output"]


# ---------------------------------------------------------------- failing closed


def absent(**changes) -> Probe:
    return PROBE.replace(**changes)


def test_missing_landlock_fails_closed_and_runs_nothing(run, workspace, monkeypatch):
    monkeypatch.setattr("dshc.runtime.sandbox.confine.probe", lambda: absent(landlock_abi=0))
    with pytest.raises(ToolError) as caught:
        run("tool-bash/bash", bash(f"touch {workspace}/ran"))
    assert caught.value.code == "SANDBOX_UNAVAILABLE" and "Landlock" in caught.value.message
    with pytest.raises(ToolError) as persistent:
        run("tool-bash-persistent/bash", {"command": f"touch {workspace}/ran"})
    assert persistent.value.code == "SANDBOX_UNAVAILABLE"
    assert not (workspace / "ran").exists()
    # the explicit opt-out runs it bare
    run("tool-bash/bash", bash(f"touch {workspace}/ran"), sandbox_fallback=True)
    assert (workspace / "ran").exists()


def test_missing_namespaces_fail_closed_only_when_the_network_is_off(run, workspace, monkeypatch):
    found = absent(landlock_abi=max(PROBE.landlock_abi, 1), network_namespace=False)
    monkeypatch.setattr("dshc.runtime.sandbox.confine.probe", lambda: found)
    with pytest.raises(ToolError) as caught:
        run("tool-bash/bash", bash("true"))
    assert caught.value.code == "SANDBOX_UNAVAILABLE" and "namespaces" in caught.value.message
    if PROBE.landlock_abi >= 1:
        assert run("tool-bash/bash", bash("echo ok"), network=True)["output"] == "ok\n"


def test_unknown_mode_and_missing_bwrap_fail_closed(tmp_path):
    conf = Confinement("workspace-write", str(tmp_path), str(tmp_path), backend="bwrap")
    with pytest.raises(sandbox.SandboxUnavailable, match="bubblewrap"):
        plan(conf, ["true"], 3, absent(bwrap=None))
    with pytest.raises(sandbox.SandboxUnavailable):
        plan(conf.replace(mode="workspace-writ"), ["true"], 3, PROBE)


@needs_landlock
def test_a_launcher_that_cannot_confine_runs_nothing(run, workspace, tmp_path):
    # the probe says yes but the child cannot build its rules: a writable root it cannot open
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(ToolError) as caught:
        run("tool-bash/bash", bash(f"touch {workspace}/ran"), writable_roots=(str(loop),))
    assert caught.value.code == "SANDBOX_UNAVAILABLE" and "cannot confine" in caught.value.message
    assert not (workspace / "ran").exists()


# ---------------------------------------------------------------- escalation through dshc run


def dshc_run(workspace: Path, calls: list[dict], *flags: str) -> tuple[int, list[dict]]:
    calls_file = workspace.parent / "calls.jsonl"
    calls_file.write_text("".join(json.dumps(c) + "\n" for c in calls))
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(calls_file), "--workspace", str(workspace), "--json", *flags], out, err)
    return code, [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


@needs_landlock
@pytest.mark.parametrize("approve, escaped", [("once", True), ("never", False)])
def test_escalation_runs_wider_only_when_approved(workspace, outside, approve, escaped):
    calls = [
        {"id": "plain", "name": "bash", "arguments": bash(f"touch {outside}/plain; echo rc=$?")},
        {
            "id": "wide",
            "name": "bash",
            "arguments": bash(
                f"touch {outside}/wide; echo rc=$?", sandbox_permissions="danger-full-access", justification="test"
            ),
        },
        {"id": "after", "name": "bash", "arguments": bash(f"touch {outside}/after; echo rc=$?")},
    ]
    _, results = dshc_run(workspace, calls, "--policy", "workspace-write", "--approve", approve)
    by_id = {r["id"]: r for r in results}
    assert (outside / "wide").exists() is escaped
    assert by_id["wide"]["isError"] is (not escaped)
    # the wider mode is for that call only
    assert not (outside / "plain").exists() and not (outside / "after").exists()


# ---------------------------------------------------------------- nothing outlives dshc


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the supervisor (a child subreaper) is Linux-only")
def test_kill_9_of_dshc_leaves_no_process_behind(workspace, tmp_path):
    pids = workspace / "pids"
    command = (
        f"sleep 300 & echo $! >> {pids}; setsid sleep 301 & echo $! >> {pids}; "
        f"(trap '' HUP TERM; sleep 302) & echo $! >> {pids}; wait"
    )
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"id": "c1", "name": "bash", "arguments": bash(command)}) + "\n")
    # the supervisor is the same in every mode; without an OS sandbox only full access runs a shell
    policy = "danger-full-access" if NO_OS_SANDBOX else "workspace-write"
    dshc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from dshc.cli.main import entry; entry()",
            "run",
            str(calls),
            "--workspace",
            str(workspace),
            "--policy",
            policy,
            "--approve",
            "never",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (not pids.exists() or len(pids.read_text().split()) < 3):
            time.sleep(0.05)
        started = [int(p) for p in pids.read_text().split()]
        assert len(started) == 3 and all(psutil.pid_exists(p) for p in started)
    finally:
        dshc.send_signal(signal.SIGKILL)
        dshc.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(p) for p in started):
        time.sleep(0.05)
    assert [p for p in started if _alive(p)] == []


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_escaped_session_does_not_outlive_a_returned_call(run, tmp_path):
    pid_file = tmp_path / "pid"
    run("tool-bash/bash", bash(f"setsid sleep 300 & echo $! > {pid_file}"), sandbox="danger-full-access")
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


# ---------------------------------------------------------------- other mechanisms, pinned


def test_seatbelt_profile_is_pinned():
    text = seatbelt.profile(
        ["/Users/dev/project", "/private/tmp/dshc-tmp-x", "/Users/dev/.cache/pip"],
        ["/dev/null", "/dev/tty"],
        network=False,
    )
    assert text == (GOLDEN / "workspace-write.sb").read_text()
    assert seatbelt.profile(["/p"], [], network=True).count("(allow network*)") == 1
    # a quote in a path cannot close the string and add a rule
    assert '"/a\\") (allow file-write* (subpath \\"/\\")"' in seatbelt.profile(
        ['/a") (allow file-write* (subpath "/")'], [], False
    )


def test_seatbelt_launch_on_macos(tmp_path):
    found = absent(platform="darwin", sandbox_exec="/usr/bin/sandbox-exec", landlock_abi=0)
    launch = plan(Confinement("read-only", str(tmp_path), "/tmp/t"), ["/bin/bash", "-c", "x"], 3, found)
    assert launch.mechanism == "seatbelt" and launch.argv[:2] == ["/usr/bin/sandbox-exec", "-p"]
    assert launch.argv[3:] == ["/bin/bash", "-c", "x"] and '(subpath "/tmp/t")' in launch.argv[2]
    assert f'(subpath "{tmp_path}")' not in launch.argv[2]


def test_bwrap_command_line(tmp_path):
    conf = Confinement("workspace-write", str(tmp_path), str(tmp_path), backend="bwrap")
    launch = plan(conf, ["/bin/true"], 3, absent(bwrap="/usr/bin/bwrap"))
    assert launch.mechanism == "bwrap"
    tail = launch.argv[launch.argv.index("/usr/bin/bwrap") :]
    assert tail == [
        "/usr/bin/bwrap",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--bind",
        str(tmp_path),
        str(tmp_path),
        "--unshare-net",
        "--unshare-pid",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--",
        "/bin/true",
    ]


@pytest.mark.skipif(PROBE.bwrap is None, reason="bubblewrap (`bwrap`) is not installed")
def test_bwrap_confines_for_real(run, workspace, outside, listener):
    result = run("tool-bash/bash", bash(f"touch {outside}/x; echo rc=$?; touch inside"), sandbox_backend="bwrap")
    assert "rc=1" in result["output"] and listing(outside) == [] and (workspace / "inside").exists()
    run("tool-bash/bash", bash("touch inside-ro"), sandbox="read-only", sandbox_backend="bwrap")
    assert not (workspace / "inside-ro").exists()
    assert "connected" not in run("tool-bash/bash", bash(connect(listener)), sandbox_backend="bwrap")["output"]
    assert (
        "connected" in run("tool-bash/bash", bash(connect(listener)), sandbox_backend="bwrap", network=True)["output"]
    )


@pytest.mark.parametrize("approve, escaped", [("once", True), ("never", False)])
def test_file_write_escalation_widens_only_when_approved(workspace, outside, approve, escaped):
    target = outside / "note.txt"
    calls = [
        {
            "id": "wide",
            "name": "write",
            "arguments": {
                "file_path": str(target),
                "content": "x",
                "sandbox_permissions": "danger-full-access",
                "justification": "test",
            },
        },
        {"id": "plain", "name": "write", "arguments": {"file_path": str(outside / "plain.txt"), "content": "x"}},
    ]
    _, results = dshc_run(workspace, calls, "--policy", "workspace-write", "--approve", approve)
    assert target.exists() is escaped
    # without `sandbox_permissions` the call asks as the escalation the sandbox needs: approved, it runs escalated
    assert (outside / "plain.txt").exists() is escaped and results[1]["isError"] is not escaped


@pytest.mark.skipif(PROBE.landlock_abi < 6, reason="Landlock scopes need ABI 6")
def test_confined_processes_cannot_signal_outside_their_sandbox(run):
    victim = subprocess.Popen(["sleep", "30"])
    try:
        result = run("tool-bash/bash", bash(f"kill -TERM {victim.pid}; echo rc=$?"))
        assert "rc=1" in result["output"] and victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


@needs_landlock
@pytest.mark.parametrize("approve, escaped", [("once", True), ("never", False)])
def test_an_escalation_is_asked_even_where_a_rule_allows_the_call(workspace, outside, tmp_path, approve, escaped):
    # the rule allows `bash`; leaving the sandbox is a decision of its own, put to whoever answers asks
    # (anthropics/claude-code#13583, #34315: a retry outside the sandbox ran without a prompt)
    loose = tmp_path / "loose.dsh"
    loose.write_text("policy loose {\n  sandbox workspace-write\n  approval ask\n  default allow\n}\n")
    calls = [
        {
            "id": "wide",
            "name": "bash",
            "arguments": bash(
                f"touch {outside}/wide; echo rc=$?",
                sandbox_permissions="danger-full-access",
                justification="needs the home folder",
            ),
        }
    ]
    _, (result,) = dshc_run(workspace, calls, "--load", str(loose), "--policy", "loose", "--approve", approve)
    assert (outside / "wide").exists() is escaped
    assert result["isError"] is not escaped, result
    if not escaped:
        assert "asks to leave the policy's `workspace-write` sandbox" in result["content"], result


def test_an_escalation_names_the_refusal_that_prompted_it(workspace, outside, tmp_path):
    target = str(outside / "f.txt")
    write = {"file_path": target, "content": "x\n"}
    calls = [
        {"id": "first", "name": "write", "arguments": write},
        {
            "id": "retry",
            "name": "write",
            "arguments": {**write, "sandbox_permissions": "danger-full-access", "justification": "the file is outside"},
        },
    ]
    log = tmp_path / "events.jsonl"
    _, results = dshc_run(workspace, calls, "--policy", "workspace-write", "--approve", "never", "--log", str(log))
    by_id = {r["id"]: r for r in results}
    assert by_id["first"]["isError"] and by_id["retry"]["isError"] and not (outside / "f.txt").exists()
    decisions = [json.loads(line) for line in log.read_text().splitlines() if '"tool/decision"' in line]
    retry = next(d for d in decisions if d.get("callId") == "retry")
    assert (
        "prompted by call `first` (the `workspace-write` sandbox refuses writes outside the workspace)"
        in retry["reason"]
    ), retry
