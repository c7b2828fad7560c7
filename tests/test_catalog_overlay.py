"""User catalogs overlay the shipped one (`--catalog DIR`, a project's `catalog`): packages and
services are added, clashes are diagnostics with a file and JSON path, `own PKG/NAME` picks one
definition and a bare ambiguous `own NAME` is an error, and a listed tool with no local body
answers a structured "unavailable" at gate 5 and at call time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dshc.cli.host import session
from dshc.compiler.catalog import load_catalog
from dshc.compiler.catalog_overlay import overlay
from dshc.compiler.diagnostics import DshError
from dshc.compiler.program import Program
from dshc.compiler.project import read as read_project
from dshc.compiler.request import Request
from dshc.runtime.pipeline import Pipeline
from dshc.runtime.stages import DEFAULT_STAGES
from dshc.runtime.types import ToolCall

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "plugin-catalog"
TICKETS = str(EXAMPLE / "tickets.dsh")


@pytest.fixture
def plugin(tmp_path) -> Path:
    target = tmp_path / "plugin"
    shutil.copytree(EXAMPLE, target)
    return target


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _diags(info) -> list:
    return list(info.value.diagnostics)


def test_overlay_adds_packages_and_services_to_the_shipped_catalog():
    base = load_catalog()
    merged = overlay(base, EXAMPLE)
    assert merged.counts()["packages"] == base.counts()["packages"] + 1
    assert set(base.package_by_id) < set(merged.package_by_id)  # nothing shipped was lost
    assert "ticket-tracker" in merged.services
    assert merged.package_by_id["acme-tickets"].origin == str(EXAMPLE)
    assert merged.package_by_id["tool-fs"].origin is None


def test_cli_catalog_flag_adds_instead_of_replacing(cli):
    data = cli("catalog", "--catalog", str(EXAMPLE), "--json").json()
    assert data["counts"]["packages"] == 25 and data["counts"]["schema_entries"] == 54
    view = cli(
        "compile", "tickets", "--with", "ticket-tracker", "--catalog", str(EXAMPLE), "--load", TICKETS, "--json"
    ).json()
    names = [t["name"] for t in view["tools"]]
    assert "ticket_read" in names and "read" in names and "bash" in names  # shipped tools are still there


def test_a_package_id_the_shipped_catalog_has_is_a_clash_with_its_json_path(plugin):
    _edit(plugin / "manifest.json", lambda m: m["packages"].append("tool-todo"))
    shutil.copy(
        Path(str(load_catalog.__globals__["shipped_root"]())) / "packages" / "tool-todo.json",
        plugin / "packages" / "tool-todo.json",
    )
    with pytest.raises(DshError) as info:
        overlay(load_catalog(), plugin)
    (clash,) = _diags(info)
    assert clash.code == "DSH509" and clash.json_path == "$.packages[1]"
    assert clash.path.endswith("manifest.json") and "tool-todo" in clash.message


def test_a_service_the_catalog_knows_cannot_be_introduced_again(plugin):
    _edit(plugin / "manifest.json", lambda m: m["services"].update({"fs": "another file system"}))
    with pytest.raises(DshError) as info:
        overlay(load_catalog(), plugin)
    assert [(d.code, d.json_path) for d in _diags(info)] == [("DSH509", "$.services.fs")]


def test_a_package_needing_an_undeclared_service_is_refused(plugin):
    _edit(plugin / "manifest.json", lambda m: m.pop("services"))
    with pytest.raises(DshError) as info:
        overlay(load_catalog(), plugin)
    assert {d.code for d in _diags(info)} == {"DSH502"}
    assert all(d.path.endswith("acme-tickets.json") for d in _diags(info))


def test_replaces_must_name_a_base_package_the_overlay_lists(plugin):
    _edit(plugin / "manifest.json", lambda m: m.update(replaces=["tool-todo", "no-such-package"]))
    with pytest.raises(DshError) as info:
        overlay(load_catalog(), plugin)
    assert sorted((d.code, d.json_path) for d in _diags(info)) == [
        ("DSH509", "$.replaces[0]"),
        ("DSH509", "$.replaces[1]"),
    ]


def test_cli_reports_overlay_clashes_as_diagnostics_not_tracebacks(plugin, cli):
    _edit(plugin / "manifest.json", lambda m: m["services"].update({"web": "x"}))
    result = cli("compile", "standard", "--catalog", str(plugin), "--json")
    assert result.code == 2
    assert [d["code"] for d in result.json()["diagnostics"]] == ["DSH509"]


def test_bare_own_of_a_name_two_packages_define_is_an_error():
    catalog = overlay(load_catalog(), EXAMPLE)
    text = "scope mine { parent root\n  own report }\n"
    with pytest.raises(DshError) as info:
        Program.load(texts={"mine.dsh": text}, catalog=catalog)
    (ambiguous,) = _diags(info)
    assert ambiguous.code == "DSH220" and (ambiguous.span.line, ambiguous.span.col) == (2, 7)
    assert "own acme-tickets/report" in ambiguous.help and "own tool-subagent-report/report" in ambiguous.help


def test_bare_own_bash_is_ambiguous_in_the_shipped_catalog_too():
    with pytest.raises(DshError) as info:
        Program.load(texts={"mine.dsh": "scope mine { parent root\n own bash }\n"})
    assert [d.code for d in _diags(info)] == ["DSH220"]


def test_qualified_own_registers_that_packages_definition():
    catalog = overlay(load_catalog(), EXAMPLE)
    program = Program.load([TICKETS], catalog=catalog)
    view = program.view(Request(scope="ticket-child", with_services={"ticket-tracker"}))
    assert view.entry("report").definition == "tool-subagent-report/report"
    text = "scope noter { parent root\n  own acme-tickets/report }\n"
    other = Program.load(texts={"n.dsh": text}, catalog=catalog)
    view = other.view(Request(scope="noter", with_services={"ticket-tracker"}))
    assert view.entry("report").definition == "acme-tickets/report"


@pytest.mark.parametrize(
    "entry, code",
    [
        ("nope/report", "DSH201"),  # unknown package
        ("tool-fs/report", "DSH202"),  # the package does not define it
        ("tool-bash/run_code", "DSH301"),  # the reserved name stays reserved when qualified
        ("tool-*/report", "DSH108"),  # no globs in `own`
    ],
)
def test_qualified_own_bypasses_are_refused(entry, code):
    with pytest.raises(DshError) as info:
        Program.load(texts={"m.dsh": f"scope m {{ parent root\n own {entry} }}\n"})
    assert code in [d.code for d in _diags(info)]


def test_two_qualified_entries_registering_one_name_are_a_duplicate():
    text = "scope m { parent root\n own tool-bash/bash, tool-bash-persistent/bash }\n"
    with pytest.raises(DshError) as info:
        Program.load(texts={"m.dsh": text})
    assert [d.code for d in _diags(info)] == ["DSH306"]


def test_a_tool_without_a_local_body_is_unavailable_at_gate_five():
    program = Program.load([TICKETS], catalog=overlay(load_catalog(), EXAMPLE))
    request = Request(preset="tickets", with_services={"ticket-tracker"})
    gates = {g.gate: g for g in program.explain(request, "ticket_read")}
    assert [gates[g].status for g in ("registered", "visible", "projected", "allowed")] == ["pass"] * 4
    assert gates["ready"].status == "fail" and gates["ready"].value == "unavailable"
    assert program.view(request).entry("ticket_read").ready == "unavailable"
    assert program.view(request).entry("read").ready == "ready"


def test_calling_a_tool_without_a_local_body_is_answered_unavailable_at_gate_five(tmp_path):
    program = Program.load([TICKETS], catalog=overlay(load_catalog(), EXAMPLE))
    request = Request(preset="tickets", with_services={"ticket-tracker"})
    ctx, state = session(program, request, str(tmp_path), log_path=str(tmp_path / "log.jsonl"))
    try:
        result = Pipeline(DEFAULT_STAGES).run(ToolCall.from_model("c1", "ticket_read", '{"id": "OPS-1"}'), ctx).result
    finally:
        state.close()
        ctx.log.close()
    # answered by gate 5 before any body is looked up: a structured denial naming the gate, not UNKNOWN_TOOL
    assert result.is_error and "code" not in result.error
    assert result.decided_by == (("gate:ready", None),)
    assert "no local body: calls answer unavailable" in result.content


def test_project_file_catalog_entry_is_read_relative_to_the_file(tmp_path):
    (tmp_path / ".dshc").write_text('catalog = "plugins"\n')
    assert read_project(str(tmp_path / ".dshc")).catalog == (str(tmp_path / "plugins"),)
    (tmp_path / ".dshc").write_text('catalog = ["a", "b"]\n')
    assert read_project(str(tmp_path / ".dshc")).catalog == (str(tmp_path / "a"), str(tmp_path / "b"))
    (tmp_path / ".dshc").write_text("catalog = 3\n")
    with pytest.raises(ValueError, match="catalog"):
        read_project(str(tmp_path / ".dshc"))


def test_a_folder_without_a_manifest_is_refused_not_ignored(tmp_path, cli):
    result = cli("compile", "standard", "--catalog", str(tmp_path / "missing"), "--json")
    assert result.code == 2 and [d["code"] for d in result.json()["diagnostics"]] == ["DSH501"]


def test_an_overlay_replacing_a_shipped_package_loses_its_local_body(plugin):
    todo = Path(str(load_catalog.__globals__["shipped_root"]())) / "packages" / "tool-todo.json"
    shutil.copy(todo, plugin / "packages" / "tool-todo.json")
    _edit(plugin / "manifest.json", lambda m: m.update(packages=m["packages"] + ["tool-todo"], replaces=["tool-todo"]))
    program = Program.load(catalog=overlay(load_catalog(), plugin))
    # the schema is the overlay's; the shipped body is not assumed to implement it: fail closed
    assert program.view(Request()).entry("todo_write").ready == "unavailable"
