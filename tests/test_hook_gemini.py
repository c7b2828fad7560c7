"""`dshc hook gemini`: Gemini CLI's BeforeTool / AfterTool hook protocol (geminicli.com/docs/hooks/reference).

Sample payloads as the reference documents them (session_id, transcript_path, cwd, hook_event_name,
timestamp, tool_name, tool_input); the answer is `{"decision", "reason"}` with the same decision and
deciding rules the Claude Code hook gives for the same call, and an `ask` (which Gemini CLI hooks cannot
express) is a deny that says so.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import hook_project
from dshc.cli.hook import main as hook_main
from dshc.runtime import sandbox

POLICIES = """
policy team "a team's rules" {
  sandbox danger-full-access
  approval ask
  default ask
  allow read, glob, grep when args.file_path inside workspace or args.path inside workspace or not has args.path
  allow bash when args.command matches "ls *" or args.command matches "git status *"
  deny bash when args.command matches "rm *"
  allow edit, write when args.file_path matches "src/*"
  deny edit, write when args.file_path matches "*.env"
}
policy boxed "every command, in the sandbox" extends workspace-write {
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    return hook_project(tmp_path, monkeypatch, POLICIES, "team")


def _run(argv: list[str], payload) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    text = payload if isinstance(payload, str) else json.dumps(payload)
    code = hook_main(argv, io.StringIO(text), out, err)
    return code, out.getvalue(), err.getvalue()


def gemini(project: Path, tool: str, tool_input: dict, event: str = "BeforeTool", *flags: str) -> dict:
    code, out, _ = _run(
        ["gemini", *flags],
        {
            "session_id": "s1",
            "transcript_path": str(project / "t.json"),
            "cwd": str(project),
            "hook_event_name": event,
            "timestamp": "2026-01-01T00:00:00Z",
            "tool_name": tool,
            "tool_input": tool_input,
        },
    )
    assert code == 0
    return json.loads(out)


def claude(project: Path, tool: str, tool_input: dict) -> dict:
    code, out, _ = _run(
        ["claude-code"],
        {
            "session_id": "s1",
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "permission_mode": "default",
            "tool_name": tool,
            "tool_input": tool_input,
        },
    )
    assert code == 0
    return json.loads(out)["hookSpecificOutput"]


@pytest.mark.parametrize(
    "gemini_call, claude_call, decision",
    [
        (("run_shell_command", {"command": "ls -la"}), ("Bash", {"command": "ls -la"}), "allow"),
        (("run_shell_command", {"command": "ls && rm -rf /"}), ("Bash", {"command": "ls && rm -rf /"}), "deny"),
        (("read_file", {"absolute_path": "{root}/README.md"}), ("Read", {"file_path": "{root}/README.md"}), "allow"),
        (("read_file", {"path": "{root}/README.md"}), ("Read", {"file_path": "{root}/README.md"}), "allow"),
        (
            ("write_file", {"file_path": "{root}/src/a.py", "content": "x"}),
            ("Write", {"file_path": "{root}/src/a.py", "content": "x"}),
            "allow",
        ),
        (
            ("replace", {"file_path": "{root}/src/.env", "old_string": "a", "new_string": "b"}),
            ("Edit", {"file_path": "{root}/src/.env", "old_string": "a", "new_string": "b"}),
            "deny",
        ),
    ],
)
def test_same_decision_and_rules_as_the_claude_code_hook(project, gemini_call, claude_call, decision):
    fill = lambda d: {k: v.replace("{root}", str(project)) if isinstance(v, str) else v for k, v in d.items()}  # noqa: E731 - a one-line table helper
    answer = gemini(project, gemini_call[0], fill(gemini_call[1]))
    theirs = claude(project, claude_call[0], fill(claude_call[1]))
    assert answer["decision"] == theirs["permissionDecision"] == decision
    assert answer["reason"].split("decided by ")[-1] == theirs["permissionDecisionReason"].split("decided by ")[-1]


def test_an_ask_is_a_deny_that_says_so(project):
    answer = gemini(project, "run_shell_command", {"command": "make deploy"})
    assert answer["decision"] == "deny" and "cannot ask" in answer["reason"] and "dshc: ask" in answer["reason"]
    # a write outside the workspace: the policy asks, so Gemini CLI is told no
    assert gemini(project, "write_file", {"file_path": "/etc/cron.d/job", "content": "x"})["decision"] == "deny"


def test_relative_directory_is_the_projects(project):
    answer = gemini(project, "run_shell_command", {"command": "ls -la", "directory": "src"})
    assert answer["decision"] == "allow"
    assert "`workdir` is `src`" in answer["reason"]


def test_unmapped_tool_and_bad_input_deny(project):
    assert gemini(project, "save_memory", {"fact": "x"})["decision"] == "deny"  # no rule names it: ask → deny
    code, out, _ = _run(["gemini"], "{not json")
    assert code == 0 and json.loads(out)["decision"] == "deny" and "not JSON" in json.loads(out)["reason"]


def test_after_tool_and_other_events_answer_empty_json(project):
    assert gemini(project, "run_shell_command", {"command": "ls"}, "AfterTool") == {}
    assert gemini(project, "run_shell_command", {"command": "ls"}, "SessionStart") == {}


@pytest.mark.skipif(
    sandbox.probe().landlock_abi < 1 or not sandbox.probe().network_namespace,
    reason="needs Landlock and unprivileged user namespaces",
)
def test_a_sandboxed_policy_rewrites_the_shell_command(project):
    answer = gemini(project, "run_shell_command", {"command": "ls -la"}, "BeforeTool", "--policy", "boxed")
    assert answer["decision"] == "allow"
    rewritten = answer["hookSpecificOutput"]["tool_input"]["command"]
    assert rewritten != "ls -la" and "ls -la" in rewritten
