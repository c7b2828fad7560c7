"""A tool no rule names gets the policy's own answer (its default, else deny) without any per-request
work — except where the request changes that answer: a default of `ask` under approval `never`."""

from __future__ import annotations

import pytest

from dshc.compiler.program import Program
from dshc.compiler.request import Request


def _program(default: str) -> Program:
    text = f'policy p "Only bash is named" {{\n  default {default}\n  deny bash when args.command matches "rm *"\n}}\n'
    return Program.load(texts={"p.dsh": text})


@pytest.mark.parametrize("default", ["allow", "ask", "deny"])
@pytest.mark.parametrize("scope", ["root", "child"])
def test_the_same_answer_as_trying_every_rule(default, scope):
    program = _program(default)
    request = Request(preset="standard", policy="p", scope=scope)
    fast = program.decide(request, "read", {"file_path": "src/a.py"})
    slow = program.decide_unindexed(request, "read", {"file_path": "src/a.py"})
    assert (fast.effect, fast.reason, fast.deciding) == (slow.effect, slow.reason, slow.deciding)


def test_an_ask_default_under_approval_never_is_a_denial_naming_where_never_was_set():
    program = _program("ask")
    root = program.decide(Request(preset="standard", policy="p"), "read", {"file_path": "a"})
    child = program.decide(Request(preset="standard", policy="p", scope="child"), "read", {"file_path": "a"})
    assert (root.effect, child.effect) == ("ask", "deny")
    assert [rule for rule, _ in child.deciding] == ["p/default", "approval never"]


def test_requests_share_one_unmatched_decision_when_the_request_cannot_change_it():
    program = _program("allow")
    first = program.decide(Request(preset="standard", policy="p"), "read", {"file_path": "a"})
    other = program.decide(
        Request(preset="standard", policy="p", scope="child", platform="darwin"), "glob", {"pattern": "*"}
    )
    assert first is other and first.effect == "allow"
