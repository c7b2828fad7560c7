"""Gates 1–3 on the shipped declarations: the pinned tool sets of the reference composition."""

from __future__ import annotations

import pytest

from dshc.compiler.diagnostics import DshError
from dshc.compiler.request import Request

STANDARD = [
    "ask_user_question",
    "bash",
    "create_goal",
    "edit",
    "exit_plan_mode",
    "get_goal",
    "glob",
    "grep",
    "interrupt_agent",
    "job_kill",
    "job_list",
    "job_output",
    "list_agents",
    "ralph",
    "read",
    "read_image",
    "send_message",
    "skill",
    "subagent",
    "subagent_fork",
    "todo_write",
    "update_goal",
    "web_search",
    "workflow",
    "write",
]
PARALLEL = {
    "read",
    "read_image",
    "web_search",
    "web_fetch",
    "session_trace",
    "session_event_trace",
    "session_event_read",
    "subagent",
    "subagent_fork",
}
CORDIS = [
    "cordis_define",
    "cordis_inspect_list",
    "cordis_inspect_query",
    "cordis_inspect_self",
    "cordis_run",
    "cordis_stop",
    "cordis_undefine",
]


def names(program, **kwargs):
    return list(program.view(Request(**kwargs)).names)


def test_standard_on_a_linux_web_host_with_attachments_is_exactly_25(program):
    assert names(program, preset="standard", host="web") == STANDARD


def test_standard_without_attachments_drops_only_read_image(program):
    assert names(program, preset="standard", host="web", without_services={"attachments"}) == [
        n for n in STANDARD if n != "read_image"
    ]


def test_standard_on_win32_swaps_bash_for_pwsh(program):
    assert names(program, preset="standard", host="web", platform="win32") == sorted(
        [n for n in STANDARD if n != "bash"] + ["pwsh"]
    )


def test_the_web_host_defaults_to_the_standard_preset(program):
    assert names(program, host="web") == STANDARD


def test_minimal_is_the_persistent_bash_and_the_editor(program):
    view = program.view(Request(preset="minimal", host="web"))
    assert view.names == ("bash", "str_replace_editor")
    assert view.entry("bash").definition == "tool-bash-persistent/bash"


def test_code_mode_puts_only_run_code_on_the_wire(program):
    view = program.view(Request(preset="code", host="web"))
    assert view.names == ("run_code",)
    assert [e.name for e in view.sdk] == STANDARD


def test_both_mode_lists_every_tool_plus_run_code(program):
    view = program.view(Request(preset="standard", host="web", mode="both"))
    assert view.names == tuple(sorted(STANDARD + ["run_code"]))
    assert [e.name for e in view.sdk] == STANDARD


def test_cordis_adds_the_seven_cordis_tools(program):
    assert names(program, preset="cordis", host="web") == sorted(STANDARD + CORDIS)


def test_cordis_needs_the_dynamic_package_runner(program):
    with pytest.raises(DshError) as info:
        program.view(Request(preset="cordis", host="web", without_services={"cordis-runner"}))
    (diag,) = info.value.diagnostics
    assert diag.code == "DSH401" and "tool-cordis" in diag.message and "cordis-runner" in diag.message
    assert diag.span is not None and diag.span.path == "presets/standard.dsh"


def test_any_other_missing_package_service_fails_the_preset(program):
    with pytest.raises(DshError) as info:
        program.view(Request(preset="standard", host="web", without_services={"web"}))
    assert [d.code for d in info.value.diagnostics] == ["DSH401"]
    assert "tool-web" in info.value.diagnostics[0].message


def test_headless_host_without_a_preset(program):
    expected = sorted([n for n in STANDARD if n != "ask_user_question"] + ["str_replace_editor"])
    assert names(program, host="headless") == expected
    assert len(expected) == 25
    assert len(names(program, host="headless", without_services={"attachments"})) == 24
    win = names(program, host="headless", platform="win32")
    assert "pwsh" in win and "bash" not in win and len(win) == 25


def test_headless_host_has_no_roster(program):
    with pytest.raises(DshError) as info:
        program.view(Request(preset="standard", host="headless"))
    assert info.value.diagnostics[0].code == "DSH403"


@pytest.mark.parametrize("mode", ["native", "code", "both"])
def test_exit_plan_mode_is_listed_in_every_mode(program, mode):
    view = program.view(Request(preset="standard", host="web", mode=mode))
    listed = set(view.names) | {e.name for e in view.sdk or ()}
    assert "exit_plan_mode" in listed


def test_web_fetch_is_absent_from_standard(program):
    assert "web_fetch" not in names(program, preset="standard", host="web")


@pytest.mark.parametrize("preset", ["standard", "cordis", "minimal"])
def test_execution_is_parallel_only_for_opt_in_definitions(program, preset):
    view = program.view(Request(preset=preset, host="web"))
    for entry in view.tools:
        assert entry.execution == ("parallel" if entry.name in PARALLEL else "exclusive"), entry.name


def test_parallel_names_in_standard(program):
    view = program.view(Request(preset="standard", host="web"))
    assert {e.name for e in view.tools if e.execution == "parallel"} == {
        "read",
        "read_image",
        "subagent",
        "subagent_fork",
        "web_search",
    }


def test_continuable_child_gets_its_own_report(program):
    assert names(program, preset="standard", host="web", scope="continuable-child") == sorted(STANDARD + ["report"])
    assert "report" not in names(program, preset="standard", host="web", scope="child")


def test_escalation_parameters_appear_only_when_backends_confine(program):
    confined = program.view(Request(preset="standard", host="web"))
    bare = program.view(Request(preset="standard", host="web", without_services={"sandbox"}))
    for name in ("bash", "write", "edit"):
        assert {"sandbox_permissions", "justification"} <= set(confined.entry(name).parameters["properties"])
        assert not {"sandbox_permissions", "justification"} & set(bare.entry(name).parameters["properties"])
    assert "sandbox_permissions" not in confined.entry("read").parameters["properties"]


def test_web_search_stays_listed_without_a_provider(program):
    view = program.view(Request(preset="standard", host="web", without_services={"web-provider"}))
    assert view.entry("web_search").ready == "unavailable"
    assert program.view(Request(preset="standard", host="web")).entry("web_search").ready == "ready"


def test_plan_mode_and_readiness_never_change_the_fingerprint(program):
    base = program.view(Request(preset="standard", host="web", policy="plan"))
    planned = program.view(Request(preset="standard", host="web", policy="plan", plan=True))
    unready = program.view(Request(preset="standard", host="web", policy="plan", without_services={"web-provider"}))
    assert base.fingerprint == planned.fingerprint == unready.fingerprint
    assert planned.names == base.names
    assert planned.entry("write").policy == "deny" and base.entry("write").policy != "deny"


def test_views_are_frozen(program):
    view = program.view(Request(preset="standard", host="web"))
    with pytest.raises(AttributeError):
        view.tools[0].name = "x"  # type: ignore[misc] - the point is that it fails
    params = view.entry("bash").parameters
    params["properties"].clear()
    assert view.entry("bash").parameters["properties"], "handing out parameters must not expose the frozen entry"


def test_a_seen_request_is_answered_from_the_cache(program):
    first = program.view(Request(preset="standard", host="web"))
    assert program.view(Request(preset="standard", host="web")) is first


def test_compile_json_shape(cli):
    result = cli("compile", "standard", "--host", "web", "--json")
    assert result.code == 0
    data = result.json()
    assert [t["name"] for t in data["tools"]] == STANDARD
    assert set(data) == {"preset", "host", "platform", "scope", "mode", "policy", "fingerprint", "tools"}
    assert data["fingerprint"].startswith("sha256:")
    assert set(data["tools"][0]) == {
        "name",
        "package",
        "definition",
        "execution",
        "parameters",
        "description",
        "policy",
        "ready",
    }
    code = cli("compile", "code", "--host", "web", "--json").json()
    assert [t["name"] for t in code["tools"]] == ["run_code"] and len(code["sdk"]) == 25


def test_compile_table_without_json(cli):
    result = cli("compile", "standard", "--host", "web")
    assert result.code == 0
    assert "25 on the wire" in result.out and "fingerprint sha256:" in result.out


@pytest.mark.parametrize(
    "argv, code",
    [
        (["compile", "standrad", "--host", "web"], "DSH204"),
        (["compile", "standard", "--host", "wbe"], "DSH205"),
        (["compile", "standard", "--scope", "chidl"], "DSH206"),
        (["compile", "standard", "--without", "attachment"], "DSH203"),
        (["compile", "standard", "--policy", "workspace"], "DSH207"),
    ],
)
def test_misspelled_names_exit_2_with_did_you_mean(cli, argv, code):
    result = cli(*argv, "--json")
    assert result.code == 2
    (diag,) = result.json()["diagnostics"]
    assert diag["code"] == code and diag["help"].startswith("did you mean")
