"""A relative path in a Bash line is where the shell is: the hook's `cwd`, not the project root. Before, from
`a/b` the line `cat ../../secrets/key` was judged as the file `../../secrets/key` of the project root (outside
it) while Claude Code's Read of the same relative path was judged as `secrets/key`: the same file, two answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import claude_code_answer

POLICIES = """
policy keys "the project's keys are not read, nothing outside is written" {
  default allow
  deny read when args.file_path matches "secrets/**"
  deny write when args.file_path outside workspace
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    (root / "a" / "b").mkdir(parents=True)
    (root / "secrets").mkdir()
    (root / "secrets" / "key").write_text("secret\n")
    (root / "p.dsh").write_text(POLICIES)
    return root


def _answer(project: Path, tool: str, tool_input: dict, cwd: Path) -> str:
    return claude_code_answer(project, "keys", tool, tool_input, cwd)["permissionDecision"]


@pytest.mark.parametrize(
    "command",
    ["cat ../../secrets/key", "head -n1 ../../secrets/key", "cp ../../secrets/key /tmp/k", "cat < ../../secrets/key"],
)
def test_a_relative_read_from_a_subfolder_is_the_file_it_names(project, command):
    cwd = project / "a" / "b"
    assert _answer(project, "Read", {"file_path": "../../secrets/key"}, cwd) == "deny"
    assert _answer(project, "Bash", {"command": command}, cwd) == "deny"


def test_a_relative_write_leaving_the_project_from_a_subfolder_is_outside(project):
    cwd = project / "a" / "b"
    assert _answer(project, "Bash", {"command": "echo x > ../../../escaped.txt"}, cwd) == "deny"
    assert _answer(project, "Bash", {"command": "echo x > ../inside.txt"}, cwd) == "allow"


def test_the_same_line_at_the_root_names_other_files(project):
    # from the root, `../../secrets/key` is outside the project: not the project's key
    assert _answer(project, "Bash", {"command": "cat secrets/key"}, project) == "deny"
    assert _answer(project, "Bash", {"command": "cat a/b/notes.txt"}, project) == "allow"
