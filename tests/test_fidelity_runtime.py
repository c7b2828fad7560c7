"""Runtime behaviours pinned to the reference harness (issue 16 items 2, 3, 4, 9, 10; issue 17
item 4's truncation markers). Each test is named after the reference behaviour it pins."""
from __future__ import annotations

import json

import pytest

from dshc.compiler.request import Request
from dshc.runtime.scheduler import execution_class, groups
from dshc.runtime.types import ToolCall


@pytest.fixture(scope="module")
def standard_view(program):
    return program.view(Request(preset="standard", host="web"))


@pytest.mark.parametrize("name, arguments", [
    ("read", {}),                                   # required file_path missing
    ("read", {"file_path": 7}),                     # wrong type
    ("read", '{"file_path": '),                     # text that is not JSON stays a raw string
    ("web_search", {"query": 1}),
    ("read", {"file_path": "a\0b"}),                # a NUL no tool can use
])
def test_a_concurrency_safe_tool_with_invalid_arguments_is_scheduled_exclusive(standard_view, name, arguments):
    call = ToolCall.from_model("c", name, arguments if isinstance(arguments, str) else json.dumps(arguments))
    assert execution_class(call, standard_view) == "exclusive"


def test_a_concurrency_safe_tool_with_valid_arguments_stays_parallel_and_invalid_ones_are_barriers(standard_view):
    calls = [ToolCall.from_model(i, "read", args) for i, args in
             (("1", '{"file_path": "a"}'), ("2", '{"file_path": "b"}'), ("3", "{}"), ("4", '{"file_path": "c"}'))]
    assert execution_class(calls[0], standard_view) == "parallel"
    assert [[c.id for c in g] for g in groups(calls, standard_view)] == [["1", "2"], ["3"], ["4"]]
