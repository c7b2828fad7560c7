"""The remembered tool list of an upstream: used while it is down, and only from a private file."""

from __future__ import annotations

import os

from dshc.cli import upstream_lists
from dshc.compiler.upstream import Endpoint

TOOLS = [{"name": "now", "inputSchema": {"type": "object"}}]


def test_a_down_upstream_keeps_the_tools_it_last_answered(tmp_path, monkeypatch):
    monkeypatch.setenv("DSHC_CACHE_DIR", str(tmp_path))
    endpoint = Endpoint("clock", "clock-server", (), (), None, ())
    assert upstream_lists.known_tools(endpoint, None) is None  # never answered: no tools yet
    assert upstream_lists.known_tools(endpoint, TOOLS) == TOOLS
    assert upstream_lists.known_tools(endpoint, None) == TOOLS
    other = Endpoint("clock", "another-server", (), (), None, ())  # same name, another server: not its list
    assert upstream_lists.known_tools(other, None) is None


def test_a_list_someone_else_could_have_written_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("DSHC_CACHE_DIR", str(tmp_path))
    endpoint = Endpoint("clock", "clock-server", (), (), None, ())
    upstream_lists.known_tools(endpoint, TOOLS)
    path = upstream_lists.cache_file(endpoint)
    os.chmod(path, 0o666)
    assert upstream_lists.known_tools(endpoint, None) is None
    os.chmod(path, 0o600)
    os.chmod(os.path.dirname(path), 0o777)
    assert upstream_lists.known_tools(endpoint, None) is None
    os.chmod(os.path.dirname(path), 0o700)
    with open(path, "w") as handle:
        handle.write("{not json")
    assert upstream_lists.known_tools(endpoint, None) is None


def test_commands_see_a_down_upstreams_remembered_tools_and_gate_five_names_it(tmp_path, monkeypatch):
    import io
    import json

    from dshc.cli.main import main

    monkeypatch.setenv("DSHC_CACHE_DIR", str(tmp_path / "cache"))
    endpoint = Endpoint("git", "false", (), (), None, ())  # a server that exits at once: down
    upstream_lists.known_tools(
        endpoint,
        [
            {
                "name": "git_status",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": True, "openWorldHint": False},
            }
        ],
    )
    source = tmp_path / "gw.dsh"
    source.write_text(
        'upstream git { command "false" }\npreset gw extends standard { mount mcp:git }\n'
        "policy gwp { sandbox workspace-write; default deny; allow git__git_status }\n"
    )
    flags = ["gw", "--policy", "gwp", "--load", str(source)]
    out = io.StringIO()
    assert main(["explain", "git__git_status", *flags, "--json"], out, io.StringIO()) == 1
    report = json.loads(out.getvalue())
    assert report["failed_gate"] == "ready" and "`git` is not answering" in report["gates"][-1]["reason"]
    out = io.StringIO()
    assert main(["compile", *flags, "--json"], out, io.StringIO()) == 0
    entry = next(t for t in json.loads(out.getvalue())["tools"] if t["name"] == "git__git_status")
    assert entry["ready"] == "unavailable" and entry["policy"] == "allow"
    out = io.StringIO()
    assert main(["graph", *flags], out, io.StringIO()) == 0 and "n_tool_git__git_status" in out.getvalue()
