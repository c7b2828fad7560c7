"""Rules no fact condition reads are summarised when the policy is indexed, and the decision whole
rule groups make (one group, or several that hold together) is shared by requests — save an `ask`
under approval `never` (the `child` scope's), which each such request concludes itself, naming
where `never` was set."""

from __future__ import annotations

import pytest

from dshc.compiler.program import Program
from dshc.compiler.request import Request

POLICY = """policy p "Fixed and conditional rules" {
  default deny
  ask read
  deny read when args.file_path matches "*.env"
  allow write
  deny write when args.file_path matches "/etc/*"
  ask write when args.file_path matches "*.sh" and scope == "root"
  ask write when args.file_path matches "build/*"
  ask glob
  allow skill when scope == "child"
  ask skill when platform == "linux"
  ask edit when scope == "child"
  deny edit when args.file_path matches "*.lock"
}
"""
CALLS = [
    ("read", {"file_path": "src/a.py"}),
    ("read", {"file_path": "prod.env"}),
    ("write", {"file_path": "a.txt"}),
    ("write", {"file_path": "/etc/passwd"}),
    ("write", {"file_path": "run.sh"}),
    ("write", {"file_path": "build/x.txt"}),
    ("write", {"file_path": "build/run.sh"}),
    ("glob", {"pattern": "*"}),
    ("skill", {"name": "x"}),
    ("edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}),
    ("edit", {"file_path": "Cargo.lock", "old_string": "a", "new_string": "b"}),
]


@pytest.fixture(scope="module")
def program():
    return Program.load(texts={"p.dsh": POLICY})


def _seen(decision):
    return decision.effect, decision.reason, decision.deciding


@pytest.mark.parametrize(
    "order", [("root", "child", "root"), ("child", "root", "child"), ("root/win32", "child", "child/win32", "root")]
)
def test_every_call_decides_as_trying_every_rule_whatever_request_came_first(order):
    program = Program.load(texts={"p.dsh": POLICY})  # its own: the shared decisions start unmade
    for where in order:
        scope, _, platform = where.partition("/")
        request = Request(preset="standard", policy="p", scope=scope, platform=platform or "linux")
        for name, args in CALLS:
            assert _seen(program.decide(request, name, args)) == _seen(program.decide_unindexed(request, name, args)), (
                where,
                name,
                args,
            )


def test_a_fixed_ask_under_approval_never_is_a_denial_naming_never(program):
    root = program.decide(Request(preset="standard", policy="p"), "glob", {"pattern": "*"})
    child = program.decide(Request(preset="standard", policy="p", scope="child"), "glob", {"pattern": "*"})
    again = program.decide(Request(preset="standard", policy="p"), "glob", {"pattern": "*"})
    assert (root.effect, child.effect, again.effect) == ("ask", "deny", "ask")
    assert [rule for rule, _ in child.deciding][-1] == "approval never"
    assert "approval never" not in [rule for rule, _ in again.deciding]


def test_requests_share_the_decision_of_fixed_rules_they_cannot_change(program):
    first = program.decide(Request(preset="standard", policy="p"), "write", {"file_path": "a.txt"})
    other = program.decide(
        Request(preset="standard", policy="p", scope="child", platform="darwin"), "write", {"file_path": "b.txt"}
    )
    assert first is other and first.effect == "allow"


def test_one_conditional_group_deciding_alone_is_shared_except_an_ask_under_never(program):
    child = program.decide(
        Request(preset="standard", policy="p", scope="child"),
        "edit",
        {"file_path": "a.py", "old_string": "a", "new_string": "b"},
    )
    assert child.effect == "deny" and [rule for rule, _ in child.deciding][-1] == "approval never"
    first = program.decide(
        Request(preset="standard", policy="p", scope="child", platform="win32"), "skill", {"name": "x"}
    )
    other = program.decide(
        Request(preset="standard", policy="p", scope="child", platform="darwin"), "skill", {"name": "y"}
    )
    assert first is other and first.effect == "allow"
