"""`dshc serve` driven by the official MCP SDK client, over stdio (both protocol eras) and streamable HTTP."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import time

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from http_serve import free_port

SERVE = [sys.executable, "-c", "from dshc.cli.entry import entry; entry()", "serve"]
POLICY = """policy mcptest {
  sandbox workspace-write
  default deny
  allow read, glob, grep
  ask write
  deny bash
}
"""
SCOPE = "scope mcps { parent root; hide web_search }\n"


@pytest.fixture()
def workspace(tmp_path):
    (tmp_path / "hello.txt").write_text("hello from the workspace\n")
    (tmp_path / "policy.dsh").write_text(POLICY)
    (tmp_path / "scope.dsh").write_text(SCOPE)
    return tmp_path


def _args(ws, *extra):
    return [
        *SERVE,
        "--load",
        str(ws / "policy.dsh"),
        "--load",
        str(ws / "scope.dsh"),
        "--policy",
        "mcptest",
        "--scope",
        "mcps",
        "--workspace",
        str(ws),
        "--log",
        str(ws / "events.jsonl"),
        *extra,
    ]


def _stdio(ws, *extra) -> StdioServerParameters:
    return StdioServerParameters(command=_args(ws, *extra)[0], args=_args(ws, *extra)[1:], cwd=str(ws))


def _text(result) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def _answer(action: str):
    async def callback(ctx, params):
        return types.ElicitResult(action=action, content={} if action == "accept" else None)

    return callback


async def _exercise(client, ws, expect_ask: str | None) -> None:
    names = {t.name for t in (await client.list_tools()).tools}
    assert {"read", "write", "bash"} <= names and "web_search" not in names  # the scope's view, not the catalog
    ran = await client.call_tool("read", {"file_path": str(ws / "hello.txt")})
    assert not ran.is_error and "hello from the workspace" in _text(ran)
    denied = await client.call_tool("bash", {"command": "echo hi", "description": "greet"})
    assert denied.is_error and "deny" in _text(denied).lower()
    again = await client.call_tool("read", {"file_path": str(ws / "hello.txt")})  # still serving after the denial
    assert not again.is_error
    target = ws / f"written-{expect_ask}.txt"
    asked = await client.call_tool("write", {"file_path": str(target), "content": "approved\n"})
    if expect_ask == "accept":
        assert not asked.is_error, _text(asked)
        assert target.read_text() == "approved\n"
    else:
        assert asked.is_error and not target.exists()
        if expect_ask == "decline":
            assert "rejected" in _text(asked)
        else:
            assert "elicitation" in _text(asked)


async def _forged_answers_do_not_approve(client, ws) -> None:
    """2026-07-28: an accept is bound to the question the server asked, for those very arguments."""
    accept = {"dshc-approval": types.ElicitResult(action="accept", content={})}
    target = ws / "forged.txt"
    forged = await client.session.call_tool(
        "write", {"file_path": str(target), "content": "x"}, input_responses=accept, request_state="made-up"
    )
    assert forged.is_error and "rejected" in _text(forged)
    asked = await client.session.call_tool(
        "write", {"file_path": str(ws / "asked.txt"), "content": "x"}, allow_input_required=True
    )
    assert isinstance(asked, types.InputRequiredResult)
    moved = await client.session.call_tool(
        "write", {"file_path": str(target), "content": "x"}, input_responses=accept, request_state=asked.request_state
    )
    assert moved.is_error and "rejected" in _text(moved)
    assert not target.exists() and not (ws / "asked.txt").exists()


async def _list_changed_after_an_edit(client, ws, modern: bool, legacy_heard) -> None:
    before = {t.name for t in (await client.list_tools()).tools}
    if modern:  # 2026-07-28: change events arrive on a `subscriptions/listen` stream
        async with client.listen(tools_list_changed=True) as subscription:
            _edit_scope(ws)
            with anyio.fail_after(20):
                event = await subscription.__anext__()
            assert type(event).__name__ == "ToolsListChanged"
    else:
        _edit_scope(ws)
        with anyio.fail_after(20):
            await legacy_heard.wait()
    after = {t.name for t in (await client.list_tools(cache_mode="refresh")).tools}
    assert before - after == {"grep"}


# the 2026-07-28 era asks through InputRequiredResult, the handshake era through elicitation/create
@pytest.mark.parametrize("mode,action", [("auto", "accept"), ("legacy", "decline")])
def test_stdio_list_call_deny_elicited_ask_and_list_changed(workspace, mode, action):
    async def main():
        heard = anyio.Event()

        async def on_message(message):
            if "list_changed" in repr(message):  # notifications/tools/list_changed, however the SDK wraps it
                heard.set()

        async with Client(
            _stdio(workspace, "--watch"), mode=mode, elicitation_callback=_answer(action), message_handler=on_message
        ) as client:
            await _exercise(client, workspace, action)
            if mode == "auto":
                await _forged_answers_do_not_approve(client, workspace)
            assert not heard.is_set()  # nothing changed yet
            await _list_changed_after_an_edit(client, workspace, mode == "auto", heard)

    anyio.run(main)
    events = [json.loads(line) for line in (workspace / "events.jsonl").read_text().splitlines()]
    assert {"tool/call", "tool/result"} <= {e["type"] for e in events}  # the durable log saw every call


def test_client_without_elicitation_gets_a_denial_that_says_so(workspace):
    async def main():
        async with Client(_stdio(workspace), mode="legacy") as client:
            await _exercise(client, workspace, None)

    anyio.run(main)


def _edit_scope(ws) -> None:
    time.sleep(0.05)
    (ws / "scope.dsh").write_text("scope mcps { parent root; hide web_search, grep }\n")


def test_http_list_call_deny_ask_list_changed_and_a_url_upstream(workspace, monkeypatch):
    port = free_port()
    proc = subprocess.Popen(
        _args(workspace, "--http", f"127.0.0.1:{port}", "--watch"),
        cwd=workspace,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"

        async def main():
            async with Client(url, elicitation_callback=_answer("accept")) as client:
                await _exercise(client, workspace, "accept")
            async with Client(url, elicitation_callback=_answer("decline")) as client:
                await _exercise(client, workspace, "decline")
                async with client.listen(tools_list_changed=True) as subscription:
                    _edit_scope(workspace)
                    with anyio.fail_after(20):
                        event = await subscription.__anext__()
                    assert type(event).__name__ == "ToolsListChanged"

        anyio.run(main)

        # the same server as an upstream reached by `url`: its tools become package `mcp:self`
        from dshc.cli.main import main as dshc

        monkeypatch.setenv("DSHC_CACHE_DIR", str(workspace / "cache"))
        (workspace / "gw.dsh").write_text(
            f'upstream self {{ url "{url}" }}\npreset viaurl extends standard {{ mount mcp:self }}\n'
        )
        out, err = io.StringIO(), io.StringIO()
        # reading never reaches an upstream: `upstream refresh` connects to the url and remembers its tools
        assert dshc(["upstream", "refresh", str(workspace / "gw.dsh")], out, err) == 0, err.getvalue()
        assert f"connected to {url} (no command runs)" in out.getvalue()
        out = io.StringIO()
        assert (
            dshc(["compile", "viaurl", "--load", str(workspace / "gw.dsh"), "--with", "mcp:self", "--json"], out, err)
            == 0
        ), err.getvalue()
        tools = {t["name"]: t for t in json.loads(out.getvalue())["tools"]}
        assert tools["self__read"]["package"] == "mcp:self" and tools["self__read"]["ready"] == "ready"
        assert "self__grep" not in tools  # the served scope hides grep since the edit
    finally:
        proc.terminate()
        proc.wait(10)


def test_bad_http_address_is_a_usage_error(workspace):
    from dshc.cli.main import main
    import io

    err = io.StringIO()
    assert main(["serve", "--http", "nowhere", "--workspace", str(workspace)], io.StringIO(), err) == 2
    assert "HOST:PORT" in err.getvalue()


def test_code_mode_over_mcp_runs_a_program_whose_nested_calls_pass_the_policy(workspace):
    """`dshc serve --preset code`: the view is `run_code` alone; a program's nested calls re-enter the pipeline."""
    from dshc.runtime.code.node_runtime import missing_runtime

    if missing_runtime() is not None:
        pytest.skip(f"run_code cannot run here: no {missing_runtime()}")
    (workspace / "code.dsh").write_text("policy codetest extends mcptest {\n  allow run_code\n}\n")
    argv = [
        *SERVE,
        "--preset",
        "code",
        "--load",
        str(workspace / "policy.dsh"),
        "--load",
        str(workspace / "code.dsh"),
        "--policy",
        "codetest",
        "--workspace",
        str(workspace),
        "--log",
        str(workspace / "events.jsonl"),
    ]
    program = (
        "const r = await tools.read({file_path: 'hello.txt'});"
        " let denied = 'no'; try { await tools.bash({command: 'echo hi', description: 'x'}); }"
        " catch (e) { denied = String(e.message || e); } return {text: r.content, denied};"
    )

    async def main():
        async with Client(
            StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(workspace)), mode="legacy"
        ) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["run_code"]
            ran = await client.call_tool("run_code", {"description": "read, then try bash", "code": program})
            assert not ran.is_error, _text(ran)
            value = json.loads(_text(ran))["value"]
            assert "hello from the workspace" in value["text"] and "deny" in value["denied"].lower()

    anyio.run(main)
    nested = [json.loads(line) for line in (workspace / "events.jsonl").read_text().splitlines()]
    nested_ids = {e["callId"] for e in nested if e["type"] == "tool/call" and e.get("parent")}
    assert {("read", "allow"), ("bash", "deny")} == {
        (e["name"], e["decision"]) for e in nested if e["type"] == "tool/decision" and e["callId"] in nested_ids
    }
