"""An upstream MCP server's `tools/list` answer → its catalog package: the warnings and errors of what the
answer lacks (DSH522: no answer; DSH523: a risk override for a tool the answer does not list)."""

from __future__ import annotations

from dshc.compiler import ast
from dshc.compiler.upstream import Endpoint, package

TOOL = {"name": "now", "description": "the time", "inputSchema": {"type": "object", "properties": {}}}


def _override(tool: str) -> ast.RiskOverride:
    return ast.RiskOverride(ast.Name(tool), (ast.Name("external-data"),))


def test_an_upstream_that_did_not_answer_has_no_tools_and_a_warning():
    made, diags = package(Endpoint("clock", "clock-server", (), (), None, ()), None)
    assert [d.code for d in diags] == ["DSH522"] and diags[0].severity == "warning"
    assert "`clock`" in diags[0].message and made.tools == ()


def test_a_risk_override_of_a_tool_the_upstream_lacks_is_an_error_naming_the_ones_it_has():
    endpoint = Endpoint("clock", "clock-server", (), (), None, (_override("nwo"), _override("now")))
    made, diags = package(endpoint, [TOOL])
    assert [d.code for d in diags] == ["DSH523"]
    assert "no tool `nwo`" in diags[0].message and "now" in diags[0].help
    assert [t.risk for t in made.tools] == [("external-data",)]  # the override of a listed tool holds


def test_an_override_is_not_checked_against_an_upstream_that_listed_nothing():
    """No answer is DSH522 alone: with no list, no name can be said to be missing."""
    _, diags = package(Endpoint("clock", "clock-server", (), (), None, (_override("now"),)), None)
    assert [d.code for d in diags] == ["DSH522"]
