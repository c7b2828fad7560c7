"""Reading a declaration never runs the command an `upstream` names.

The attack: a pull request adds `upstream x { command "/bin/sh" args ["-c", "…"] }`; the reviewer runs
`dshc check`, `diff --fail-on-widen`, `verify`, `decide`, `explain` or `graph` on it, and each started that
command, unconfined, to list its tools. Now the tool lists come from the user's cache only (written by
`dshc upstream refresh`, which runs the command in the sandbox, or by `dshc serve`); with none, the
upstream has no tools and a DSH522 warning names `dshc upstream refresh`.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from dshc.cli import upstream_lists
from dshc.cli.main import main
from dshc.compiler.program import SourceFile
from dshc.compiler.upstream import Endpoint

TOOLS = [
    {
        "name": "probe",
        "description": "reads",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    }
]


def declaration(marker: Path) -> str:
    command = f"touch {marker}; exec cat"
    return (
        f'upstream evil {{ command "/bin/sh" args ["-c", {json.dumps(command)}] }}\n'
        "preset ev extends standard { mount mcp:evil }\n"
        "policy evp extends workspace-write { allow package(mcp:evil) }\n"
    )


@pytest.fixture
def planted(tmp_path, monkeypatch) -> tuple[Path, Path]:
    monkeypatch.setenv("DSHC_CACHE_DIR", str(tmp_path / "cache"))
    marker = tmp_path / "ran"
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    (tmp_path / "old" / "p.dsh").write_text("policy evp extends workspace-write { }\n")
    source = tmp_path / "new" / "p.dsh"
    source.write_text(declaration(marker))
    return source, marker


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


READERS = {
    "check": lambda s: ["check", str(s)],
    "diff": lambda s: ["diff", str(s.parent.parent / "old"), str(s.parent), "--fail-on-widen"],
    "verify": lambda s: ["verify", str(s), "--policy", "evp"],
    "decide": lambda s: ["decide", "evil__probe", "--args", "{}", "ev", "--policy", "evp", "--load", str(s)],
    "explain": lambda s: ["explain", "evil__probe", "ev", "--policy", "evp", "--load", str(s)],
    "graph": lambda s: ["graph", "ev", "--load", str(s)],
    "compile": lambda s: ["compile", "ev", "--load", str(s), "--json"],
    "ls": lambda s: ["ls", "tools", "--load", str(s)],
}


@pytest.mark.parametrize("command", sorted(READERS))
def test_reading_a_file_never_starts_its_upstream_command(planted, command, capsys):
    source, marker = planted
    code, out, err = run(*READERS[command](source))
    assert not marker.exists(), f"`dshc {command}` ran the upstream's command"
    assert code in (0, 1, 2) and "Traceback" not in err, (code, out, err)
    warned = capsys.readouterr().err  # (the warnings of the sources go to the process's stderr)
    assert "DSH522" in warned and "dshc upstream refresh" in warned, warned


def test_the_explorer_and_the_language_server_never_start_it_either(planted):
    from dshc.cli.lsp.sources import SourceSet
    from dshc.cli.ui.diffs import diff, given_trees
    from dshc.compiler.program import Program

    source, marker = planted
    SourceSet().analyse(str(source))
    old, new = source.parent.parent / "ui-old", source.parent.parent / "ui-new"  # the explorer's sides are whole trees
    old.mkdir()
    new.mkdir()
    (old / "p.dsh").write_text("policy evp { default deny }\n")
    (new / "p.dsh").write_text(
        declaration(marker).split("preset")[0] + "policy evp { default deny\n allow package(mcp:evil) }\n"
    )
    # (the trees the explorer was started with: it reads no other path)
    assert diff(Program.load(), str(old), str(new), trees=given_trees([old, new]))["kind"] == "trees"
    assert not marker.exists()


def test_a_remembered_list_gives_the_tools_and_none_is_said_to_answer(planted, capsys):
    source, marker = planted
    (endpoint,) = upstream_lists.source_endpoints([SourceFile(str(source), source.read_bytes())])
    upstream_lists.known_tools(endpoint, TOOLS)
    code, out, err = run("compile", "ev", "--policy", "evp", "--load", str(source), "--json")
    entry = next(t for t in json.loads(out)["tools"] if t["name"] == "evil__probe")
    assert code == 0 and entry["ready"] == "unavailable" and entry["policy"] == "allow", err
    assert "DSH522" not in capsys.readouterr().err and not marker.exists()
    code, out, _ = run("explain", "evil__probe", "ev", "--policy", "evp", "--load", str(source), "--json")
    assert code == 1 and json.loads(out)["failed_gate"] == "ready"
    code, out, _ = run(
        "explain", "evil__probe", "ev", "--policy", "evp", "--load", str(source), "--with", "mcp:evil", "--json"
    )  # the caller's word that it answers
    assert code == 0, out


def test_another_command_under_the_same_name_is_not_the_remembered_one(planted, capsys):
    source, marker = planted
    upstream_lists.known_tools(Endpoint("evil", "/bin/true", (), (), None, ()), TOOLS)
    run("check", str(source))
    assert "DSH522" in capsys.readouterr().err and not marker.exists()


def test_refresh_starts_the_command_in_the_sandbox_and_remembers_its_tools(tmp_path, monkeypatch):
    pytest.importorskip("mcp_server_time")
    from dshc.runtime import sandbox

    if sandbox.missing(sandbox.Confinement("read-only", str(tmp_path), str(tmp_path))) is not None:
        pytest.skip("no OS sandbox for `read-only` on this host")
    monkeypatch.setenv("DSHC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "written"
    script = (
        f"import contextlib, sys\nwith contextlib.suppress(OSError): open({str(marker)!r}, 'w').write('x')\n"
        "sys.argv = ['mcp-server-time', '--local-timezone', 'UTC']\nfrom mcp_server_time import main\nmain()"
    )
    source = tmp_path / "gw.dsh"
    source.write_text(
        f'upstream time {{ command {json.dumps(sys.executable)} args ["-c", {json.dumps(script)}] }}\n'
        "preset gw extends standard { mount mcp:time }\n"
    )
    code, out, err = run("upstream", "refresh", str(source))
    assert code == 0 and "upstream `time`: 2 tool(s) remembered; started" in out and "in the sandbox" in out, (out, err)
    assert not marker.exists()  # the sandbox kept it from writing outside dshc's temp folder
    code, out, _ = run("compile", "gw", "--load", str(source), "--json")
    assert {"time__get_current_time", "time__convert_time"} <= {t["name"] for t in json.loads(out)["tools"]}


def test_where_nothing_confines_refresh_starts_nothing(planted, monkeypatch):
    from dshc.runtime import sandbox

    bare = sandbox.probe().replace(landlock_abi=0, network_namespace=False, bwrap=None, sandbox_exec=None)
    monkeypatch.setattr(sandbox.confine, "probe", lambda: bare)
    source, marker = planted
    code, out, _ = run("upstream", "refresh", "--load", str(source))
    assert code == 1 and "upstream `evil`: no tool list; not started: it runs only in the sandbox" in out, out
    assert not marker.exists()


def test_refresh_needs_an_upstream_and_knows_its_one_action(tmp_path):
    (tmp_path / "p.dsh").write_text("policy x { default deny }\n")
    code, _, err = run("upstream", "refresh", str(tmp_path / "p.dsh"))
    assert code == 2 and "declare no `upstream`" in err
    code, _, err = run("upstream", "fetch", str(tmp_path / "p.dsh"))
    assert code == 2 and "invalid choice" in err
