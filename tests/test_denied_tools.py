"""A tool a rule without condition denies is denied on every call, whatever its arguments or request:
the decision is made from the index alone, and the rules that agree (glob and fact rules on the same
tool) are listed when the decision's rules are first read — the same list trying every rule gives."""

from __future__ import annotations

import pytest

import ctypes
from types import MappingProxyType

from dshc.compiler.policy.index import DENIED_OUTRIGHT, UNNAMED, _ToolIndex
from dshc.compiler.program import Program
from dshc.compiler.request import Request

POLICY = """policy p "Tools denied outright, beside rules that agree or would allow" {
  default allow
  deny web_search
  allow web_search when args.query matches "docs *"
  deny web_search when args.query matches "*.onion"
  deny web_search when scope == "child"
  ask web_search when args.query matches "how *"
  deny read
  deny read when args.file_path matches "*.env"
  allow read when args.file_path matches "src/*"
  deny bash
  deny bash when args.command matches "rm *"
  deny job_list
  deny job_list when platform == "linux"
  deny write when scope == "child"
  deny write when args.file_path matches "*.lock"
  ask skill
  allow skill when args.name matches "lint*"
  guard secrets: deny grep when args.pattern matches "*password*"
  deny grep
  guard jobs: deny job_list when scope == "child"
}
"""
REQUESTS = [
    Request(preset="standard", policy="p"),
    Request(preset="standard", policy="p", scope="child"),
    Request(preset="standard", policy="p", platform="win32"),
]
CALLS = [
    ("web_search", {"query": "docs lark"}),
    ("web_search", {"query": "how x.onion"}),
    ("web_search", {"query": ["not", "text"]}),
    ("web_search", {}),
    ("read", {"file_path": "prod.env"}),
    ("read", {"file_path": "src/../prod.env"}),
    ("read", {"file_path": "src/a.py"}),
    ("bash", {"command": "rm -rf x"}),
    ("bash", {"command": "ls; cat a.env"}),
    ("job_list", {}),
    ("write", {"file_path": "Cargo.lock", "content": ""}),
    ("write", {"file_path": "a.txt", "content": ""}),
    ("grep", {"pattern": "my password"}),
    ("grep", {"pattern": "x"}),
    ("skill", {"name": "lint"}),
    ("skill", {"name": "x"}),
    ("todo_write", {"todos": []}),
    ("glob", {"pattern": "*.py"}),
]


@pytest.fixture(scope="module")
def program():
    return Program.load(texts={"p.dsh": POLICY})


def _seen(decision):
    return decision.effect, decision.reason, decision.gate, decision.deciding


@pytest.mark.parametrize("request_", REQUESTS, ids=["root", "child", "win32"])
@pytest.mark.parametrize("name,args", CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)])
def test_a_denied_tool_decides_and_lists_as_trying_every_rule(program, request_, name, args):
    assert _seen(program.decide(request_, name, args, workspace="/ws")) == _seen(
        program.decide_unindexed(request_, name, args, workspace="/ws")
    )


def test_the_listing_names_every_agreeing_rule_in_source_order(program):
    decision = program.decide(REQUESTS[1], "web_search", {"query": "how x.onion"})
    assert decision.effect == "deny"
    assert [rule for rule, _ in decision.deciding] == ["p/deny@3", "p/deny@5", "p/deny@6"]


def test_the_listing_reads_the_arguments_as_they_were_called(program):
    args = {"query": "how x.onion"}
    decision = program.decide(REQUESTS[0], "web_search", args)
    args["query"] = "docs lark"  # the caller reuses its mapping before the rules are read
    assert [rule for rule, _ in decision.deciding] == ["p/deny@3", "p/deny@5"]
    args = {"file_path": "Cargo.lock", "content": ""}
    decision = program.decide(REQUESTS[1], "write", args)  # denied by a rule on the request's facts
    args["file_path"] = "a.txt"
    assert [rule for rule, _ in decision.deciding] == ["p/deny@15", "p/deny@16"]


def test_a_path_is_named_in_its_canonical_form(program):
    decision = program.decide(REQUESTS[0], "read", {"file_path": "src/../prod.env"}, workspace="/ws")
    assert decision.effect == "deny" and "`file_path` is `prod.env`" in decision.reason
    assert [rule for rule, _ in decision.deciding] == ["p/deny@8", "p/deny@9"]


def test_a_guard_that_fires_still_names_itself(program):
    decision = program.decide(REQUESTS[0], "grep", {"pattern": "my password"})
    # (grep is a search: its reads are parts of their own where the policy has rules on `read`)
    assert decision.effect == "deny" and decision.reason.endswith("guard `secrets` denies it")


def test_a_shell_line_is_still_split(program):
    decision = program.decide(REQUESTS[0], "bash", {"command": "ls; rm -rf x"})
    plain = program.decide_unindexed(REQUESTS[0], "bash", {"command": "ls; rm -rf x"})
    assert _seen(decision) == _seen(plain)


def test_a_deny_that_depends_on_the_request_is_not_taken_for_every_request(program):
    assert program.decide(REQUESTS[0], "write", {"file_path": "a.txt", "content": ""}).effect == "allow"
    assert program.decide(REQUESTS[1], "write", {"file_path": "a.txt", "content": ""}).effect == "deny"
    assert program.decide(REQUESTS[2], "job_list", {}).effect == "deny"  # its rule without condition


def test_a_later_call_through_the_policys_shortcut_decides_and_lists_as_the_first():
    # the first call to a tool builds its index; later ones read `_ToolIndex.answer` from the policy's shortcut
    program = Program.load(texts={"p.dsh": POLICY})
    for turn in range(2):
        args = {"query": "how x.onion"}
        decision = program.decide(REQUESTS[0], "web_search", args)
        args["query"] = "docs lark"
        assert [rule for rule, _ in decision.deciding] == ["p/deny@3", "p/deny@5"], turn
        unnamed = program.decide(REQUESTS[0], "todo_write", {"todos": []})
        assert (unnamed.effect, unnamed.matched) == ("allow", False), turn


def test_only_calls_whose_answer_reads_nothing_more_take_the_shortcut(program):
    compiled = program._compiled_policy(program._context(REQUESTS[0]).composition.policy)
    for name, args in CALLS:
        program.decide(REQUESTS[0], name, args, workspace="/ws")
    answers = {name: index.answer for name, (_, index) in compiled._last.items()}
    # read and glob have paths, grep is a search, job_list has a guard, bash is split: none answers alone
    assert answers == {
        "web_search": DENIED_OUTRIGHT,
        "read": None,
        "bash": None,
        "job_list": None,
        "write": None,
        "grep": None,
        "skill": None,
        "todo_write": UNNAMED,
        "glob": None,
    }


def test_the_answer_sits_beside_the_index_header():
    # CPython lays slots out sorted by name; a cold call reads `answer` from the line its header is on
    index = _ToolIndex("x", [], (), {}, [], False)
    index.answer = marker = object()
    assert ctypes.c_void_p.from_address(id(index) + object.__basicsize__).value == id(marker)


def test_the_decider_itself_takes_arguments_of_any_type(program):
    decider, tool, _ = program._decider_for(REQUESTS[0], "web_search")
    for args in (MappingProxyType({"query": "how x.onion"}), ["how x.onion"], "how x.onion"):
        for _ in range(2):  # the second call through the policy's shortcut
            assert decider.decide("web_search", tool, args).effect == "deny"
