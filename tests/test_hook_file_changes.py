"""A policy's sandbox reaches the file changes Claude Code makes itself (Write, Edit, MultiEdit, NotebookEdit).

Under `policy = "workspace-write"` the hook allowed Claude Code's Write of `~/.bashrc`: no rule names it (the
shipped policy leaves a change outside the workspace to the sandbox, which refuses it where dshc runs the
tool), and Claude Code writes the file itself. Now what a confined process could not change — anything under
`sandbox read-only`, a path outside the workspace (after `..` and links), what runs code later (.git/hooks,
.git/config, .claude, .vscode…), what configures the hook — is the wider change the policy asks a human
about, and a denial where approval is `never`. dshc's own file tools refuse the same paths at execution."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from conftest import claude_code_answer

from dshc.runtime.sandbox.files import change_refused, runs_later
from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext, ToolError

POLICIES = """
policy open_sandboxed "every change, in the sandbox" extends workspace-write {
}
policy locked "no prompts" extends workspace-write {
  approval never
}
policy looking "a read-only sandbox, rules that allow" {
  sandbox read-only
  default allow
}
policy wider "a writable root besides the workspace" extends workspace-write {
  writable "{outside}"
}
policy nosandbox "no sandbox line" {
  default allow
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    (root / "p.dsh").write_text(POLICIES.replace("{outside}", str(tmp_path / "shared")))
    return root


def hook(project: Path, policy: str, tool: str, **tool_input) -> dict:
    return claude_code_answer(project, policy, tool, tool_input, project / "src")


def write(project: Path, policy: str, path) -> dict:
    return hook(project, policy, "Write", file_path=path, content="x")


@pytest.mark.parametrize(
    "path",
    [
        "/root/.bashrc",
        "~/.bashrc",
        "../../outside.txt",
        "../.git/hooks/pre-commit",
        "../.git/config",
        "../.GIT/hooks/post-checkout",
        "../.claude/settings.json",
        "../.vscode/tasks.json",
        "../.mcp.json",
    ],
)
def test_a_change_a_confined_process_could_not_make_is_asked(project, path):
    answer = write(project, "open_sandboxed", path)
    assert answer["permissionDecision"] == "ask", answer
    assert "a human is asked to approve it" in answer["permissionDecisionReason"]


@pytest.mark.parametrize("path", ["../.dshc", "../p.dsh"])
def test_a_change_of_what_decides_the_policy_is_denied(project, path):
    # (tests/test_hook_project_trust.py: under any policy, with or without a sandbox)
    answer = write(project, "open_sandboxed", path)
    assert (
        answer["permissionDecision"] == "deny" and "decides this hook's policy" in answer["permissionDecisionReason"]
    ), answer


def test_a_link_inside_the_workspace_is_judged_where_it_leads(project, tmp_path):
    os.symlink(tmp_path / "shared" / "x.txt", project / "src" / "link.txt")
    answer = write(project, "open_sandboxed", "link.txt")
    assert answer["permissionDecision"] == "ask" and "is outside the workspace" in answer["permissionDecisionReason"]


def test_changes_inside_the_workspace_and_the_writable_roots_run(project, tmp_path):
    assert write(project, "open_sandboxed", "a.py")["permissionDecision"] == "allow"
    assert write(project, "open_sandboxed", "../.github/workflows/ci.yml")["permissionDecision"] == "allow"
    assert write(project, "wider", str(tmp_path / "shared" / "x.txt"))["permissionDecision"] == "allow"
    assert write(project, "wider", "/root/.bashrc")["permissionDecision"] == "ask"


def test_every_file_tool_is_judged(project):
    assert (
        hook(project, "open_sandboxed", "Edit", file_path="/etc/hosts", old_string="a", new_string="b")[
            "permissionDecision"
        ]
        == "ask"
    )
    assert (
        hook(project, "open_sandboxed", "MultiEdit", file_path="../.git/config", edits=[])["permissionDecision"]
        == "ask"
    )
    assert (
        hook(project, "open_sandboxed", "NotebookEdit", notebook_path="/tmp/n.ipynb", new_source="x")[
            "permissionDecision"
        ]
        == "ask"
    )
    # reading is not a change: the sandbox modes keep writes, and a confined process reads anywhere
    assert hook(project, "open_sandboxed", "Read", file_path="/etc/hosts")["permissionDecision"] == "allow"


def test_a_read_only_sandbox_asks_for_any_change(project):
    answer = write(project, "looking", "a.py")
    assert (
        answer["permissionDecision"] == "ask"
        and "`sandbox read-only` changes no file" in answer["permissionDecisionReason"]
    )


def test_where_approval_is_never_the_wider_change_is_denied(project):
    answer = write(project, "locked", "/root/.bashrc")
    assert answer["permissionDecision"] == "deny", answer
    assert write(project, "locked", "a.py")["permissionDecision"] == "allow"


def test_a_policy_without_a_sandbox_line_is_left_to_its_rules(project):
    assert write(project, "nosandbox", "/root/.bashrc")["permissionDecision"] == "allow"


@pytest.mark.parametrize("path", [["a", "b"], 3, "", "a\x00b"])
def test_a_path_that_cannot_be_judged_is_asked(project, path):
    assert write(project, "open_sandboxed", path)["permissionDecision"] in ("ask", "deny")


def test_the_judge_alone():
    assert change_refused("danger-full-access", "/ws", "/etc/passwd") is None
    assert change_refused("workspace-write", "/ws", "src/a.py") is None
    assert "outside the workspace" in change_refused("workspace-write", "/ws", "/ws/../etc/passwd")
    assert "not a mode" in change_refused("workspace-writ", "/ws", "src/a.py")  # an unknown mode refuses
    assert runs_later(".git/hooks") == ".git/hooks" and runs_later(".git/hooks/pre-commit") == ".git/hooks"
    assert runs_later(".gitignore") is None and runs_later(".git/objects/ab") is None
    assert runs_later(".claude-notes/x") is None and runs_later(".Claude/settings.json") == ".claude"


@pytest.fixture
def file_ctx(workspace, state):
    def make(mode="workspace-write"):
        return ToolContext(
            workspace=str(workspace), sandbox=mode, owner="agent-1", state=state, abort=threading.Event(), timeout_s=30
        )

    return make


@pytest.mark.parametrize("path", [".git/hooks/pre-commit", ".git/config", ".claude/settings.json", ".VSCODE/x.json"])
def test_dshc_s_own_write_tool_refuses_the_same_paths(file_ctx, workspace, path):
    with pytest.raises(ToolError) as refused:
        IMPLEMENTATIONS["tool-fs/write"]({"file_path": path, "content": "x"}, file_ctx())
    assert refused.value.code == "FS_SANDBOX_DENIED" and "runs code later" in refused.value.message
    assert "sandbox_permissions" in refused.value.message  # the escalation a human approves
    assert not (workspace / path).exists()
    IMPLEMENTATIONS["tool-fs/write"]({"file_path": path, "content": "x"}, file_ctx("danger-full-access"))
    assert (workspace / path).read_text() == "x"


def test_a_grep_of_a_file_a_read_rule_denies_is_denied(project):
    # Claude Code applies Read rules to Grep; dshc decides the grep tool's path as a read too
    (project / "p.dsh").write_text(
        POLICIES.replace("{outside}", "/tmp")
        + 'policy secrets "no .env" {\n  default allow\n  deny read when args.file_path matches "*.env"\n}\n'
    )
    assert hook(project, "secrets", "Grep", pattern="KEY", path="../.env")["permissionDecision"] == "deny"
    assert hook(project, "secrets", "Grep", pattern="KEY", path=".")["permissionDecision"] == "allow"
    assert hook(project, "secrets", "Read", file_path="../.env")["permissionDecision"] == "deny"


SEARCH_POLICIES = """policy quiet "says nothing of reads" {
  default deny
  allow grep
}
policy read-guard "a guard on reads" {
  default allow
  guard secrets: deny read when args.file_path matches "*.env"
}
"""


def test_a_search_is_a_read_only_where_the_policy_has_rules_on_reads():
    from dshc.compiler.program import Program
    from dshc.compiler.request import Request

    program = Program.load(texts={"s.dsh": SEARCH_POLICIES})
    quiet = Request(preset="standard", policy="quiet")
    assert program.decide(quiet, "grep", {"pattern": "x", "path": ".env"}, workspace="/ws").effect == "allow"
    guarded = Request(preset="standard", policy="read-guard")
    # the guard stage alone, as the runtime's pipeline runs it, fires for the file a search reads
    fired = program.guard(guarded, "grep", {"pattern": "x", "path": ".env"}, workspace="/ws")
    assert fired is not None and fired.reason == "guard `secrets` denies it"
    assert program.guard(guarded, "grep", {"pattern": "x", "path": "src"}, workspace="/ws") is None
