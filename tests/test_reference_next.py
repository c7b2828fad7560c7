"""Following the reference's next release needs data only: `examples/reference-next/` (a catalog
overlay plus presets) loads on top of the baseline and compiles to the facts of that release
(26 packages / 63 schema entries / 58 names, persistent pwsh, the agent team, web_search.queries[])."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshc.compiler.catalog import load_catalog
from dshc.compiler.catalog_overlay import overlay
from dshc.compiler.diagnostics import DshError
from dshc.compiler.program import Program
from dshc.compiler.request import Request

NEXT = Path(__file__).resolve().parent.parent / "examples" / "reference-next"
TEAM_TOOLS = {
    "followup_task",
    "interrupt_agent",
    "list_agents",
    "send_message",
    "spawn_teammate",
    "team_task_create",
    "team_task_get",
    "team_task_list",
    "team_task_update",
    "wait_agent",
}


@pytest.fixture(scope="module")
def catalog():
    return overlay(load_catalog(), NEXT)


@pytest.fixture(scope="module")
def program(catalog):
    return Program.load([NEXT / "next.dsh"], catalog=catalog)


def test_next_release_counts_26_packages_63_schema_entries_58_names(catalog):
    counts = catalog.counts()
    assert (counts["packages"], counts["schema_entries"], counts["unique_names"]) == (26, 63, 58)
    assert load_catalog().counts()["packages"] == 24  # the baseline itself is untouched


def test_next_release_duplicated_names(catalog):
    assert {n for n, tools in catalog.by_name.items() if len(tools) > 1} == {
        "bash",
        "pwsh",
        "interrupt_agent",
        "list_agents",
        "send_message",
    }


def test_agent_team_adds_ten_tools_seven_new_names(catalog):
    team = catalog.package_by_id["experimental-tool-agent-team"]
    names = {t.name for t in team.tools}
    assert names == TEAM_TOOLS
    assert len(names - set(load_catalog().by_name)) == 7
    shipped = load_catalog().by_name
    for reused in ("interrupt_agent", "list_agents", "send_message"):
        mine = next(t for t in team.tools if t.name == reused)
        assert mine.parameters != shipped[reused][0].parameters, reused  # same name, another schema
    assert "agent-teams" in team.requires


def test_parallel_safe_set_is_unchanged_by_the_next_release(catalog):
    assert sum(t.parallel_safe for t in catalog.definitions.values()) == 8


def test_web_search_takes_queries_with_the_limit_in_the_description(program, catalog):
    (search,) = catalog.by_name["web_search"]
    assert search.parameters["required"] == ["queries"]
    assert search.parameters["properties"]["queries"]["items"] == {"type": "string"}
    assert catalog.package_by_id["tool-web"].config["searchMaxQueries"].default == 4
    entry = program.view(Request(preset="standard")).entry("web_search")
    assert "between 1 and 4 queries" in entry.description
    other = Program.load(
        texts={"w.dsh": "preset w extends standard {\n  mount tool-web { fetch = false, searchMaxQueries = 2 }\n}\n"},
        catalog=catalog,
    )
    assert "between 1 and 2 queries" in other.view(Request(preset="w")).entry("web_search").description


def test_report_delivery_wakeup_is_renamed_next_step(catalog):
    knob = catalog.package_by_id["tool-subagent-report"].config["reportDelivery"]
    assert knob.values == ("quiet", "next-step") and knob.default == "next-step"
    with pytest.raises(DshError) as info:
        Program.load(
            texts={"r.dsh": 'preset r {\n  mount tool-subagent-report { reportDelivery = "wakeup" }\n}\n'},
            catalog=catalog,
        )
    assert [d.code for d in info.value.diagnostics] == ["DSH214"]


@pytest.mark.parametrize(
    "platform, shell, definition",
    [
        ("linux", "bash", "tool-bash-persistent/bash"),
        ("darwin", "bash", "tool-bash-persistent/bash"),
        ("win32", "pwsh", "tool-pwsh-persistent/pwsh"),
    ],
)
def test_minimal_preset_is_persistent_bash_off_win32_and_persistent_pwsh_on_it(program, platform, shell, definition):
    view = program.view(Request(preset="minimal-next", platform=platform))
    assert view.names == tuple(sorted((shell, "str_replace_editor")))
    assert view.entry(shell).definition == definition


def test_team_tools_live_in_the_lead_and_teammate_own_scopes_shadowing_the_old_names(program):
    for scope in ("team-lead", "teammate"):
        view = program.view(Request(preset="team", scope=scope, with_services={"agent-teams"}))
        assert TEAM_TOOLS <= set(view.names), scope
        for name in TEAM_TOOLS:
            assert view.entry(name).definition == f"experimental-tool-agent-team/{name}"
        assert "report" not in view.names


def test_team_composition_disables_subagent_control(program):
    comp = program.composition(Request(preset="team", scope="team-lead", with_services={"agent-teams"}))
    control = [r for r in comp.rows if r.package == "tool-subagent-control"]
    assert control and all(r.status == "disabled" for r in control)


def test_the_agent_team_service_gates_the_team_scopes(program):
    with pytest.raises(DshError) as info:
        program.view(Request(preset="team", scope="team-lead"))
    assert [d.code for d in info.value.diagnostics] == ["DSH401"]
    assert "agent-teams" in info.value.diagnostics[0].message


def test_python_code_runtime_is_a_known_service(catalog):
    assert "code-runtime-python" in catalog.services


def test_baseline_presets_still_compile_on_top_of_the_next_release(program):
    assert len(program.view(Request(preset="standard")).names) == 25
    assert program.view(Request(scope="continuable-child")).entry("report").definition == "tool-subagent-report/report"
