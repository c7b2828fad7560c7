"""The decision API and the MCP server answer concurrent clients as they answer one client at a time.

In process, eight clients post random decisions to the decision API's handler (threads switching between
nearly any two bytecodes, every cache one entry); against a real `dshc serve --http` with one-entry
request caches, REST and MCP clients call at once. Each answer is compared with a single-client run.
"""

from __future__ import annotations

import os
import random
import threading
from types import SimpleNamespace

import anyio
import httpx
from mcp import Client
from starlette.applications import Starlette
from starlette.testclient import TestClient

import threaded_decisions
from dshc.cli.decision_api import routes
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from http_serve import free_port, serving

CLIENTS = 8
SERVED = """policy served {
  sandbox workspace-write
  default allow
  deny read when args.file_path matches "*.env"
  ask grep when args.pattern matches "secret*"
}
"""  # what MCP clients are decided by: allowed, denied and asked calls (an ask no client answers is a deny)


def _context(request) -> dict:
    return {
        "preset": request.preset,
        "host": request.host,
        "platform": request.platform,
        "scope": request.scope,
        "plan": request.plan,
        "flags": sorted(request.flags),
        "policy": request.policy,
    }


def _bodies(seed: int, count: int) -> list[dict]:
    _, todo = threaded_decisions.jobs(seed, count)
    return [{"tool": tool, "args": args, "context": _context(request)} for request, tool, args in todo]


def _answers(post, bodies: list[dict], order) -> list[tuple]:
    """(position, status, body) for each body posted, in `order`."""
    found = []
    for i in order:
        got = post(bodies[i])
        found.append((i, got.status_code, got.json()))
    return found


def _clients_at_once(bodies: list[dict], post, seed: int) -> list[tuple]:
    """Every client posts every body in its own order; the answers each got (position, status, body)."""
    found, lock = [], threading.Lock()

    def client(number: int) -> None:
        order = list(range(len(bodies)))
        random.Random(seed + number).shuffle(order)
        mine = _answers(post, bodies, order)
        with lock:
            found.extend(mine)

    threaded_decisions.racing(CLIENTS, client)
    return found


def test_the_decision_api_handler_answers_eight_clients_as_one(monkeypatch, tmp_path):
    threaded_decisions.shrink_caches(monkeypatch.setattr)
    text, _ = threaded_decisions.jobs(5)
    bodies = _bodies(5, 60)
    single = Program.load(texts={"p.dsh": text})
    # the bodies name their own policies: a server started with --caller-context
    options = SimpleNamespace(workspace=str(tmp_path), caller_context=True)
    with TestClient(
        Starlette(routes=routes(SimpleNamespace(program=single, options=options, request=Request)))
    ) as http:
        expected = {
            i: (status, body)
            for i, status, body in _answers(lambda body: http.post("/v1/decide", json=body), bodies, range(len(bodies)))
        }
    assert {status for status, _ in expected.values()} <= {200, 400} and any(
        status == 200 for status, _ in expected.values()
    )
    shared = Program(single.resolved, single.sources, cache_size=1)
    with TestClient(
        Starlette(routes=routes(SimpleNamespace(program=shared, options=options, request=Request)))
    ) as http:
        found = _clients_at_once(bodies, lambda body: http.post("/v1/decide", json=body), 5)
    assert len(found) == CLIENTS * len(bodies)
    assert [(i, status, body) for i, status, body in found if (status, body) != expected[i]] == []


def _mcp_calls(ws) -> list[tuple[str, dict]]:
    return [
        (tool, args)
        for tool, args in (
            ("read", {"file_path": str(ws / "src" / "a.py")}),
            ("read", {"file_path": str(ws / ".env")}),
            ("glob", {"pattern": "**/*.py", "path": str(ws)}),
            ("grep", {"pattern": "secretKey", "path": str(ws)}),
            ("read", {"file_path": str(ws / "README.md")}),
            ("grep", {"pattern": "TODO", "path": str(ws / "src")}),
        )
    ]


async def _mcp_answers(url: str, calls: list, order) -> list[tuple]:
    found = []
    async with Client(url) as client:
        for i in order:
            result = await client.call_tool(*calls[i])
            text = "".join(block.text for block in result.content if getattr(block, "type", "") == "text")
            found.append((i, result.is_error, text))
    return found


def test_a_served_program_answers_rest_and_mcp_clients_at_once_as_one_client(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("secretKey = 1  # TODO\n")
    (tmp_path / ".env").write_text("TOKEN=x\n")
    (tmp_path / "README.md").write_text("TODO: docs\n")
    text, _ = threaded_decisions.jobs(9)
    (tmp_path / "p.dsh").write_text(text + SERVED)
    bodies = _bodies(9, 40)
    calls = _mcp_calls(tmp_path)
    env = {**os.environ, "DSHC_CACHE_SIZE": "1"}  # the server's per-request caches: one entry each
    with serving(
        [
            "--load",
            str(tmp_path / "p.dsh"),
            "--workspace",
            str(tmp_path),
            "--policy",
            "served",
            "--preset",
            "standard",
            "--caller-context",
        ],
        tmp_path,
        env=env,
    ) as (base, _):
        with httpx.Client(base_url=base, timeout=30) as http:
            expected = {
                i: (status, body)
                for i, status, body in _answers(
                    lambda body: http.post("/v1/decide", json=body), bodies, range(len(bodies))
                )
            }
        mcp_expected = {i: rest for i, *rest in anyio.run(_mcp_answers, base + "/mcp", calls, range(len(calls)))}
        mcp_found: list = []

        async def mcp_clients() -> None:
            async def one(number: int) -> None:
                order = list(range(len(calls))) * 3
                random.Random(number).shuffle(order)
                mcp_found.extend(await _mcp_answers(base + "/mcp", calls, order))

            async with anyio.create_task_group() as group:
                for number in range(3):
                    group.start_soon(one, number)

        mcp = threading.Thread(target=anyio.run, args=(mcp_clients,))
        mcp.start()
        with httpx.Client(base_url=base, timeout=30, limits=httpx.Limits(max_connections=CLIENTS)) as http:
            found = _clients_at_once(bodies, lambda body: http.post("/v1/decide", json=body), 9)
        mcp.join(60)
    assert len(found) == CLIENTS * len(bodies)
    assert [(i, status, body) for i, status, body in found if (status, body) != expected[i]] == []
    assert len(mcp_found) == 3 * 3 * len(calls)
    assert [(i, *rest) for i, *rest in mcp_found if rest != mcp_expected[i]] == []
    assert {is_error for is_error, _ in mcp_expected.values()} == {True, False}


def test_two_servers_share_one_port_with_reuse_port(tmp_path):
    """N instances behind one port: the second binds where the first listens, and either may answer."""
    port = free_port()
    args = ["--workspace", str(tmp_path), "--reuse-port"]
    with serving(args, tmp_path, port=port) as (base, first), serving(args, tmp_path, port=port) as (_, second):
        for _ in range(20):  # a new connection each: the kernel picks the instance
            got = httpx.post(base + "/v1/decide", json={"tool": "read", "args": {"file_path": "a"}})
            assert got.status_code == 200 and got.json()["decision"] in ("allow", "ask", "deny")
        assert first.poll() is None and second.poll() is None


def test_reuse_port_needs_http(cli, tmp_path):
    result = cli("serve", "--workspace", str(tmp_path), "--reuse-port")
    assert result.code == 2 and "--reuse-port needs --http" in result.err
