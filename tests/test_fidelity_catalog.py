"""Catalog-side behaviours pinned to the reference harness (issue 16 items 1, 5, 6, 7, 8), each
test named after the reference behaviour it reproduces."""

from __future__ import annotations

import jsonschema
import pytest

from dshc.compiler.catalog import load_catalog
from dshc.compiler.diagnostics import DshError
from dshc.compiler.interop.exports import export
from dshc.compiler.program import Program
from dshc.compiler.request import Request

STANDARD = Request(preset="standard")


def _entry(program, request, name):
    entry = program.view(request).entry(name)
    assert entry is not None, name
    return entry


# --- 1. the implicit parameter root stays open ---------------------------------------------------
def test_keeps_the_implicit_parameter_root_open(program):
    for tool in load_catalog().definitions.values():
        assert "additionalProperties" not in tool.parameters, tool.definition
        assert tool.parameters.get("required", ["x"]) != [], tool.definition  # no empty `required`
    for entry in program.view(STANDARD).tools:
        assert "additionalProperties" not in entry.parameters, entry.name
        assert entry.parameters.get("required", ["x"]) != [], entry.name


def test_a_call_with_an_extra_top_level_key_is_valid(program):
    schema = _entry(program, STANDARD, "read").parameters
    jsonschema.validate({"file_path": "/w/a.txt", "extra": 1}, schema)
    with pytest.raises(jsonschema.ValidationError):  # still typed: a required key cannot go missing
        jsonschema.validate({"extra": 1}, schema)


def test_a_dropped_parameter_leaves_no_empty_required(program):
    # `enableRunInBackground = false` drops `run_in_background`; nothing else changes shape
    text = 'preset quiet extends standard {\n  mount tool-jobs\n  mount tool-bash { enableRunInBackground = false } when platform != "win32"\n}\n'
    other = Program.load(texts={"q.dsh": text})
    params = _entry(other, Request(preset="quiet"), "bash").parameters
    assert "run_in_background" not in params["properties"] and params["required"] == ["command", "description"]


def test_openai_strict_export_closes_the_open_root_at_export_time(program):
    view = program.view(STANDARD)
    data, _ = export(view, "openai", strict=True)
    read = next(t["function"] for t in data["tools"] if t["function"]["name"] == "read")
    assert read["strict"] is True and read["parameters"]["additionalProperties"] is False
    assert "additionalProperties" not in _entry(program, STANDARD, "read").parameters  # the view stays open
    plain, _ = export(view, "openai")
    assert (
        "additionalProperties"
        not in next(t["function"] for t in plain["tools"] if t["function"]["name"] == "read")["parameters"]
    )


# --- 5. descriptions that follow configuration -----------------------------------------------------
def _subagent_text(provider: str, mode: str) -> str:
    text = (
        f'preset p extends standard {{\n  mount tool-subagent {{ provider = "{provider}", '
        f'backgroundMode = "{mode}" }}\n}}\n'
    )
    program = Program.load(texts={"p.dsh": text})
    return _entry(program, Request(preset="p", with_services={f"subagent-provider-{provider}"}), "subagent").description


def test_subagent_description_depends_on_provider_and_background_mode():
    texts = {(p, m): _subagent_text(p, m) for p in ("spawn", "fork", "codex") for m in ("one-shot", "continuable")}
    assert len(set(texts.values())) == 6
    assert "copy of this conversation" in texts["fork", "one-shot"]
    assert "Codex" in texts["codex", "continuable"]
    assert "send_message" in texts["spawn", "continuable"] and "send_message" not in texts["spawn", "one-shot"]


def test_glob_and_todo_write_descriptions_follow_their_knobs():
    def described(tool, mount):
        program = Program.load(texts={"p.dsh": f"preset p {{\n  provides fs, subprocess\n  mount {mount}\n}}\n"})
        return _entry(program, Request(preset="p"), tool).description

    assert described("glob", "tool-fs-search { sampleOverCapGlobResults = true }") != described(
        "glob", "tool-fs-search { sampleOverCapGlobResults = false }"
    )
    assert "Several tasks" in described("todo_write", "tool-todo { allowParallelInProgress = true }")
    assert "At most one" in described("todo_write", "tool-todo { allowParallelInProgress = false }")


def test_minimal_preset_overrides_the_bash_description(program):
    minimal = _entry(program, Request(preset="minimal"), "bash")
    catalog_text = load_catalog().definitions["tool-bash-persistent/bash"].description
    assert minimal.definition == "tool-bash-persistent/bash" and minimal.description != catalog_text


def test_str_replace_editor_path_is_described_as_absolute(program):
    path = _entry(program, Request(preset="minimal"), "str_replace_editor").parameters["properties"]["path"]
    assert "absolute" in path["description"].lower()


# --- 6. a product subagent row needs its provider ----------------------------------------------------
CODEX = (
    'preset with-codex extends standard {\n  mount tool-subagent as subagent_codex { provider = "codex", '
    'backgroundMode = "one-shot" }\n}\n'
)


def test_product_subagent_row_registers_only_once_its_provider_is_registered():
    program = Program.load(texts={"c.dsh": CODEX})
    without = program.view(Request(preset="with-codex"))
    assert "subagent_codex" not in without.names and "subagent" in without.names
    gates = {g.gate: g for g in program.explain(Request(preset="with-codex"), "subagent_codex")}
    assert gates["registered"].status == "fail" and "subagent-provider-codex" in gates["registered"].reason
    with_provider = program.view(Request(preset="with-codex", with_services={"subagent-provider-codex"}))
    assert "subagent_codex" in with_provider.names


def test_shipped_hosts_register_the_spawn_and_fork_providers(program):
    for host in ("web", "headless"):
        names = program.view(Request(host=host)).names
        assert {"subagent", "subagent_fork"} <= set(names), host
    assert "subagent_fork" not in program.view(Request(without_services={"subagent-provider-fork"})).names


def test_a_provider_no_host_can_register_is_an_unknown_service():
    text = 'preset p extends standard {\n  mount tool-subagent as subagent_x { provider = "nobody" }\n}\n'
    with pytest.raises(DshError) as info:
        Program.load(texts={"p.dsh": text})
    (diag,) = info.value.diagnostics
    assert diag.code == "DSH203" and "subagent-provider-nobody" in diag.message and diag.span.line == 2


# --- 7. the headless host ---------------------------------------------------------------------------
def test_headless_host_provides_a_code_runtime_so_code_mode_compiles(program):
    view = program.view(Request(host="headless", mode="code"))
    assert view.names == ("run_code",) and len(view.sdk) == 25


def test_headless_host_follows_the_tools_mode_setting(cli, monkeypatch):
    monkeypatch.setenv("DSH_TOOLS_MODE", "code")
    assert cli("compile", "--host", "headless", "--json").json()["mode"] == "code"
    monkeypatch.setenv("DSH_TOOLS_MODE", "both")
    assert "run_code" in [t["name"] for t in cli("compile", "--host", "headless", "--json").json()["tools"]]
    monkeypatch.setenv("DSH_TOOLS_MODE", "codes")  # a typo is an argument error, never silently native
    bad = cli("compile", "--host", "headless")
    assert bad.code == 2 and "DSH_TOOLS_MODE" in bad.err


def test_headless_base_rows_include_user_questions(program):
    comp = program.composition(Request(host="headless"))
    assert "user-questions" in comp.services
    assert "ask_user_question" not in program.view(Request(host="headless")).names  # no base row mounts it
    assert len(program.view(Request(host="headless")).names) == 25


# --- 8. structured_output for workflow and ralph children --------------------------------------------
@pytest.mark.parametrize("scope", ["workflow-child", "ralph-child"])
def test_workflow_and_ralph_children_get_structured_output(program, scope):
    entry = _entry(program, Request(scope=scope), "structured_output")
    assert entry.definition == "subagent-in-process-driver/structured_output" and entry.execution == "exclusive"
    gates = {g.gate: g for g in program.explain(Request(scope=scope), "structured_output")}
    assert "own registration" in gates["visible"].reason  # in the child's own scope: restrictions do not reach it
    # the runtime carries its body (runtime/tools/structured_output.py), so gate 5 passes
    assert gates["ready"].value == "ready" and entry.ready == "ready"


def test_structured_output_reaches_no_root_and_no_plain_child(program):
    for scope in ("root", "child", "continuable-child"):
        assert "structured_output" not in program.view(Request(scope=scope)).names, scope


def test_structured_output_is_outside_the_generated_catalog_counts():
    catalog = load_catalog()
    assert "structured_output" in catalog.shipped_names
    assert catalog.counts() == {
        "packages": 24,
        "schema_entries": 52,
        "unique_names": 51,
        "aliases": 1,
        "distinct_shipped_names": 52,
    }


def test_read_with_an_extra_top_level_key_runs_instead_of_failing_invalid_args(program, tmp_path):
    from dshc.cli.host import session
    from dshc.runtime.pipeline import Pipeline
    from dshc.runtime.stages import DEFAULT_STAGES
    from dshc.runtime.types import ToolCall

    (tmp_path / "a.txt").write_text("hello\n")
    ctx, state = session(program, STANDARD, str(tmp_path), log_path=str(tmp_path / "log.jsonl"))
    try:
        args = f'{{"file_path": "{tmp_path / "a.txt"}", "unexpected": true}}'
        result = Pipeline(DEFAULT_STAGES).run(ToolCall.from_model("c1", "read", args), ctx).result
    finally:
        state.close()
        ctx.log.close()
    assert not result.is_error, result.content
    assert "hello" in result.content
