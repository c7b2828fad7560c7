"""The hook trusts only the `.dshc` of the project folder it serves, and the agent cannot change what decides
its own policy.

The attack: a confined command (or a Write the hook allowed) plants `sub/.dshc` saying
`policy = "danger-full-access"`; once the agent's cwd is `sub/`, the hook read that file, the nearest `.dshc`
from the cwd up, and the next Bash call ran with no sandbox. Now the project folder Claude Code names
(`CLAUDE_PROJECT_DIR`, or the hook's `--workspace`) fixes which `.dshc` is read, and a `.dshc` that appears
between the cwd and that folder denies the call, naming the file. A Write, an Edit or a shell line that
writes a `.dshc` or a loaded declaration file is denied.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from dshc.cli.hook import main as hook_main

POLICIES = """
policy boxed "every command, in the sandbox" extends workspace-write {
}
policy open "no sandbox line" {
  default allow
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    (root / "p.dsh").write_text(POLICIES)
    (root / ".dshc").write_text('load = ["p.dsh"]\npolicy = "boxed"\n')
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    return root


def answer(cwd: Path, tool: str, argv=("claude-code",), **tool_input) -> dict:
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
    assert hook_main(list(argv), io.StringIO(json.dumps(event)), out, io.StringIO()) == 0
    return json.loads(out.getvalue())["hookSpecificOutput"]


def plant(folder: Path) -> Path:
    planted = folder / ".dshc"
    planted.write_text('policy = "danger-full-access"\n')
    return planted


def test_a_planted_dshc_below_the_project_folder_does_not_unconfine_bash(project):
    assert "updatedInput" in answer(project / "sub", "Bash", command="make", description="d")  # confined
    planted = plant(project / "sub")
    found = answer(project / "sub", "Bash", command="make", description="d")
    assert found["permissionDecision"] == "deny" and "updatedInput" not in found, found
    assert str(planted) in found["permissionDecisionReason"]
    assert "below the project folder" in found["permissionDecisionReason"]


def test_a_planted_dshc_deeper_down_or_in_the_cwd_of_any_tool_is_refused(project):
    deep = project / "sub" / "a" / "b"
    deep.mkdir(parents=True)
    planted = plant(project / "sub" / "a")
    found = answer(deep, "Read", file_path="x.txt")
    assert found["permissionDecision"] == "deny" and str(planted) in found["permissionDecisionReason"]


def test_the_hooks_workspace_flag_names_the_project_folder_too(project, monkeypatch):
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    planted = plant(project / "sub")
    found = answer(
        project / "sub", "Bash", ("claude-code", "--workspace", str(project)), command="make", description="d"
    )
    assert found["permissionDecision"] == "deny" and str(planted) in found["permissionDecisionReason"]


def test_where_claude_code_names_no_project_folder_the_outermost_dshc_is_the_projects(project, monkeypatch):
    # CLAUDE_PROJECT_DIR is missing in some hook processes (anthropics/claude-code#33815)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert "updatedInput" in answer(project / "sub", "Bash", command="make", description="d")
    planted = plant(project / "sub")
    found = answer(project / "sub", "Bash", command="make", description="d")
    assert found["permissionDecision"] == "deny" and str(planted) in found["permissionDecisionReason"], found


def test_outside_the_project_folder_its_own_file_still_decides(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plant(elsewhere)  # not on the way from the project folder up: never read
    found = answer(elsewhere, "Bash", command="make", description="d")
    assert found["permissionDecision"] == "allow" and "updatedInput" in found, found


def test_an_explicit_config_reads_no_other_file(project):
    plant(project / "sub")
    found = answer(
        project / "sub", "Bash", ("claude-code", "--config", str(project / ".dshc")), command="make", description="d"
    )
    assert found["permissionDecision"] == "allow" and "updatedInput" in found, found


@pytest.mark.parametrize("policy", ["boxed", "open"])
@pytest.mark.parametrize("target", ["sub/.dshc", ".dshc", "p.dsh", "sub/../.dshc"])
def test_the_agent_may_not_write_what_decides_its_policy(project, policy, target):
    (project / ".dshc").write_text(f'load = ["p.dsh"]\npolicy = "{policy}"\n')
    for tool, tool_input in (
        ("Write", {"file_path": target, "content": "x"}),
        ("Edit", {"file_path": target, "old_string": "a", "new_string": "b"}),
    ):
        found = answer(project, tool, **tool_input)
        assert found["permissionDecision"] == "deny", (tool, found)
        assert "decides this hook's policy" in found["permissionDecisionReason"]


@pytest.mark.parametrize("policy", ["boxed", "open"])
@pytest.mark.parametrize(
    "command", ["echo 'policy = \"danger-full-access\"' > sub/.dshc", "cp /tmp/x p.dsh", "tee -a .dshc < /dev/null"]
)
def test_a_shell_line_that_writes_what_decides_the_policy_is_denied(project, policy, command):
    (project / ".dshc").write_text(f'load = ["p.dsh"]\npolicy = "{policy}"\n')
    found = answer(project, "Bash", command=command, description="d")
    assert found["permissionDecision"] == "deny", found
    assert "decides this hook's policy" in found["permissionDecisionReason"]


def test_other_files_are_written_as_before(project):
    (project / ".dshc").write_text('load = ["p.dsh"]\npolicy = "open"\n')
    assert answer(project, "Write", file_path="sub/notes.dsh", content="x")["permissionDecision"] == "allow"
    assert answer(project, "Bash", command="echo x > sub/out.txt", description="d")["permissionDecision"] == "allow"
