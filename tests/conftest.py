"""Shared fixtures: the shipped program (loaded once), an in-process CLI runner, and a tool
session with a workspace and a folder outside it."""

from __future__ import annotations

import io
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from dshc.cli.main import main
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.runtime import sandbox
from dshc.runtime.tools import ToolState

# the hook trusts the project folder Claude Code names: a suite run from inside Claude Code must not inherit it
os.environ.pop("CLAUDE_PROJECT_DIR", None)

if os.environ.get("DSHC_TEST_NO_OS_SANDBOX"):
    # rehearse a host without Landlock, namespaces or bubblewrap (in-process calls only)
    _bare = sandbox.probe().replace(landlock_abi=0, network_namespace=False, bwrap=None)
    sandbox.probe = sandbox.confine.probe = lambda: _bare
    sandbox.probe_with = lambda *asked: _bare  # what decide and explain describe

# where this host cannot confine processes, tests about shell behaviour (not confinement) run
# them bare through the policy's explicit opt-out
NO_OS_SANDBOX = sandbox.missing(sandbox.Confinement("workspace-write", "/", "/")) is not None

# CI's example budget; `DSHC_HYPOTHESIS=thorough pytest` draws twice as many for the properties sized with
# `examples(n)` and for those that take the profile's count
THOROUGH = os.environ.get("DSHC_HYPOTHESIS") == "thorough"
settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", settings.get_profile("ci"), max_examples=120)
settings.load_profile("thorough" if THOROUGH else "ci")


def examples(thorough: int) -> int:
    """The examples a costly property draws: `thorough` in a thorough run, half of it (at least 10) in CI's."""
    return thorough if THOROUGH else max(10, thorough // 2)


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


def run_cli(*argv: str) -> CliResult:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def program() -> Program:
    return Program.load()


@pytest.fixture
def cli():
    return run_cli


def hook_project(tmp_path: Path, monkeypatch, policies: str, policy: str) -> Path:
    """A project folder whose `.dshc` loads `policies` and picks `policy`, with no event log, for hook tests."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "p.dsh").write_text(policies)
    (root / ".dshc").write_text(f'load = ["p.dsh"]\npolicy = "{policy}"\nlog = "off"\n')
    return root


def wait_for(condition, what: str, timeout_s: float = 30.0):
    """Poll `condition` until it returns something true (returned); past `timeout_s` the test fails naming `what`.
    For waiting on an event a test cannot be told of directly: a fixed sleep races a loaded machine."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {timeout_s:g}s waiting for {what}")
        time.sleep(0.02)


def request(**kwargs) -> Request:
    return Request(**kwargs)


def bash_by_both(program: Program, policy: str, command: str, workspace: str = "/ws") -> tuple:
    """A bash command's decisions by the policy index and by the reference evaluator (standard preset,
    host web): a test holds both to the effect it expects."""
    request = Request(preset="standard", host="web", policy=policy)
    args = {"command": command, "description": "d"}
    return (
        program.decide(request, "bash", args, workspace=workspace),
        program.decide_unindexed(request, "bash", args, workspace=workspace),
    )


def bash_effect(program: Program, policy: str, command: str) -> str:
    """A bash command's effect, the same by the policy index and by the reference evaluator."""
    by_index, by_evaluator = bash_by_both(program, policy, command)
    assert by_index.effect == by_evaluator.effect, command
    return by_index.effect


def tool_index(policy_text: str, tool: str, policy: str = "gen"):
    """The policy index of `tool` for a one-file program (the standard preset, host web): what a test of
    the index's shape inspects."""
    program = Program.load(texts={"p.dsh": policy_text})
    decider, definition, _ = program._decider_for(Request(preset="standard", host="web", policy=policy), tool)
    return decider.compiled.index(tool, definition)


@pytest.fixture
def state():
    s = ToolState()
    yield s
    s.close()


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def run_bash(workspace, state):
    """The runtime's bash tool in `workspace` under `sandbox workspace-write`: its output. Keyword
    arguments are the ToolContext's (`protected_roots`, `sandbox_backend`, another `sandbox`…)."""
    import threading
    from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext

    def call(command, **kwargs):
        ctx = ToolContext(
            **{
                "workspace": str(workspace),
                "sandbox": "workspace-write",
                "owner": "agent-1",
                "state": state,
                "abort": threading.Event(),
                "timeout_s": 60,
                **kwargs,
            }
        )
        return IMPLEMENTATIONS["tool-bash/bash"]({"command": command, "description": "t"}, ctx)["output"]

    return call


def run_git(cwd, *args) -> str:
    """git in `cwd` with a committer set, its output; a failure raises."""
    import subprocess

    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def git():
    return run_git


@pytest.fixture
def repo(workspace):
    """`workspace` as a git repository with one commit (a.txt)."""
    run_git(workspace, "init", "-q")
    (workspace / "a.txt").write_text("a\n")
    run_git(workspace, "add", "a.txt")
    run_git(workspace, "commit", "-qm", "one")
    return workspace


def claude_code_bash(project, command: str):
    """A Claude Code Bash call in `project` through a real `dshc hook claude-code` process: (its answer, and when
    it allows, the completed process of the command it hands back, run by `bash -c` as Claude Code runs it)."""
    import subprocess

    event = json.dumps(
        {
            "session_id": "s",
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_use_id": "toolu_1",
            "tool_input": {"command": command, "description": "d"},
        }
    )
    done = subprocess.run(
        [sys.executable, "-c", "from dshc.cli.entry import entry; entry()", "hook", "claude-code"],
        input=event,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=project,
    )
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    if answer["permissionDecision"] != "allow":
        return answer, None
    line = answer.get("updatedInput", {}).get("command", command)
    return answer, subprocess.run(["bash", "-c", line], cwd=project, capture_output=True, text=True, timeout=60)


def claude_code_answer(project: Path, policy: str, tool: str, tool_input: dict, cwd: Path) -> dict:
    """A Claude Code PreToolUse call through `dshc hook claude-code`, run in this process under `policy` of the
    project's p.dsh: the hook's `hookSpecificOutput`."""
    from dshc.cli.hook import main as hook_main

    (project / ".dshc").write_text(f'load = ["p.dsh"]\npolicy = "{policy}"\n')
    event = {
        "session_id": "s",
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": tool,
        "tool_use_id": "toolu_1",
        "tool_input": tool_input,
    }
    out = io.StringIO()
    assert hook_main(["claude-code"], io.StringIO(json.dumps(event)), out, io.StringIO()) == 0
    return json.loads(out.getvalue())["hookSpecificOutput"]


@pytest.fixture
def through_hook(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the hook's caches stay the test's
    return claude_code_bash


@pytest.fixture
def outside(tmp_path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    return out


RECURSION_LIMIT = sys.getrecursionlimit()


@pytest.fixture(autouse=True)
def _recursion_limit():
    """Every test starts at the interpreter's own recursion limit. hypothesis raises it while a property runs
    and leaves it raised when it cannot tell it may lower it again (a thread changed it meanwhile): a test
    that a too-deep value is refused (a log record, a structured result) then saw it read instead."""
    sys.setrecursionlimit(RECURSION_LIMIT)
    yield


@pytest.fixture(autouse=True)
def _state_home(tmp_path_factory, monkeypatch):
    """Every test's user state folder is the run's own: a hook with no log configured writes its log there."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.getbasetemp() / "state"))


@pytest.fixture
def private_state(tmp_path, monkeypatch) -> Path:
    """The user's cache and state folders inside the test's own: a hook's default event log lands there."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def http_reply(handler, code: int, body: bytes, content_type: str = "text/plain") -> None:
    """Answer a stdlib request handler's request with one whole body (a test's local HTTP server)."""
    handler.send_response(code)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
