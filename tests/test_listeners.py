"""The HTTP listeners (`dshc serve --http`, `dshc ui`): Host and Origin checked on every route, remote binds only
with --allow-remote and a token, addresses refused with a diagnostic, and a deadline for a request's headers.

The attacks are DNS rebinding and cross-site requests (a page on another site posting to a local server; see
the MCP transport's "DNS rebinding" security warning and CVE-2025-49596, MCP Inspector's unauthenticated local
proxy) and slowloris (a client that trickles its headers to hold a connection open).
"""

from __future__ import annotations

import io
import socket
import threading
import time

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from dshc.cli import listener
from dshc.cli.main import main
from http_serve import free_port, serving

BASH = "policy openbash extends workspace-write {\n  allow bash\n}\n"
TOKEN = "t0ken-for-the-listener-tests-0123456789"
ACCEPT = "application/json, text/event-stream"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def _tools_call(command: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": command, "description": "x"}, "_meta": META},
    }


def _mcp_headers(**extra) -> dict:
    return {
        "Accept": ACCEPT,
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "bash",
        **extra,
    }


# --- the address ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv, words",
    [
        (["--http", "127.1:8765"], "127.0.0.1"),  # the C resolver's shorthand for 127.0.0.1
        (["--http", "0x7f.1:8765"], "127.0.0.1"),
        (["--http", "::1:8765"], "brackets"),
        (["--http", "[::1:8765"], "HOST:PORT"),
        (["--http", "[::1]8765"], "HOST:PORT"),
        (["--http", "[127.0.0.1]:8765"], "127.0.0.1"),
        (["--http", "127.0.0.1:99999"], "PORT 1-65535"),
        (["--http", "127.0.0.1:٨٧"], "HOST:PORT"),  # Arabic-Indic digits pass str.isdigit
        (["--http", "example.com:8765"], "not an IP address"),
        (["--http", "0.0.0.0:8765"], "not a loopback address"),  # all interfaces
        (["--http", "[::]:8765"], "not a loopback address"),
        (["--http", "127.0.0.1:8765", "--token-file", "/nonexistent/token"], "cannot read the token file"),
        (["--allow-remote"], "apply to --http only"),
    ],
)
def test_an_unusable_address_is_a_diagnostic_not_a_traceback(tmp_path, argv, words, monkeypatch):
    monkeypatch.delenv(listener.TOKEN_ENV, raising=False)
    err = io.StringIO()
    assert main(["serve", *argv, "--workspace", str(tmp_path)], io.StringIO(), err) == 2
    assert "DSH405" in err.getvalue() and words in err.getvalue() and "Traceback" not in err.getvalue()


def test_a_busy_port_is_a_diagnostic_not_a_traceback(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        err = io.StringIO()
        argv = ["serve", "--http", f"127.0.0.1:{taken.getsockname()[1]}", "--workspace", str(tmp_path)]
        assert main(argv, io.StringIO(), err) == 2
    assert "cannot listen on 127.0.0.1:" in err.getvalue() and "Traceback" not in err.getvalue()


def test_a_remote_bind_needs_allow_remote_and_a_long_enough_token(tmp_path, monkeypatch):
    monkeypatch.delenv(listener.TOKEN_ENV, raising=False)
    remote = listener.parse_address("0.0.0.0:8765")
    assert remote.remote and not listener.parse_address("127.0.0.2:8765").remote
    with pytest.raises(listener.DshError, match="not a loopback address"):
        listener.listener_token(remote, False, None, {listener.TOKEN_ENV: TOKEN})
    with pytest.raises(listener.DshError, match="needs a token"):
        listener.listener_token(remote, True, None, {})
    with pytest.raises(listener.DshError, match="at least 16"):
        listener.listener_token(remote, True, None, {listener.TOKEN_ENV: "short"})
    (tmp_path / "token").write_text(TOKEN + "\n")
    assert listener.listener_token(remote, True, str(tmp_path / "token"), {}) == TOKEN
    assert listener.listener_token(remote, True, None, {listener.TOKEN_ENV: TOKEN}) == TOKEN
    local = listener.parse_address("LOCALHOST:8765")
    assert (local.host, local.remote) == ("127.0.0.1", False)
    assert listener.listener_token(local, False, None, {}) is None  # loopback: a token is optional
    assert listener.parse_address("[::1]:8765").url_host == "[::1]"


# --- the guard, in process -----------------------------------------------------------------
def _app(token=None, hosts=()):
    async def ok(request):
        return PlainTextResponse("ran")

    app = Starlette(
        routes=[
            Route("/mcp", ok, methods=["GET", "POST"]),
            Route("/v1/decide", ok, methods=["POST"]),
            Route("/healthz", ok),
        ]
    )
    return listener.Guard(app, token, hosts)


@pytest.mark.parametrize(
    "dialled, host, origin, status",
    [
        ("127.0.0.2:8765", "127.0.0.2:8765", None, 200),
        ("127.0.0.2:8765", "localhost:8765", "http://localhost:8765", 200),
        ("127.0.0.2:8765", "LOCALHOST:8765", "http://127.0.0.1:8765", 200),  # names are case-insensitive
        ("127.0.0.2:8765", "[::1]:8765", None, 200),
        ("127.0.0.2:8765", "evil.example:8765", None, 400),  # DNS rebinding: evil.example resolved to 127.0.0.2
        ("127.0.0.2:8765", "127.0.0.2:9999", None, 400),  # another port is another origin
        ("127.0.0.2:8765", "127.0.0.2", None, 400),  # no port: 80
        ("127.0.0.2:8765", "127.0.0.2:8765", "http://evil.example", 403),  # another site's page
        ("127.0.0.2:8765", "127.0.0.2:8765", "null", 403),
        ("127.0.0.2:8765", "127.0.0.2:8765", "http://127.0.0.2:8765.evil.example", 403),
        ("127.0.0.2:8765", "127.0.0.2:8765", "http://user@127.0.0.2:8765", 403),
        ("127.0.0.1:80", "127.0.0.1", "http://localhost", 200),
        ("10.1.2.3:8765", "10.1.2.3:8765", None, 200),  # a wildcard bind answers to the address dialled
        ("10.1.2.3:8765", "localhost:8765", None, 400),  # ... and not to loopback names from outside
        ("10.1.2.3:8765", "evil.example:8765", None, 400),
    ],
)
def test_host_and_origin_must_name_the_listener_on_every_route(dialled, host, origin, status):
    client = TestClient(_app(), base_url=f"http://{dialled}")
    headers = {"host": host, **({"origin": origin} if origin else {})}
    for path in ("/mcp", "/v1/decide"):
        answer = client.post(path, headers=headers)
        assert answer.status_code == status, (path, answer.text)
        assert (answer.text == "ran") == (status == 200)


def test_a_token_guards_every_route_but_the_probes():
    client = TestClient(_app(TOKEN), base_url="http://10.1.2.3:8765")
    assert client.post("/v1/decide").status_code == 401
    assert client.post("/mcp", headers={"authorization": "Bearer wrong"}).status_code == 401
    assert client.post("/mcp", headers={"authorization": f"Bearer {TOKEN}"}).text == "ran"
    assert client.get("/healthz").text == "ran"
    assert client.get("/healthz", headers={"host": "evil.example:8765"}).status_code == 400


def test_named_proxy_hosts_are_answered_too():
    client = TestClient(_app(hosts=("dshc.internal:443",)), base_url="http://127.0.0.1:8765")
    ok = {"host": "dshc.internal:443", "origin": "https://dshc.internal:443"}
    assert client.post("/mcp", headers=ok).text == "ran"
    assert client.post("/mcp", headers={"host": "dshc.internal"}).status_code == 400


# --- the real server -----------------------------------------------------------------------
@pytest.mark.parametrize("address", ["127.0.0.2", "LOCALHOST", "[::1]"])
def test_a_foreign_host_or_origin_runs_no_tool(tmp_path, address):
    """The attack of the report: `serve --http` on 127.0.0.2/LOCALHOST ran bash for any Host and Origin."""
    if address == "[::1]" and not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    (tmp_path / "p.dsh").write_text(BASH)
    with serving(
        ["--load", str(tmp_path / "p.dsh"), "--policy", "openbash", "--workspace", str(tmp_path)],
        tmp_path,
        host=address,
    ) as (base, _):
        here = base.split("//", 1)[1]
        foreign = [
            {"Host": "evil.example", "Origin": "http://evil.example"},
            {"Host": here, "Origin": "http://evil.example"},
            {"Host": f"evil.example:{here.rsplit(':', 1)[1]}"},
        ]
        with httpx.Client(base_url=base, timeout=30) as client:
            for index, headers in enumerate(foreign):
                marker = tmp_path / f"foreign-{index}"
                answer = client.post("/mcp", json=_tools_call(f"touch {marker}"), headers=_mcp_headers(**headers))
                assert answer.status_code in (400, 403) and not marker.exists(), answer.text
                decided = client.post("/v1/decide", json={"tool": "read", "args": {}}, headers=headers)
                assert decided.status_code in (400, 403)
            marker = tmp_path / "own"  # the same request from the server's own origin runs: the attack was real
            answer = client.post(
                "/mcp", json=_tools_call(f"touch {marker}"), headers=_mcp_headers(Origin=f"http://{here}")
            )
            assert answer.status_code == 200 and marker.exists(), answer.text


def test_all_interfaces_with_allow_remote_answer_only_the_token_and_the_dialled_address(tmp_path):
    """`0.0.0.0` ran bash for any Host and Origin; now it needs --allow-remote and a token, and checks both."""
    (tmp_path / "p.dsh").write_text(BASH)
    (tmp_path / "token").write_text(TOKEN + "\n")
    args = [
        "--load",
        str(tmp_path / "p.dsh"),
        "--policy",
        "openbash",
        "--workspace",
        str(tmp_path),
        "--allow-remote",
        "--token-file",
        str(tmp_path / "token"),
    ]
    with serving(args, tmp_path, host="0.0.0.0") as (base, _):
        here = base.split("//", 1)[1]
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        refused = [
            ({}, 401),
            ({**bearer, "Origin": "http://evil.example"}, 403),
            ({**bearer, "Host": f"evil.example:{here.rsplit(':', 1)[1]}"}, 400),
        ]
        with httpx.Client(base_url=base, timeout=30) as client:
            for index, (headers, status) in enumerate(refused):
                marker = tmp_path / f"refused-{index}"
                answer = client.post("/mcp", json=_tools_call(f"touch {marker}"), headers=_mcp_headers(**headers))
                assert answer.status_code == status and not marker.exists(), answer.text
            marker = tmp_path / "with-token"
            answer = client.post("/mcp", json=_tools_call(f"touch {marker}"), headers=_mcp_headers(**bearer))
            assert answer.status_code == 200 and marker.exists(), answer.text


def test_a_token_from_the_environment_guards_mcp_and_the_decision_api(tmp_path):
    (tmp_path / "p.dsh").write_text(BASH)
    with serving(
        ["--load", str(tmp_path / "p.dsh"), "--policy", "openbash", "--workspace", str(tmp_path)],
        tmp_path,
        env={listener.TOKEN_ENV: TOKEN},
    ) as (base, _):
        with httpx.Client(base_url=base, timeout=30) as client:
            marker = tmp_path / "no-token"
            answer = client.post("/mcp", json=_tools_call(f"touch {marker}"), headers=_mcp_headers())
            assert answer.status_code == 401 and not marker.exists()
            read = {"tool": "read", "args": {"file_path": "a.txt"}}
            assert client.post("/v1/decide", json=read).status_code == 401
            bearer = {"Authorization": f"Bearer {TOKEN}"}
            assert client.post("/v1/decide", json=read, headers=bearer).status_code == 200


# --- slowloris -----------------------------------------------------------------------------
@pytest.fixture()
def timely_server():
    """An in-process uvicorn with the listeners' protocol and a short header deadline, on a loopback port."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(
        _app(), host="127.0.0.1", port=port, log_level="warning", lifespan="off", http=listener.timely_protocol(0.5)
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield port
    server.should_exit = True
    thread.join(10)


def test_a_client_trickling_its_headers_is_cut_off(timely_server):
    port = timely_server
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        closed = False
        for index in range(300):  # one header line every 0.1 s, never the blank line that ends them
            try:
                sock.sendall(f"X-Slow-{index}: 1\r\n".encode())
            except OSError:  # reset or broken pipe: the server hung up
                closed = True
                break
            sock.settimeout(0.1)
            try:
                if sock.recv(1) == b"":
                    closed = True
                    break
            except socket.timeout:
                continue
            except OSError:
                closed = True
                break
        assert closed


def test_prompt_requests_are_answered(timely_server):
    port = timely_server
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        assert client.get("/healthz").text == "ran"
        assert client.get("/healthz").text == "ran"  # the deadline restarts for the next request
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:  # headers in two quick parts
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        sock.sendall(b"Connection: close\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
