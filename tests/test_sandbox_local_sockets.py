"""With the network off, a sandboxed command opens no Unix socket either: a local daemon acts outside the
sandbox for whoever connects. `docker run -v /:/host …` through /var/run/docker.sock, or `systemd-run --user`
through the session bus, runs anything unconfined. A network namespace leaves pathname sockets reachable,
and Landlock's file rights do not cover connect(2).

Reports: GreyhavenHQ/greywall#55 (host sockets under /run reachable from a bubblewrap sandbox: "docker run
-v /:/host"), oalders/dot-files#1003 (Landlock mediates open(), not connect(AF_UNIX): the daemon answers
from every sandboxed session), eugene1g/agent-safehouse#19 (Seatbelt: a socket connect is
`network-outbound`, not a file operation), trpc-group/trpc-agent-go#2426 (a datagram socketpair can be
pointed at a pathname socket; io_uring opens sockets without socket(2)). Real processes throughout."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from dshc.runtime import sandbox
from dshc.runtime.sandbox import Probe, SandboxUnavailable, confinement_in, plan, seatbelt

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace, reason="needs Landlock and unprivileged user namespaces"
)
needs_bwrap = pytest.mark.skipif(PROBE.bwrap is None, reason="needs bubblewrap")

CONNECT = (
    "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}'); "
    "print('daemon:', s.recv(64).decode())\"; echo connect=$?"
)
# io_uring_setup(2) is syscall 425 on every architecture; -1 with errno EPERM when refused
IO_URING = (
    'python3 -c "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); '
    "params = ctypes.create_string_buffer(120); r = libc.syscall(425, 4, params); "
    "print('io_uring', r, os.strerror(ctypes.get_errno()) if r < 0 else 'opened')\""
)


@pytest.fixture
def daemon(tmp_path):
    """A Unix socket outside the workspace whose listener answers whoever connects, as dockerd would."""
    path = str(tmp_path / "daemon.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(4)
    server.settimeout(20)

    def serve():
        try:
            while True:
                client, _ = server.accept()
                client.sendall(b"root on the host\n")
                client.close()
        except OSError:
            return

    threading.Thread(target=serve, daemon=True).start()
    yield path
    server.close()


@needs_namespaces
@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
def test_a_daemon_socket_cannot_be_reached_with_the_network_off(run_bash, daemon, mode, state, workspace):
    import threading as threads
    from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext

    ctx = ToolContext(
        workspace=str(workspace), sandbox=mode, owner="agent-1", state=state, abort=threads.Event(), timeout_s=60
    )
    output = IMPLEMENTATIONS["tool-bash/bash"]({"command": CONNECT.format(path=daemon), "description": "t"}, ctx)[
        "output"
    ]
    assert "root on the host" not in output and "connect=0" not in output, output
    assert "Operation not permitted" in output, output


@needs_bwrap
def test_bubblewrap_keeps_the_socket_closed_too(run_bash, daemon):
    output = run_bash(CONNECT.format(path=daemon), sandbox_backend="bwrap")
    assert "root on the host" not in output and "Operation not permitted" in output, output


@needs_namespaces
def test_a_command_still_talks_to_its_own_children(run_bash):
    # a stream socketpair is anonymous: it reaches no one outside (pipes and subprocesses keep working)
    output = run_bash(
        "python3 -c \"import socket; a, b = socket.socketpair(); a.sendall(b'hi'); "
        "print('pair', b.recv(2).decode())\"; echo ok | cat"
    )
    assert "pair hi" in output and "ok" in output, output


@needs_namespaces
def test_a_datagram_pair_and_io_uring_are_refused(run_bash):
    output = run_bash(
        'python3 -c "import socket; socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)" 2>&1 | tail -1; ' + IO_URING
    )
    assert "PermissionError" in output, output
    assert "io_uring -1 Operation not permitted" in output, output


@needs_namespaces
def test_a_policy_that_allows_the_network_allows_local_sockets(run_bash, daemon):
    output = run_bash(CONNECT.format(path=daemon), network=True)
    assert "daemon: root on the host" in output and "connect=0" in output, output


def _found(**changes) -> Probe:
    return Probe(
        **{
            "platform": "linux",
            "landlock_abi": 3,
            "network_namespace": True,
            "bwrap": "/usr/bin/bwrap",
            "sandbox_exec": None,
            "seccomp": True,
            **changes,
        }
    )


def test_without_libseccomp_no_sandbox_can_be_promised(tmp_path):
    conf = confinement_in("workspace-write", str(tmp_path), "/tmp/t")
    with pytest.raises(SandboxUnavailable, match="libseccomp"):
        plan(conf, ["/bin/true"], 3, _found(seccomp=False))
    with pytest.raises(SandboxUnavailable, match="libseccomp"):
        plan(conf.replace(backend="bwrap"), ["/bin/true"], 3, _found(seccomp=False))
    assert (
        plan(conf.replace(fallback_unsandboxed=True), ["/bin/true"], 3, _found(seccomp=False)).mechanism
        == "unsandboxed"
    )
    # with the network on the filter still refuses device nodes, VSOCK and terminal input (test_sandbox_privilege)
    with pytest.raises(SandboxUnavailable, match="libseccomp"):
        plan(conf.replace(network=True), ["/bin/true"], 3, _found(seccomp=False))
    assert plan(conf.replace(network=True), ["/bin/true"], 3, _found()).mechanism == "landlock"


def test_the_launcher_is_told_to_close_local_sockets_only_with_the_network_off(tmp_path):
    conf = confinement_in("workspace-write", str(tmp_path), "/tmp/t")
    closed, opened = (
        plan(conf, ["/bin/true"], 3, _found()),
        plan(conf.replace(network=True), ["/bin/true"], 3, _found()),
    )
    assert closed.argv[6:8] == ["0", "0"] and opened.argv[6:8] == ["1", "1"]  # network, local sockets
    assert plan(conf.replace(backend="bwrap"), ["/bin/true"], 3, _found()).argv[6:8] == ["1", "0"]


def test_seatbelt_lets_no_socket_out_with_the_network_off():
    closed = seatbelt.profile(["/ws"], ["/dev/null"], False)
    assert "network" not in closed.replace("(deny default)", "")
    assert "(allow network*)" in seatbelt.profile(["/ws"], ["/dev/null"], True)


def test_the_probe_says_whether_libseccomp_loads():
    assert PROBE.seccomp is (os.path.exists("/proc/self/status") and _loads("libseccomp.so.2"))


def _loads(name: str) -> bool:
    import ctypes

    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def test_a_missing_libseccomp_is_said_and_installs_nothing(monkeypatch):
    from dshc.runtime.sandbox import seccomp

    monkeypatch.setattr(seccomp, "LIBRARY", "libseccomp-absent.so.0")
    assert not seccomp.available()
    with pytest.raises(seccomp.SeccompError, match="libseccomp is not installed"):
        seccomp.install(close_local_sockets=True)  # raises before any filter exists: this process stays as it was
