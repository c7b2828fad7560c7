"""Upstream declarations → catalog packages `mcp:NAME`: names, schemas, risk from MCP annotations and its overrides.

The tool lists here are the JSON an MCP server answers to `tools/list`; the live servers are in
test_mcp_gateway.py.
"""

from __future__ import annotations

import pytest

from dshc.compiler import upstream
from dshc.compiler.catalog import load_catalog
from dshc.compiler.diagnostics import DshError
from dshc.compiler.fmt import format_document
from dshc.compiler.program import Program, SourceFile, parse_files, shipped_sources
from dshc.compiler.request import Request

OBJECT = {"type": "object", "properties": {"repo_path": {"type": "string"}}, "required": ["repo_path"]}
GIT_TOOLS = [
    {
        "name": "git_status",
        "description": "Shows the working tree status",
        "inputSchema": OBJECT,
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False},
    },
    {
        "name": "git_commit",
        "description": "Records changes",
        "inputSchema": OBJECT,
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
    },
    {
        "name": "git_reset",
        "description": "Unstages all changes",
        "inputSchema": OBJECT,
        "annotations": {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False},
    },
    {"name": "fetch_url", "description": "no annotations at all", "inputSchema": {"type": "object"}},
]
SOURCES = """
upstream git { command "mcp-server-git" args ["--repository", "."] }
preset gw extends standard { mount mcp:git }
preset gw-strict extends standard { mount mcp:git { git_status = ["file-mutation"] } }
scope nogit { parent root; hide git__* }
policy gwp extends workspace-write {
  allow package(mcp:git)
  ask risk(file-mutation)
  deny git__git_commit
}
"""


def _program(text: str = SOURCES, tools=GIT_TOOLS) -> Program:
    files = shipped_sources() + [SourceFile("gw.dsh", text.encode())]
    documents, diags, _ = parse_files(files)
    assert not diags
    endpoints, problems = upstream.endpoints(documents)
    assert not problems
    packages = [upstream.package(e, tools)[0] for e in endpoints]
    return Program.from_files(files, upstream.with_packages(load_catalog(), packages))


def _decide(program, tool, preset="gw", up=True):
    request = Request(preset=preset, policy="gwp", with_services={"mcp:git"} if up else set())
    return program.decide(request, tool, {"repo_path": "."}, "/tmp")


def test_annotations_map_onto_risk_axes_and_absent_hints_read_as_unsafe():
    assert upstream.risk_from_annotations({"readOnlyHint": True, "openWorldHint": False}) == ()
    assert upstream.risk_from_annotations({"destructiveHint": False, "openWorldHint": False}) == ("durable-state",)
    assert upstream.risk_from_annotations({"destructiveHint": True, "openWorldHint": False}) == ("file-mutation",)
    assert upstream.risk_from_annotations(None) == ("file-mutation", "external-data")
    # a read-only hint that is not literally true does not count
    assert upstream.risk_from_annotations({"readOnlyHint": "yes"}) == ("file-mutation", "external-data")


def test_tool_list_becomes_a_package_of_exclusive_tools_named_the_mcp_way():
    endpoint = upstream.Endpoint("git", "x", (), (), None, ())
    package, diags = upstream.package(endpoint, GIT_TOOLS)
    assert not diags
    assert package.id == "mcp:git"
    names = [t.name for t in package.tools]
    assert names == sorted(["git__git_status", "git__git_commit", "git__git_reset", "git__fetch_url"])
    status = next(t for t in package.tools if t.name == "git__git_status")
    assert status.definition == "mcp:git/git_status" and status.provider == "mcp:git"
    assert not status.parallel_safe  # MCP says nothing about concurrency: exclusive


def test_bad_schemas_and_name_collisions_are_left_out_with_a_warning():
    endpoint = upstream.Endpoint("u", "x", (), (), None, ())
    tools = [
        {"name": "ok", "inputSchema": {"type": "object"}},
        {"name": "not_object", "inputSchema": {"type": "string"}},
        {"name": "bad_schema", "inputSchema": {"type": "object", "properties": 3}},
        {"name": "a.b", "inputSchema": {"type": "object"}},
        {"name": "a_b", "inputSchema": {"type": "object"}},
        {"inputSchema": {"type": "object"}},
    ]
    package, diags = upstream.package(endpoint, tools)
    assert [t.name for t in package.tools] == ["u__a_b", "u__ok"]
    assert [d.code for d in diags] == ["DSH521"] * 4
    assert all(d.severity == "warning" for d in diags)


def test_policy_rules_reach_upstream_tools_by_name_package_and_risk():
    program = _program()
    assert _decide(program, "git__git_status").effect == "allow"  # package(mcp:git)
    assert _decide(program, "git__git_reset").effect == "ask"  # destructiveHint → risk(file-mutation)
    assert _decide(program, "git__fetch_url").effect == "ask"  # no hints → the unsafe default
    assert _decide(program, "git__git_commit").effect == "deny"  # a deny on one tool holds ...
    assert _decide(program, "git__git_status").effect == "allow"  # ... while its sibling is allowed


def test_a_preset_overrides_the_annotations():
    program = _program()
    assert _decide(program, "git__git_status", preset="gw-strict").effect == "ask"
    assert _decide(program, "git__git_status", preset="gw").effect == "allow"


def test_an_override_cannot_name_an_unknown_axis():
    bad = SOURCES.replace('git_status = ["file-mutation"]', 'git_status = ["harmless"]')
    with pytest.raises(DshError) as caught:
        _program(bad)
    assert [d.code for d in caught.value.diagnostics] == ["DSH214"]


def test_the_upstream_declaration_can_set_risk_too():
    text = SOURCES.replace('args ["--repository", "."]', 'args ["--repository", "."]\n risk git_status file-mutation')
    assert _decide(_program(text), "git__git_status").effect == "ask"
    cleared = SOURCES.replace('args ["--repository", "."]', 'args ["--repository", "."]\n risk fetch_url none')
    assert _decide(_program(cleared), "git__fetch_url").effect == "allow"


def test_gate_five_fails_while_the_upstream_is_down_and_names_its_service():
    program = _program()
    down = _decide(program, "git__git_status", up=False)
    assert down.effect == "deny" and "gate `ready`" in down.reason and "server `git` is not answering" in down.reason
    gates = program.explain(Request(preset="gw", policy="gwp"), "git__git_status")
    assert [g.status for g in gates][-1] == "fail" and gates[-1].gate == "ready"


def test_explain_names_the_visible_gate_for_a_tool_a_scope_hides():
    gates = _program().explain(
        Request(preset="gw", policy="gwp", scope="nogit", with_services={"mcp:git"}), "git__git_status"
    )
    failed = next(g for g in gates if g.status == "fail")
    assert failed.gate == "visible" and "hide" in failed.reason


@pytest.mark.parametrize(
    "text,code",
    [
        ('upstream a { command "x" url "http://h/mcp" }', "DSH520"),
        ("upstream a { }", "DSH520"),
        ('upstream a { url "file:///etc/passwd" }', "DSH520"),
        ('upstream a { command "x" env { N = 1 } }', "DSH520"),
        ('upstream a { url "http://h/mcp" args ["x"] }', "DSH520"),
        ('upstream a__b { command "x" }', "DSH520"),
        ('upstream a { command "x" command "y" }', "DSH306"),
        ('upstream a { command "x" risk t harmless }', "DSH217"),
        ('upstream a { command "x" }\nupstream a { command "y" }', "DSH210"),
    ],
)
def test_bad_declarations_are_reported(text, code):
    documents, diags, _ = parse_files([SourceFile("u.dsh", text.encode())])
    assert not diags
    endpoints, problems = upstream.endpoints(documents)
    assert code in [d.code for d in problems]


def test_fmt_keeps_every_part_of_an_upstream():
    text = (
        'upstream git "Git" {\n  command "python"\n  args ["-m", "mcp_server_git"]\n  env { A = "1" }\n'
        "  risk git_commit file-mutation, durable-state\n}\n\npreset p {\n  mount mcp:git\n}\n"
    )
    documents, diags, _ = parse_files([SourceFile("u.dsh", text.encode())])
    assert not diags and format_document(documents[0]) == text
