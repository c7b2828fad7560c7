"""The gateway against real upstream MCP servers from PyPI (`mcp-server-time`, `mcp-server-git`) as stdio subprocesses.

`dshc serve` is driven with the SDK's own client; the upstreams are the published packages, untouched.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys

import anyio
import psutil
import pytest
from mcp import Client, StdioServerParameters

pytest.importorskip("mcp_server_time")
pytest.importorskip("mcp_server_git")
if shutil.which("git") is None:
    pytest.skip("mcp-server-git needs the `git` program (Debian's git)", allow_module_level=True)

SERVE = [sys.executable, "-c", "from dshc.cli.entry import entry; entry()", "serve"]
# the time server, started only while FLAG is absent: how a test takes it down and brings it back
TIME_LAUNCHER = (
    "import os, sys; os.path.exists(sys.argv[1]) and sys.exit(3); "
    "sys.argv = ['mcp-server-time', '--local-timezone', 'UTC']; "
    "from mcp_server_time import main; main()"
)

CLOCK = f'upstream clock {{ command {json.dumps(sys.executable)} args ["-m", "mcp_server_time"] }}\n'


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    root = tmp_path_factory.mktemp("gateway")
    repo = root / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README").write_text("hello\n")
    subprocess.run(git + ["add", "README"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "first"], check=True)
    flag = root / "time-is-down"
    source = f"""
upstream time {{ command {json.dumps(sys.executable)} args ["-c", {json.dumps(TIME_LAUNCHER)}, {json.dumps(str(flag))}] }}
upstream git {{ command {json.dumps(sys.executable)} args ["-m", "mcp_server_git", "--repository", {json.dumps(str(repo))}] }}
preset gw extends standard {{ mount mcp:time; mount mcp:git }}
scope nogit {{ parent root; hide git__* }}
policy gwp {{
  sandbox workspace-write
  default deny
  allow package(mcp:time), git__git_status
  deny git__git_log
  ask risk(durable-state)
}}
"""
    (root / "gw.dsh").write_text(source)
    return root, repo, flag


def _text(result) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def test_explain_names_the_gate_for_an_upstream_tool_hidden_by_a_scope(gateway, monkeypatch):
    from dshc.cli.main import main

    root, _, _ = gateway
    monkeypatch.setenv("DSHC_CACHE_DIR", str(root / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "xdg"))  # (the sandbox's private temp folder)
    monkeypatch.chdir(root)
    out, err = io.StringIO(), io.StringIO()
    # reading never starts an upstream: `upstream refresh` lists its tools, in the sandbox (both answer here)
    assert main(["upstream", "refresh", str(root / "gw.dsh")], out, err) == 0, out.getvalue() + err.getvalue()
    out = io.StringIO()
    code = main(
        [
            "explain",
            "git__git_status",
            "gw",
            "--scope",
            "nogit",
            "--policy",
            "gwp",
            "--load",
            str(root / "gw.dsh"),
            "--json",
        ],
        out,
        err,
    )
    report = json.loads(out.getvalue())
    assert code == 1 and report["failed_gate"] == "visible", err.getvalue()
    assert report["gates"][1]["source"].startswith(str(root / "gw.dsh"))
    out = io.StringIO()  # at the root scope the same tool passes every gate the files decide
    assert (
        main(
            ["explain", "git__git_status", "gw", "--policy", "gwp", "--load", str(root / "gw.dsh"), "--json"], out, err
        )
        == 1
        and json.loads(out.getvalue())["failed_gate"] == "ready"
    )
    out = io.StringIO()  # and every gate, where the caller says it answers
    assert (
        main(
            [
                "explain",
                "git__git_status",
                "gw",
                "--policy",
                "gwp",
                "--load",
                str(root / "gw.dsh"),
                "--with",
                "mcp:git",
                "--json",
            ],
            out,
            err,
        )
        == 0
    )


def _own_descendant(marker: str) -> psutil.Process:
    """The upstream process this test's client started (through `dshc serve`), found by its command line."""
    for child in psutil.Process().children(recursive=True):
        try:
            if marker in " ".join(child.cmdline()):
                return child
        except psutil.NoSuchProcess:
            continue
    raise AssertionError(f"no process started with {marker}")


async def _until(check, timeout_s: float):
    with anyio.fail_after(timeout_s):
        while True:
            found = await check()
            if found is not None:
                return found
            await anyio.sleep(0.2)


def test_policies_hold_on_upstream_tools_and_a_killed_upstream_fails_gate_five_then_recovers(gateway):
    root, repo, flag = gateway
    params = StdioServerParameters(
        command=SERVE[0],
        args=SERVE[1:]
        + [
            "--preset",
            "gw",
            "--policy",
            "gwp",
            "--load",
            str(root / "gw.dsh"),
            "--workspace",
            str(root),
            "--log",
            str(root / "events.jsonl"),
            "--watch",
        ],
        env={"DSHC_CACHE_DIR": str(root / "cache")},
        cwd=str(root),
    )

    async def main():
        async with Client(params, mode="legacy") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"time__get_current_time", "git__git_status", "git__git_log", "git__git_commit"} <= names
            status = await client.call_tool("git__git_status", {"repo_path": str(repo)})
            assert not status.is_error and "branch" in _text(status).lower(), _text(status)
            log = await client.call_tool("git__git_log", {"repo_path": str(repo)})
            assert log.is_error and "deny" in _text(log).lower() and "first" not in _text(log)
            commit = await client.call_tool("git__git_commit", {"repo_path": str(repo), "message": "x"})
            # the only ask rule is `ask risk(durable-state)`: git_commit reaches it through its MCP annotations
            assert commit.is_error and "`ask`" in _text(commit) and "elicitation" in _text(commit)
            clock = await client.call_tool("time__get_current_time", {"timezone": "UTC"})
            assert not clock.is_error and "UTC" in _text(clock), _text(clock)

            flag.write_text("down")
            upstream = _own_descendant(str(flag))
            upstream.kill()
            upstream.wait(10)

            async def gate_five():
                result = await client.call_tool("time__get_current_time", {"timezone": "UTC"})
                return result if "gate `ready`" in _text(result) else None

            down = await _until(gate_five, 20)
            assert down.is_error and "server `time` is not answering" in _text(down)
            sibling = await client.call_tool("git__git_status", {"repo_path": str(repo)})
            assert not sibling.is_error  # one upstream down is not the whole server
            assert "time__get_current_time" in {t.name for t in (await client.list_tools()).tools}  # still listed

            flag.unlink()

            async def back():
                result = await client.call_tool("time__get_current_time", {"timezone": "UTC"})
                return result if not result.is_error else None

            await _until(back, 40)

            # an edit that declares and mounts another upstream: its tools arrive once it answers
            text = (root / "gw.dsh").read_text()
            text = text.replace("mount mcp:git }", "mount mcp:git; mount mcp:clock }").replace(
                "allow package(mcp:time)", "allow package(mcp:time), package(mcp:clock)"
            )
            (root / "gw.dsh").write_text(text + CLOCK)

            async def clock_listed():
                names = {t.name for t in (await client.list_tools(cache_mode="refresh")).tools}
                return names if "clock__get_current_time" in names else None

            await _until(clock_listed, 60)
            clock = await client.call_tool("clock__get_current_time", {"timezone": "UTC"})
            assert not clock.is_error, _text(clock)

    anyio.run(main)
    assert not (repo / ".git" / "refs" / "heads" / "x").exists()
    results = [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]
    assert any(r["type"] == "tool/result" and r.get("name") == "git__git_status" for r in results)
    # the gateway's log is evidence for `dshc suggest`: what the upstreams answered is allowed, pinned
    suggested = subprocess.run(
        SERVE[:-1] + ["suggest", "--from-log", str(root / "events.jsonl"), "--load", str(root / "gw.dsh"), "--json"],
        env={**os.environ, "DSHC_CACHE_DIR": str(root / "cache")},
        cwd=str(root),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert suggested.returncode == 0, suggested.stdout + suggested.stderr
    report = json.loads(suggested.stdout)
    rules = {(r["tool"], r["when"]) for r in report["suggested"]}
    assert ("git__git_status", f"args.repo_path == {json.dumps(str(repo))}") in rules
    assert ("time__get_current_time", 'args.timezone == "UTC"') in rules
    assert not any(tool in ("git__git_log", "git__git_commit") for tool, _ in rules)  # denied; asked, declined
    assert report["against"] == "gwp" and set(report["redecided"]["ran"]) == {"allow"}
