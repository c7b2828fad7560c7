"""Claude Code's Grep over a folder reads every file below it: where the policy keeps some of them from
being read, the hook answers for them (cli/hook_search.py). Before, under `deny read … "*.env"` a Grep of
`.` was allowed and printed a `.env`'s lines (anthropics/claude-code#57525, anomalyco/opencode#17073); a
Grep whose own `glob` leaves such files out stays allowed (anthropics/claude-code#91778)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import claude_code_answer


POLICIES = """
policy secrets "files kept from being read" {
  default allow
  deny read when args.file_path matches "*.env"
  deny read when args.file_path matches "keys/**"
  ask read when args.file_path matches "*.pem"
  deny read when args.file_path matches "deploy/*.cfg"
  deny read when args.file_path matches "docs/private.txt"
}
policy open "no read rule" {
  default allow
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    for folder in ("src/app", "config", "keys/old", "certs", "deploy", "docs"):
        (root / folder).mkdir(parents=True)
    (root / "src/app/main.py").write_text("API_KEY = os.environ['API_KEY']\n")
    (root / "config/app.env").write_text("API_KEY=secret\n")
    (root / "keys/old/id").write_text("secret\n")
    (root / "certs/server.pem").write_text("secret\n")
    (root / "deploy/prod.cfg").write_text("secret\n")
    (root / "docs/readme.md").write_text("docs\n")
    (root / "docs/private.txt").write_text("API_KEY=x\n")
    (root / "p.dsh").write_text(POLICIES)
    return root


def grep(project: Path, policy: str = "secrets", cwd: str = "", **tool_input) -> dict:
    return claude_code_answer(project, policy, "Grep", {"pattern": "API_KEY", **tool_input}, project / cwd)


@pytest.mark.parametrize("path", [None, ".", "config", "keys"])
def test_a_search_over_a_folder_holding_a_denied_file_is_denied_naming_it(project, path):
    answer = grep(project, **({} if path is None else {"path": path}))
    assert answer["permissionDecision"] == "deny", answer
    assert "reads every file below it" in answer["permissionDecisionReason"]


def test_the_reason_names_the_files(project):
    reason = grep(project, path="config")["permissionDecisionReason"]
    assert "`app.env`" in reason and "leaves them out" in reason


def test_a_file_the_policy_asks_about_makes_the_search_ask(project):
    assert grep(project, path="certs")["permissionDecision"] == "ask"


def test_a_glob_rule_with_a_folder_is_matched_from_the_workspace_in_a_search_of_a_subfolder(project):
    assert grep(project, path="deploy")["permissionDecision"] == "deny"
    assert grep(project, cwd="deploy")["permissionDecision"] == "deny"


@pytest.mark.parametrize("path", ["src", "src/app", "src/app/main.py"])
def test_a_search_over_a_folder_without_such_files_is_allowed(project, path):
    assert grep(project, path=path)["permissionDecision"] == "allow"


@pytest.mark.parametrize("path", ["config/app.env", "keys/old"])
def test_a_search_of_a_denied_path_itself_is_denied_by_its_own_read(project, path):
    answer = grep(project, path=path)
    assert (
        answer["permissionDecision"] == "deny" and "reads every file below it" not in answer["permissionDecisionReason"]
    )


def test_the_searchs_own_glob_that_leaves_them_out_is_honoured(project):
    assert grep(project, path=".", glob="*.py")["permissionDecision"] == "allow"
    assert grep(project, path=".", glob="*.env")["permissionDecision"] == "deny"


@pytest.mark.parametrize("glob", ["*.{py,env}", "*.[e]nv", "config/*", "!*.md"])
def test_a_glob_not_read_here_leaves_every_file_counted(project, glob):
    assert grep(project, path=".", glob=glob)["permissionDecision"] == "deny"


def test_a_type_filter_is_not_read_and_every_file_counts(project):
    assert grep(project, path=".", type="py")["permissionDecision"] == "deny"


def test_a_policy_without_read_rules_is_not_searched(project):
    assert grep(project, policy="open", path=".")["permissionDecision"] == "allow"


def test_a_folder_too_large_to_look_through_is_refused(project, monkeypatch):
    monkeypatch.setattr("dshc.compiler.policy.protected.SEARCH_LIMIT", 1)
    answer = grep(project, path="src")
    assert answer["permissionDecision"] == "deny" and "too many" in answer["permissionDecisionReason"]


def test_a_literal_folder_the_policy_hides_below_the_search_counts(project):
    # the search's glob leaves the `*.env` files out; keys/old/id, under `keys/**`, is still read
    assert grep(project, path=".", glob="id")["permissionDecision"] == "deny"


def test_a_glob_without_a_wildcard_is_a_files_name(project):
    assert grep(project, path=".", glob="app.env")["permissionDecision"] == "deny"
    assert grep(project, path=".", glob="main.py")["permissionDecision"] == "allow"


def test_the_strictest_of_the_files_decides(project):
    (project / "certs" / "local.env").write_text("API_KEY=x\n")  # beside server.pem, which the policy asks about
    assert grep(project, path="certs")["permissionDecision"] == "deny"


def test_a_literal_file_the_policy_hides_below_the_search_counts(project):
    assert grep(project, path="docs")["permissionDecision"] == "deny"
    assert grep(project, path="docs", glob="*.md")["permissionDecision"] == "allow"
