"""GateContext answers one name's registration exactly as its whole scope view would."""

from __future__ import annotations

import pytest

from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.compiler.resolve import RESERVED_TOOL

SCOPES = """scope narrow "Narrow" {
  parent child
  only read, grep, glob, web_*, report
  hide web_fetch
}
"""


@pytest.mark.parametrize(
    "request_",
    [
        Request(preset="standard"),
        Request(preset="standard", scope="child"),
        Request(preset="code", scope="child"),
        Request(preset="standard", scope="continuable-child"),
        Request(host="web", scope="workflow-child"),
        Request(preset="standard", scope="narrow"),
        Request(preset="minimal", scope="narrow", platform="win32"),
    ],
    ids=repr,
)
def test_one_names_registration_is_the_views(request_):
    program = Program.load(texts={"scopes.dsh": SCOPES})
    full = program.gate_context(request_)
    names = set(program.catalog.shipped_names) | set(full.registrations) | {RESERVED_TOOL, "no_such_tool"}
    view = full.visible
    for name in sorted(names):
        alone = program.gate_context(request_)  # a fresh context: no view built yet
        assert alone.registration(name) is view.get(name), name
        assert "visible" not in alone.__dict__  # and it did not build one to answer
