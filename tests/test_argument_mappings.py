"""A call's arguments may come in any mapping (a read-only view, a caller's own type): each is decided as
the same dict would be. The index once read only a dict's fields, so `deny … when args.query matches`
let the same call through in a `MappingProxyType`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import pytest

from dshc.compiler.program import Program
from dshc.compiler.request import Request

POLICY = """policy p "Rules on arguments" {
  default allow
  deny web_search when args.query matches "*.onion"
  ask skill when args.name matches "deploy*"
  deny job_output
  deny job_output when args.job_id matches "run*"
  guard g: deny skill when args.name matches "*secret*"
}
"""
REQUEST = Request(preset="standard", policy="p")
CALLS = [
    ("web_search", {"query": "x.onion"}),
    ("web_search", {"query": "docs"}),
    ("skill", {"name": "deploy-prod"}),
    ("job_output", {"job_id": "running"}),
    ("skill", {"name": "a secret"}),
]


class CallersMapping(Mapping):
    def __init__(self, items):
        self._items = dict(items)

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)


@pytest.fixture(scope="module")
def program():
    return Program.load(texts={"p.dsh": POLICY})


def _seen(decision):
    return decision.effect, decision.reason, decision.deciding


@pytest.mark.parametrize("kind", [MappingProxyType, CallersMapping])
@pytest.mark.parametrize("name,args", CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)])
def test_any_mapping_is_decided_as_the_same_dict(program, kind, name, args):
    for _ in range(2):  # the second call through the policy's shortcut
        assert _seen(program.decide(REQUEST, name, kind(args))) == _seen(program.decide(REQUEST, name, dict(args)))
        assert program.guard(REQUEST, name, kind(args)) == program.guard(REQUEST, name, dict(args))


def test_a_glob_deny_holds_for_a_read_only_view(program):
    assert program.decide(REQUEST, "web_search", MappingProxyType({"query": "x.onion"})).effect == "deny"


@pytest.mark.parametrize("args", ["query", ["x.onion"], 7, None])
def test_arguments_that_are_not_an_object_are_refused(program, args):
    for _ in range(2):  # the second call through the policy's shortcut
        decision = program.decide(REQUEST, "web_search", args)
        assert decision.effect == "deny" and decision.reason.startswith("the arguments are not an object")
