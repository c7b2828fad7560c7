"""`python -m venv DIR` writes DIR and every file below it (a module whose effect on files is known, as data:
`tree_writing_modules`), so a write deny stops it as it stops `mkdir`; other modules stay the program's own
code, for the sandbox to contain."""

from __future__ import annotations

import pytest

from dshc.compiler.program import Program
from dshc.compiler.request import Request

POLICY = """\
policy agent-config "Writes of the agent's settings denied" {
  default allow
  deny write when args.file_path matches ".claude/*"
}
"""


@pytest.fixture(scope="module")
def program():
    return Program.load(texts={"p.dsh": POLICY})


@pytest.mark.parametrize(
    "line, effect",
    [
        ("python3 -m venv .claude/hooks", "deny"),
        ("python3 -mvenv .claude/hooks", "deny"),
        ("python3 -m venv --clear --prompt p .claude/x", "deny"),
        ("python3.12 -m venv .claude/x", "deny"),
        ("python3 -m virtualenv .claude/x", "deny"),
        ('python3 -m venv "$D"', "deny"),  # $D may be .claude/…
        ("python3 -m venv .venv", "allow"),
        ("python3 -m http.server", "allow"),
    ],
)
def test_a_venv_writes_the_tree_it_makes(program, line, effect):
    request = Request(preset="standard", policy="agent-config")
    assert program.decide(request, "bash", {"command": line, "description": "d"}, "/ws").effect == effect, line
