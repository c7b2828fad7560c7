"""A backslash-newline is dropped by bash before it splits words, but for where it is kept: in single quotes,
`$'…'`, a comment, a heredoc body with a quoted delimiter. The line is read a second time with every
continuation bash drops dropped; when the two readings differ, both count and the line is opaque. Held to
bash's own argv where the reading is not opaque."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from dshc.compiler.program import Program
from dshc.compiler.shell import analyse
from conftest import bash_effect

POLICY = """policy deny_rm "rm denied" {
  default allow
  deny bash when args.command matches "rm *"
}
policy allow_echo "echo allowed" {
  default deny
  allow bash when args.command matches "echo *"
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"continuations.dsh": POLICY})


@pytest.mark.parametrize(
    "command",
    [
        "r\\\nm -rf x",
        "echo 'x'; r\\\nm -rf x",
        "echo 'a\\\nb'; r\\\nm -rf x",
        "echo \\'r\\\nm -rf x\\'; r\\\nm y",
        'echo "\'"; r\\\nm -rf x',
        "echo a # c \\\nrm -rf x",  # a comment's backslash continues nothing: rm runs
        "cat <<'E'\na\\\nE\nr\\\nm x",
        "cat <<E\na\\\nE\nrm x\nE",
        "echo $'a\\\nb'; r\\\nm x",
    ],
)
def test_a_continuation_that_makes_a_denied_command_is_denied(program, command):
    assert bash_effect(program, "deny_rm", command) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "echo 'r\\\nm' x",
        "echo a # note \\\necho b",
        "cat <<'E' && echo done\na\\\nb\nE",
    ],
)
def test_a_continuation_bash_keeps_leaves_the_line_as_its_text_shows(program, command):
    found = analyse(command)
    assert found is not None and not any(s.opaque for s in found.segments), found
    if command.startswith("echo"):
        assert bash_effect(program, "allow_echo", command) == "allow"


LINES = [
    "echo 'r\\\nm' x",
    "echo r\\\nm x",
    'echo "a\\\nb" c',
    "echo \\'a\\\nb\\' c",
    'echo "\'"a\\\nb"\'"',
    "echo $'a\\\nb' c",
    "echo 'a'\\\n'b'",
    "echo a\\\\\necho b",  # an escaped backslash, then a newline
    "echo a # x \\\necho b",
    "echo 'it''s'\\\n x",
]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize("line", LINES)
def test_a_reading_that_is_not_opaque_is_bash_s(line):
    found = analyse(line)
    assert found is not None
    if any(s.opaque for s in found.segments):
        return  # refused: nothing to compare
    script = "echo() { printf '%s\\0' \"$@\"; printf '\\1'; }\n" + line
    out = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, check=True).stdout.decode()
    expected = [tuple(["echo", *part.split("\0")[:-1]]) for part in out.split("\1")[:-1]]
    assert [s.argv for s in found.segments] == expected, line
