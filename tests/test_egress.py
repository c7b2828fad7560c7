"""The egress proxy of a policy's host lists: its decisions on real loopback connections (HTTP, CONNECT, the TLS
server name), and a sandboxed command that reaches only it. Every server here listens on 127.0.0.1; a refused
target is a name that resolves nowhere or an address the proxy refuses before connecting (a stand-in records
any attempt), so no packet leaves for it."""

from __future__ import annotations

import http.server
import json
import socket
import ssl
import threading

import pytest
from conftest import http_reply

from dshc.common.hosts import HostRules
from dshc.runtime import sandbox
from dshc.runtime.events import read_log
from dshc.runtime.sandbox import proxy
from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext
from dshc.runtime.tools.procs import denial_line

PROBE = sandbox.probe()
needs_netns = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace or not PROBE.seccomp,
    reason="Landlock, unprivileged user + network namespaces and libseccomp are needed",
)


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the stdlib's name
        http_reply(self, 200, f"page {self.path} host={self.headers.get('Host')}".encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def web():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def echo():
    """A TCP server on loopback that records what it receives and echoes it."""
    listener = socket.create_server(("127.0.0.1", 0))
    received = []

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                while data := conn.recv(4096):
                    received.append(data)
                    conn.sendall(data)

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1], received
    listener.close()


@pytest.fixture
def through(monkeypatch):
    """A proxy on loopback for given lists: (its port, the refusals it reported, the connections it opened)."""
    made = []

    def start(allow, deny=()):
        refused, opened = [], []

        def connect(address):
            opened.append(address)
            return socket.create_connection(address)

        listener = socket.create_server(("127.0.0.1", 0))
        made.append(listener)
        threading.Thread(
            target=proxy.serve,
            args=(listener, HostRules(allow, deny), lambda *seen: refused.append(seen), connect),
            daemon=True,
        ).start()
        return listener.getsockname()[1], refused, opened

    yield start
    for listener in made:
        listener.close()


def ask(port: int, request: bytes) -> bytes:
    with socket.socket() as conn:  # (an address, not a name: no lookup of the test's own)
        conn.settimeout(10)
        conn.connect(("127.0.0.1", port))
        conn.sendall(request)
        data = b""
        while chunk := conn.recv(4096):
            data += chunk
        return data


def test_an_allowed_host_is_reached_over_plain_http(through, web):
    port, refused, _ = through([("localhost",)])
    answer = ask(
        port,
        f"GET http://LOCALHOST.:{web}/x HTTP/1.1\r\nHost: localhost:{web}\r\n"
        f"Proxy-Connection: keep-alive\r\n\r\n".encode(),
    )
    assert answer.startswith(b"HTTP/1.0 200") and b"page /x" in answer and not refused


@pytest.mark.parametrize(
    "target",
    [
        "denied.invalid:80",
        "0xa9fea9fe:80",
        "2852039166:80",
        "[::ffff:a9fe:a9fe]:80",
        "169.254.169.254.:80",
        "evil.localhost:80",
    ],
)
def test_a_denied_host_is_refused_before_any_lookup(through, monkeypatch, target):
    port, refused, opened = through([("localhost",)], ["169.254.169.254"])
    looked_up = []
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: looked_up.append(a) or [])
    answer = ask(port, f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403") and b"dshc: network:" in answer
    assert refused and not opened and not looked_up


def test_a_name_resolving_to_a_denied_address_is_refused(through, web):
    port, refused, opened = through([("localhost",)], ["127.0.0.0/8", "::1"])
    answer = ask(port, f"GET http://localhost:{web}/ HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403") and b"127.0.0.1" in answer and not opened


@pytest.mark.parametrize(
    "request_head",
    [
        b"GET http://localhost:{web}/ HTTP/1.1\r\nHost: evil.invalid\r\n\r\n",  # Host names another server
        b"GET /relative HTTP/1.1\r\nHost: localhost\r\n\r\n",  # not a proxy request
        b"GET http://a@localhost@evil.invalid/ HTTP/1.1\r\n\r\n",  # two readings
        b"CONNECT localhost HTTP/1.1\r\n\r\n",  # no port
        b"GARBAGE\r\n\r\n",
    ],
)
def test_requests_with_no_single_host_are_refused(through, web, request_head):
    port, refused, opened = through([("localhost",)])
    answer = ask(port, request_head.replace(b"{web}", str(web).encode()))
    assert answer.startswith(b"HTTP/1.1 403") and refused and not opened


def test_a_connect_tunnel_to_an_allowed_host_carries_bytes(through, echo):
    echo_port, received = echo
    port, refused, _ = through([(f"localhost:{echo_port}",)])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(f"CONNECT localhost:{echo_port} HTTP/1.1\r\n\r\n".encode())
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
        conn.sendall(b"hello")
        assert conn.recv(4096) == b"hello"
    assert received == [b"hello"] and not refused


def client_hello(name: str) -> bytes:
    """The first TLS record a client sends for `name` (made in memory: nothing is dialled)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname=name)
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def test_server_name_reads_the_client_hello():
    assert proxy.server_name(client_hello("registry.npmjs.org")) == "registry.npmjs.org"
    assert proxy.server_name(b"GET / HTTP/1.1\r\n") is None and proxy.server_name(b"") is None
    assert proxy.server_name(b"\x16\x03\x01\x00\x10\x01\x00") == "?"


def test_a_tunnel_whose_tls_names_another_server_is_cut(through, echo):
    echo_port, received = echo
    port, refused, _ = through([("localhost",)])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(f"CONNECT localhost:{echo_port} HTTP/1.1\r\n\r\n".encode())
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
        conn.sendall(client_hello("evil.example"))
        assert conn.recv(4096) == b""  # closed, nothing forwarded
    assert received == [] and refused and "evil.example" in refused[0][0]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:  # its own name goes through
        conn.sendall(f"CONNECT localhost:{echo_port} HTTP/1.1\r\n\r\n".encode())
        conn.recv(4096)
        hello = client_hello("localhost")
        conn.sendall(hello)
        assert conn.recv(65536)
    assert received and received[0] == hello[: len(received[0])]


def test_a_client_hello_sent_along_with_connect_is_checked_too(through, echo):
    echo_port, received = echo
    port, refused, _ = through([("localhost",)])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(f"CONNECT localhost:{echo_port} HTTP/1.1\r\n\r\n".encode() + client_hello("evil.example"))
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
        assert conn.recv(4096) == b""
    assert received == [] and refused


def test_a_server_that_speaks_first_is_tunnelled(through):
    banner = socket.create_server(("127.0.0.1", 0))

    def greet():
        conn, _ = banner.accept()
        with conn:
            conn.sendall(b"SSH-2.0-test\r\n")
            conn.recv(100)

    threading.Thread(target=greet, daemon=True).start()
    port, refused, _ = through([("localhost",)])
    with banner, socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(f"CONNECT localhost:{banner.getsockname()[1]} HTTP/1.1\r\n\r\n".encode())
        answer = b""
        while b"SSH-2.0" not in answer and (chunk := conn.recv(4096)):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200") and not refused


# ---------------------------------------------------------------- a sandboxed command


@pytest.fixture
def confined(tmp_path, state):
    workspace = tmp_path / "ws"
    workspace.mkdir()

    def run(command, allow, deny=()):
        ctx = ToolContext(
            workspace=str(workspace),
            sandbox="workspace-write",
            owner="agent-1",
            state=state,
            abort=threading.Event(),
            timeout_s=60,
            network=True,
            network_allow=allow,
            network_deny=deny,
        )
        value = IMPLEMENTATIONS["tool-bash/bash"]({"command": command, "description": "test"}, ctx)
        return "\n".join([value["output"], *map(denial_line, value.get("network_denied", ()))])

    return run


PY = "python3 -c"


# a CONNECT through the proxy the environment names, as a tool that honours HTTPS_PROXY makes one
TUNNEL = """
import os, socket, sys
proxy = os.environ["HTTPS_PROXY"].rsplit(":", 1)
with socket.create_connection((proxy[0].split("//")[1], int(proxy[1])), timeout=10) as conn:
    conn.sendall(f"CONNECT localhost:{sys.argv[1]} HTTP/1.1\\r\\n\\r\\n".encode())
    assert conn.recv(4096).startswith(b"HTTP/1.1 200")
    conn.sendall(b"through")
    print("tunnel:", conn.recv(4096).decode())
"""


@needs_netns
def test_in_the_sandbox_only_the_proxy_leads_out(confined, web, echo, tmp_path):
    echo_port, received = echo
    outside = tmp_path / "outside.sock"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(outside))
    unix.listen(1)
    (tmp_path / "ws" / "tunnel.py").write_text(TUNNEL)
    script = (
        f"curl -fsS -m 10 http://localhost:{web}/via-proxy; echo; echo allowed=$?; "
        f"curl -fsS -m 10 http://denied.invalid/ ; echo denied=$?; "
        f"curl -fsS -m 5 --noproxy '*' http://127.0.0.1:{web}/direct; echo direct=$?; "
        f"python3 tunnel.py {echo_port}; "
        f"{PY} \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{outside}')\" 2>/dev/null; "
        f"echo unix=$?; "
        f"{PY} \"import socket; socket.getaddrinfo('dshc-egress-test.invalid', 80)\" 2>/dev/null; echo dns=$?; "
        "echo node=$NODE_USE_ENV_PROXY"
    )
    try:
        output = confined(script, [("localhost", f"localhost:{echo_port}")], ["169.254.169.254"])
    finally:
        unix.close()
    assert f"page /via-proxy host=localhost:{web}" in output and "allowed=0" in output
    assert "[network: refused `denied.invalid:80`" in output and "denied=0" not in output
    assert "page /direct" not in output and "direct=0" not in output
    assert "tunnel: through" in output and received == [b"through"]
    assert "unix=0" not in output and "unix=" in output
    assert "dns=0" not in output and "dns=" in output
    assert "node=1" in output  # Node's fetch is told to honour the proxy variables


# ---------------------------------------------------------------- through the Claude Code hook


@needs_netns
def test_the_hook_says_which_hosts_and_its_command_reaches_only_them(tmp_path, monkeypatch, web):
    import subprocess
    import sys

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "p.dsh").write_text(
        'policy egress extends workspace-write {\n  network allow "localhost"\n'
        '  network deny "169.254.169.254"\n  allow bash\n}\n'
    )
    (root / ".dshc").write_text('load = ["p.dsh"]\npolicy = "egress"\n')
    command = (
        f"curl -fsS -m 10 http://localhost:{web}/hooked; echo; echo allowed=$?; "
        f"curl -fsS -m 10 http://0xa9fea9fe/latest/; echo denied=$?"
    )
    event = json.dumps(
        {
            "session_id": "s",
            "cwd": str(root / "src"),
            "hook_event_name": "PreToolUse",
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_use_id": "t",
            "tool_input": {"command": command, "description": "d"},
        }
    )
    done = subprocess.run(
        [sys.executable, "-c", "from dshc.cli.entry import entry; entry()", "hook", "claude-code"],
        input=event,
        capture_output=True,
        text=True,
        timeout=120,
    )
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow"
    assert "network on for localhost only, never 169.254.169.254" in answer["permissionDecisionReason"]
    ran = subprocess.run(
        ["bash", "-c", answer["updatedInput"]["command"]], cwd=root / "src", capture_output=True, text=True, timeout=60
    )
    assert f"page /hooked host=localhost:{web}" in ran.stdout and "allowed=0" in ran.stdout
    assert "denied=0" not in ran.stdout and '"host": "169.254.169.254"' in ran.stderr


# ---------------------------------------------------------------- refusals in the event log


POLICY = (
    'policy egress extends workspace-write {\n  network allow "localhost"\n'
    '  network deny "169.254.169.254"\n  allow bash\n}\n'
)
FORGED = json.dumps({"event": "network/denied", "host": "forged.invalid", "port": 1, "reason": "forged"})
# every way the command could try to pass a line for the proxy's: its stderr (where the proxy once reported),
# each fd it holds, and each fd of the proxy's process, found as its launcher's parent
FORGE = (
    f"echo 'dshc: {FORGED}' >&2; "
    f"for fd in /proc/self/fd/*; do echo '{FORGED}' 2>/dev/null > $fd; done; "
    "proxy=$(awk '/^PPid/{print $2}' /proc/$PPID/status 2>/dev/null); "
    "if grep -qs egress.py /proc/$proxy/cmdline; then "
    f"  for fd in /proc/$proxy/fd/*; do echo '{FORGED}' 2>/dev/null > $fd; done; fi; "
)


@needs_netns
def test_refusals_are_logged_as_events_of_the_call_and_a_forged_line_is_not(cli, tmp_path, web):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "p.dsh").write_text(POLICY)
    command = (
        f"curl -fsS -m 10 http://localhost:{web}/ok; echo; "
        "curl -sS -m 10 http://denied.invalid/x; echo; "
        "curl -sS -m 10 -p http://169.254.169.254:8080/; echo; " + FORGE + "true"
    )
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps({"id": "c1", "name": "bash", "arguments": {"command": command, "description": "d"}}) + "\n"
    )
    log = tmp_path / "events.jsonl"
    result = cli(
        "run",
        str(calls),
        "--host",
        "web",
        "--load",
        str(tmp_path / "p.dsh"),
        "--policy",
        "egress",
        "--workspace",
        str(workspace),
        "--log",
        str(log),
        "--json",
    )
    assert result.code == 0, result.err
    answer = json.loads(result.out)
    assert "page /ok" in answer["content"]
    assert "[network: refused `denied.invalid:80`" in answer["content"]
    assert "[network: refused `169.254.169.254:8080`" in answer["content"]
    records = list(read_log(str(log)).records)
    denied = [record for record in records if record["type"].startswith("network/")]
    assert [(r["type"], r["callId"], r["host"], r["port"]) for r in denied] == [
        ("network/denied", "c1", "denied.invalid", 80),
        ("network/denied", "c1", "169.254.169.254", 8080),
    ]
    assert all(record["reason"] for record in denied)
    assert f"dshc: {FORGED}" in answer["content"]  # the forgery was printed, and stayed output
    kinds = [record["type"] for record in records if record.get("callId") == "c1"]
    assert kinds.index("tool/call") < kinds.index("network/denied") < kinds.index("tool/result")


@needs_netns
def test_a_command_with_no_refusal_logs_no_event(cli, tmp_path, web):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "p.dsh").write_text(POLICY)
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps(
            {
                "id": "c1",
                "name": "bash",
                "arguments": {
                    "command": f"curl -fsS -m 10 http://localhost:{web}/ok; " + FORGE + "true",
                    "description": "d",
                },
            }
        )
        + "\n"
    )
    log = tmp_path / "events.jsonl"
    result = cli(
        "run",
        str(calls),
        "--host",
        "web",
        "--load",
        str(tmp_path / "p.dsh"),
        "--policy",
        "egress",
        "--workspace",
        str(workspace),
        "--log",
        str(log),
        "--json",
    )
    assert result.code == 0, result.err
    assert "page /ok" in json.loads(result.out)["content"]
    assert not [record for record in read_log(str(log)).records if record["type"].startswith("network/")]


@needs_netns
def test_dshc_serve_logs_the_refusals_of_a_call_it_ran(tmp_path):
    import sys

    import anyio
    from mcp import Client, StdioServerParameters

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "p.dsh").write_text(POLICY)
    serve = StdioServerParameters(
        command=sys.executable,
        cwd=str(workspace),
        args=[
            "-c",
            "from dshc.cli.entry import entry; entry()",
            "serve",
            "--load",
            str(tmp_path / "p.dsh"),
            "--policy",
            "egress",
            "--workspace",
            str(workspace),
            "--log",
            str(tmp_path / "events.jsonl"),
        ],
    )
    answers = []

    async def main():
        async with Client(serve, mode="legacy") as client:
            ran = await client.call_tool(
                "bash", {"command": "curl -sS -m 10 http://denied.invalid/x; " + FORGE, "description": "d"}
            )
            answers.append("".join(getattr(block, "text", "") for block in ran.content))

    anyio.run(main)
    assert "[network: refused `denied.invalid:80`" in answers[0]
    records = list(read_log(str(tmp_path / "events.jsonl")).records)
    call = next(record["callId"] for record in records if record["type"] == "tool/call")
    assert [(r["callId"], r["host"], r["port"]) for r in records if r["type"].startswith("network/")] == [
        (call, "denied.invalid", 80)
    ]


def test_the_proxy_writes_a_bounded_number_of_refusals_and_counts_the_rest(tmp_path):
    import os
    import subprocess
    import sys

    from dshc.runtime.sandbox.probe import EGRESS
    from dshc.runtime.tools.procs import EgressEvents

    events = EgressEvents(
        sandbox.Confinement(
            "workspace-write", str(tmp_path), str(tmp_path), network=True, network_allow=(("localhost",),)
        )
    )
    assert events.fd >= 0
    here = os.path.dirname(EGRESS)
    # the proxy's process imports its siblings by file, as it runs: in a process of its own
    script = (
        f"import sys; sys.path.insert(0, {here!r}); import egress; r = egress.Reporter({events.fd}); "
        "[r('h.invalid', 80, 'no') for _ in range(egress.MAX_EVENTS + 3)]; r.close()"
    )
    subprocess.run([sys.executable, "-I", "-S", "-c", script], pass_fds=(events.fd,), check=True, timeout=60)
    found = events.read()
    events.close()
    assert found[:1] == [{"host": "h.invalid", "port": 80, "reason": "no"}] and found[-1] == {"dropped": 3}
    assert len(found) == 200 + 1 and denial_line(found[-1]) == "[network: 3 more connections refused]"


@needs_netns
def test_a_background_job_shows_its_refusals_once_it_is_over(tmp_path, state):
    from dshc.runtime.tools.jobs import render_output

    workspace = tmp_path / "ws"
    workspace.mkdir()
    ctx = ToolContext(
        workspace=str(workspace),
        sandbox="workspace-write",
        owner="agent-1",
        state=state,
        abort=threading.Event(),
        timeout_s=60,
        network=True,
        network_allow=(("localhost",),),
    )
    started = IMPLEMENTATIONS["tool-bash/bash"](
        {"command": "curl -sS -m 10 http://denied.invalid/", "description": "d", "run_in_background": True}, ctx
    )
    done = IMPLEMENTATIONS["tool-jobs/job_output"]({"job_id": started["job_id"], "wait": True}, ctx)
    assert done["status"] == "exited"
    assert [(event["host"], event["port"]) for event in done["network_denied"]] == [("denied.invalid", 80)]
    assert "[network: refused `denied.invalid:80`" in render_output({}, done)


@needs_netns
def test_in_the_sandbox_no_name_resolves_but_the_hosts_files(confined):
    # an allowed name too: the proxy looks names up outside; inside there is no resolver to reach
    output = confined(
        "getent hosts dshc-allowed.invalid; echo allowed=$?; getent hosts localhost; echo local=$?",
        [("dshc-allowed.invalid", "localhost")],
    )
    assert "allowed=2" in output and "local=0" in output
