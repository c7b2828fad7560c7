"""`dshc hook cursor`: Cursor's beforeShellExecution / beforeMCPExecution / beforeReadFile hooks (cursor.com/docs/agent/hooks).

Shell and MCP answers are `{"permission": allow|deny|ask, "user_message", "agent_message"}`; a read's answer
is a permission only, allow or deny, so an ask there is a deny. Cursor cannot rewrite a shell command, so a
policy that declares a sandbox cannot confine it: such a command is denied, never run bare.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import hook_project
from dshc.cli.hook import main as hook_main

POLICIES = """
policy team "a team's rules" {
  sandbox danger-full-access
  approval ask
  default ask
  allow read when args.file_path inside workspace
  deny read when args.file_path matches "*.env"
  allow bash when args.command matches "ls *"
  deny bash when args.command matches "rm *"
  allow * when tool == "search_docs"
}
policy boxed "every command, in the sandbox" extends workspace-write {
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    return hook_project(tmp_path, monkeypatch, POLICIES, "team")


def cursor(project: Path, event: str, fields: dict, *flags: str) -> dict:
    payload = {
        "hook_event_name": event,
        "conversation_id": "conv-1",
        "generation_id": "gen-1",
        "workspace_roots": [str(project)],
        **fields,
    }
    out = io.StringIO()
    assert hook_main(["cursor", *flags], io.StringIO(json.dumps(payload)), out, io.StringIO()) == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize(
    "command, permission", [("ls -la", "allow"), ("ls && rm -rf /", "deny"), ("make deploy", "ask")]
)
def test_shell_commands_get_the_policys_decision(project, command, permission):
    answer = cursor(project, "beforeShellExecution", {"command": command, "cwd": str(project)})
    assert answer["permission"] == permission
    assert (
        answer["agent_message"].startswith(f"dshc: {permission}:") and answer["user_message"] == answer["agent_message"]
    )


def test_reads_allow_or_deny_only(project):
    assert cursor(project, "beforeReadFile", {"file_path": str(project / "a.txt"), "content": "x"}) == {
        "permission": "allow"
    }
    assert cursor(project, "beforeReadFile", {"file_path": str(project / "src" / ".env"), "content": "K=1"}) == {
        "permission": "deny"
    }
    assert cursor(project, "beforeReadFile", {"file_path": "/etc/hostname", "content": "h"}) == {"permission": "deny"}


def test_mcp_calls_are_decided_by_the_rules_naming_them(project):
    allowed = cursor(
        project,
        "beforeMCPExecution",
        {"tool_name": "search_docs", "tool_input": '{"q": "x"}', "command": "npx docs-server"},
    )
    assert allowed["permission"] == "allow"
    other = cursor(project, "beforeMCPExecution", {"tool_name": "drop_table", "tool_input": {"t": "users"}})
    assert other["permission"] == "ask"  # no rule names it: the project's `unmapped` setting


def test_a_sandboxed_policy_denies_what_cursor_cannot_confine(project):
    answer = cursor(project, "beforeShellExecution", {"command": "ls -la", "cwd": str(project)}, "--policy", "boxed")
    assert answer["permission"] == "deny" and "cannot" in answer["agent_message"]


def test_other_events_and_bad_input(project):
    assert cursor(project, "afterFileEdit", {"file_path": str(project / "a"), "edits": []}) == {}
    out = io.StringIO()
    assert hook_main(["cursor"], io.StringIO("[1]"), out, io.StringIO()) == 0
    assert json.loads(out.getvalue())["permission"] == "deny"
