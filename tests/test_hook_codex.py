"""`dshc hook codex`: Codex's PreToolUse / PostToolUse hook protocol (openai/codex, codex-rs/hooks).

Codex reads a deny (`permissionDecision: "deny"` with a reason) and an allow that rewrites the input; it
treats `ask`, and an `allow` without `updatedInput`, as unsupported output and runs the call anyway, so the
hook never prints them: an allow prints nothing (Codex's own approval policy applies) and an ask is a deny
that says why. Payloads as codex-rs/hooks/src/events/pre_tool_use.rs serialises them.
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
  allow bash when args.command matches "ls *" or args.command matches "git status *"
  deny bash when args.command matches "rm *"
  allow edit, write when args.file_path matches "src/*"
  deny edit, write when args.file_path matches "*.env"
  allow * when tool == "mcp__docs__search"
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    return hook_project(tmp_path, monkeypatch, POLICIES, "team")


def codex(project: Path, tool: str, tool_input: dict, event: str = "PreToolUse") -> dict | None:
    payload = {
        "session_id": "019a0000-0000-7000-8000-000000000000",
        "turn_id": "t1",
        "transcript_path": None,
        "cwd": str(project),
        "hook_event_name": event,
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "call_1",
    }
    out = io.StringIO()
    assert hook_main(["codex"], io.StringIO(json.dumps(payload)), out, io.StringIO()) == 0
    text = out.getvalue().strip()
    return json.loads(text) if text else None


def test_a_deny_is_codex_deny_with_the_rules_reason(project):
    answer = codex(project, "Bash", {"command": "ls && rm -rf /"})["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse" and answer["permissionDecision"] == "deny"
    assert (
        answer["permissionDecisionReason"].startswith("dshc: deny:")
        and "team/deny@" in answer["permissionDecisionReason"]
    )


def test_an_allow_prints_nothing_so_codexs_own_approval_applies(project):
    assert codex(project, "Bash", {"command": "ls -la"}) is None
    assert codex(project, "mcp__docs__search", {"q": "x"}) is None


def test_an_ask_is_a_deny_because_codex_would_run_it(project):
    answer = codex(project, "Bash", {"command": "make deploy"})["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "cannot ask" in answer["permissionDecisionReason"]
    assert codex(project, "mcp__db__drop", {})["hookSpecificOutput"]["permissionDecision"] == "deny"  # unmapped


def test_apply_patch_in_the_command_field_is_decided_per_file(project):
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** End Patch\n"
    assert codex(project, "apply_patch", {"command": patch}) is None
    secret = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: src/.env\n+K=1\n*** End Patch\n"
    assert codex(project, "apply_patch", {"command": secret})["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_post_tool_use_and_bad_input(project):
    assert codex(project, "Bash", {"command": "ls"}, "PostToolUse") is None
    out = io.StringIO()
    assert hook_main(["codex"], io.StringIO("{not json"), out, io.StringIO()) == 0
    answer = json.loads(out.getvalue())["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "not JSON" in answer["permissionDecisionReason"]


def test_a_deferred_unmapped_tool_gets_no_answer_so_codexs_own_approval_decides(project):
    # only where the policy's own word is a permissive default: a default deny still denies it
    assert codex(project, "BrandNewTool", {})["hookSpecificOutput"]["permissionDecision"] == "deny"
    (project / "p.dsh").write_text('policy team {\n  default allow\n  deny bash when args.command matches "rm *"\n}\n')
    dshc = project / ".dshc"
    dshc.write_text(dshc.read_text() + 'unmapped = "defer"\n')
    assert codex(project, "BrandNewTool", {}) is None
    assert codex(project, "Bash", {"command": "rm -rf /"})["hookSpecificOutput"]["permissionDecision"] == "deny"
