"""A command substitution as an option's value (`git commit -m "$(cat <<'EOF' …)"`, the form Claude Code
writes every commit in) is a word of unknown text: the command is not opaque, and the substitution's own
commands are decided as ever. Anywhere else it is read as `$X` in its place is: unquoted it splits into words
that may be options (`git commit -m $(echo x --amend)`), and an option whose value's form decides what it does
(`curl -d @FILE`, `git commit -F FILE`, `git -c KEY=VALUE`) is decided as it is for a variable's value.

Reports: the guarded policy refused Claude Code's commit form (`unreadable-code`); anthropics/claude-code#2060
(the heredoc commit message form)."""

from __future__ import annotations

import pytest

from conftest import bash_by_both
from dshc.compiler.program import Program
from dshc.compiler.patterns import Pattern
from dshc.compiler.shell import analyse

_SUBSTITUTION = Pattern(r"\$\([^()]*\)")
COMMIT = "git commit -m \"$(cat <<'EOF'\nfix: handle empty input\n\nCo-Authored-By: x\nEOF\n)\""

POLICY = """
policy listed {
  default deny
  allow bash when args.command matches "git commit *" or args.command matches "git tag *"
  allow bash when args.command matches "cat" or args.command matches "date"
  deny bash when args.command matches "rm *"
  deny read when args.file_path matches "*.env"
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"p.dsh": POLICY})


@pytest.mark.parametrize(
    "command",
    [COMMIT, 'git commit -m "release $(date)"', 'git tag -a v1 -m "$(date)"', 'git commit --author "$(cat)" -m x'],
)
def test_a_substituted_message_is_text(program, command):
    assert not any(segment.opaque for segment in analyse(command).segments)
    indexed, reference = bash_by_both(program, "listed", command)
    assert indexed.effect == reference.effect == "allow", indexed.reason


@pytest.mark.parametrize("command", ['git commit -m "$(rm -rf ~)"', 'git commit -m "$(cat .env)"'])
def test_the_substitutions_own_commands_are_still_decided(program, command):
    indexed, reference = bash_by_both(program, "listed", command)
    assert indexed.effect == reference.effect == "deny", indexed.reason


@pytest.mark.parametrize(
    "command",
    [
        "git commit -m $(echo x --amend)",
        'git commit -F "$(cat)"',
        'git -c "$(cat)" status',
        'curl -d "$(cat)" https://example.org',
        'git commit -m "$(cat)"x"$(date)" --amend',
        'git commit -m "${X:-$(cat)}"',
        'git commit -m "$(cat)" -- "$(date)"',
    ],
)
def test_a_substitution_anywhere_else_is_read_as_a_variable_in_its_place(command):
    found, variable = analyse(command), analyse(_SUBSTITUTION.sub("$X", command))
    outer, twin = found.segments[0], variable.segments[0]
    assert (outer.opaque, bool(outer.hazard), outer.literal) == (twin.opaque, bool(twin.hazard), twin.literal)
    assert [(f.kind, f.pattern) for f in found.files] == [(f.kind, f.pattern) for f in variable.files]


def test_a_message_file_is_a_read():
    assert [(access.kind, access.path) for access in analyse("git commit -F .env").files] == [("read", ".env")]
