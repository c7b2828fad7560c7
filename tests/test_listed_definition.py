"""`Program.listed_definition` answers what the view's entry answers, without building the view."""

from __future__ import annotations

import pytest

from dshc.compiler.diagnostics import DshError
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.compiler.resolve import RESERVED_TOOL

REQUESTS = [
    Request(),
    Request(host="web"),
    Request(host="web", policy="read-only", plan=True),
    Request(host="web", preset="code", mode="code", with_services=["code-runtime"]),
    Request(host="web", preset="code", mode="both", with_services=["code-runtime"]),
    Request(host="web", preset="code", mode="code", without_services=["code-runtime"]),  # DSH402: no view
    Request(host="web", scope="child", policy="workspace-write"),
    Request(preset="no-such-preset"),
    Request(host="web", without_services=["sandbox"], flags=["experimental"]),
]


@pytest.fixture(scope="module")
def programs():
    return Program.load(), Program.load()


@pytest.mark.parametrize("request_", REQUESTS, ids=repr)
def test_each_tool_as_the_view_lists_it(programs, request_):
    viewing, listing = programs
    names = sorted(viewing.catalog.shipped_names | {RESERVED_TOOL, "no_such_tool"})
    try:
        view = viewing.view(request_)
    except DshError as exc:
        for name in names:
            with pytest.raises(DshError) as raised:
                listing.listed_definition(request_, name)
            assert [d.code for d in raised.value.diagnostics] == [d.code for d in exc.diagnostics]
        return
    listed = {name: listing.listed_definition(request_, name) for name in names}
    assert listed == {name: (view.entry(name).definition if view.entry(name) else None) for name in names}
    assert any(listed.values()) and listed["no_such_tool"] is None
    assert {name: viewing.listed_definition(request_, name) for name in names} == listed  # from the built view
