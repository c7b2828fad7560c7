"""Tool exports validated with each API's official SDK types (openai, anthropic, mcp), for the
standard, minimal, code and cordis presets; OpenAI strict mode; the code-mode TypeScript SDK."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from pydantic import TypeAdapter

from dshc.compiler.interop.exports import GEMINI_KEYS, export, strict_schema
from dshc.compiler.interop.typescript import declaration
from dshc.compiler.request import Request


PRESETS = {
    "standard": Request(preset="standard"),
    "minimal": Request(preset="minimal"),
    "code": Request(preset="code"),
    "cordis": Request(preset="cordis"),
}


# each SDK loads with the first test that validates with it (anthropic's types alone take a second to import,
# and every test process collects this module)
@pytest.fixture(scope="module")
def openai_tool():
    return TypeAdapter(pytest.importorskip("openai.types.chat").ChatCompletionToolParam)


@pytest.fixture(scope="module")
def anthropic_tool():
    return TypeAdapter(pytest.importorskip("anthropic.types").ToolParam)


@pytest.fixture(scope="module")
def mcp_types():
    return pytest.importorskip("mcp.types")


@pytest.fixture(scope="module", params=list(PRESETS))
def view(request, program):
    return program.view(PRESETS[request.param])


def _strict_ok(schema, path="$"):
    """Every object closed and fully required: what OpenAI's strict mode demands."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            assert schema.get("additionalProperties") is False, path
            assert sorted(schema.get("required", [])) == sorted(schema.get("properties", {})), path
        for key, value in schema.items():
            if key in ("properties",):
                for name, sub in value.items():
                    _strict_ok(sub, f"{path}.{name}")
            elif isinstance(value, (dict, list)):
                _strict_ok(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for item in schema:
            _strict_ok(item, path)


def test_openai_tools_validate_with_the_sdk_types(view, openai_tool):
    data, _ = export(view, "openai")
    assert data["fingerprint"] == view.fingerprint
    assert [t["function"]["name"] for t in data["tools"]] == list(view.names)
    for tool in data["tools"]:
        assert openai_tool.validate_python(tool)["type"] == "function"


def test_openai_strict_closes_every_schema_it_marks_strict(view, openai_tool):
    data, notes = export(view, "openai", strict=True)
    strict = 0
    for tool in data["tools"]:
        openai_tool.validate_python(tool)
        function = tool["function"]
        if function["strict"]:
            strict += 1
            _strict_ok(function["parameters"])
        else:  # a tool left non-strict is named in a note, never silently changed
            assert any(n.startswith(function["name"] + ": not strict") for n in notes)
    assert strict >= 1
    assert data["fingerprint"] == view.fingerprint


def test_strict_mode_makes_optional_fields_nullable_and_keeps_open_objects_honest():
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"type": "integer"},
            "mode": {"type": "string", "enum": ["a", "b"]},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    closed, problems = strict_schema(schema)
    assert problems == [] and closed["required"] == ["path", "limit", "mode"]
    assert closed["properties"]["limit"]["type"] == ["integer", "null"]
    assert closed["properties"]["mode"]["enum"] == ["a", "b", None]
    assert schema["required"] == ["path"]  # the view's own schema is untouched
    _, problems = strict_schema({"type": "object", "properties": {"meta": {"type": "object"}}})
    assert problems == ["open object at $.meta"]


def test_anthropic_tools_validate_with_the_sdk_types(view, anthropic_tool):
    data, _ = export(view, "anthropic")
    for tool in data["tools"]:
        checked = anthropic_tool.validate_python(tool)
        assert checked["input_schema"]["type"] == "object"
    assert [t["name"] for t in data["tools"]] == list(view.names)


def test_mcp_tools_validate_with_the_sdk_types(view, mcp_types):
    data, _ = export(view, "mcp")
    result = mcp_types.ListToolsResult.model_validate({"tools": data["tools"]})
    assert [t.name for t in result.tools] == list(view.names)
    # nothing was renamed, dropped or coerced on the way into the SDK's model
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in result.tools] == data["tools"]


def test_gemini_declarations_use_only_the_openapi_subset(view):
    data, notes = export(view, "gemini")
    declarations = data["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declarations] == list(view.names)

    def walk(schema, where):
        assert set(schema) <= GEMINI_KEYS, (where, set(schema) - GEMINI_KEYS)
        for name, sub in schema.get("properties", {}).items():
            walk(sub, f"{where}.{name}")
        if "items" in schema:
            walk(schema["items"], where + "[]")
        for sub in schema.get("anyOf", []):
            walk(sub, where + "|")

    for declaration_ in declarations:
        walk(declaration_["parameters"], declaration_["name"])


def test_code_mode_wire_is_run_code_and_the_sdk_is_a_typescript_declaration(program):
    view = program.view(PRESETS["code"])
    data, _ = export(view, "anthropic")
    assert [t["name"] for t in data["tools"]] == ["run_code"]
    text = declaration(view)
    assert view.fingerprint in text and "export declare const tools: Tools;" in text
    for entry in view.sdk:
        assert f"  {entry.name}(args: " in text
    assert "file_path: string;" in text and "limit?: number;" in text
    with pytest.raises(ValueError, match="no code-mode SDK"):
        declaration(program.view(PRESETS["standard"]))
    tsc = shutil.which("tsc")
    if tsc:  # where a TypeScript compiler is installed, it must accept the file as it stands
        path = __import__("tempfile").mktemp(suffix=".d.ts")
        open(path, "w").write(text)
        assert subprocess.run([tsc, "--noEmit", path], capture_output=True).returncode == 0


def test_compile_format_flags(cli):
    result = cli("compile", "minimal", "--format", "openai", "--strict")
    assert result.code == 0, result.err
    data = result.json()
    assert data["format"] == "openai" and data["fingerprint"].startswith("sha256:")
    assert cli("compile", "minimal", "--json").json()["fingerprint"] == data["fingerprint"]
    bad = cli("compile", "minimal", "--format", "anthropic", "--strict")
    assert bad.code == 2 and "--strict" in bad.err
    assert cli("compile", "minimal", "--format", "yaml").code == 2
    ts = cli("export", "typescript", "code")
    assert ts.code == 0 and "export interface ReadArgs" in ts.out


def test_export_claude_code_writes_exact_rules_and_names_the_rest(cli, tmp_path):
    source = tmp_path / "team.dsh"
    source.write_text(
        'policy team "T" {\n  approval ask\n  default ask\n  allow read, read_image, glob, grep\n'
        "  allow edit\n"
        '  allow bash when args.command matches "npm *" or args.command matches "git status"\n'
        '  deny bash when args.command matches "rm -rf *"\n'
        "  ask write when args.file_path outside workspace\n"
        "  guard g: deny edit when plan_mode\n}\n"
    )
    result = cli("export", "claude-code", "--load", str(source), "--policy", "team")
    assert result.code == 0, result.err
    permissions = json.loads(result.out)["permissions"]
    assert permissions == {
        "allow": ["Read", "Glob", "Grep", "Bash(npm *)", "Bash(git status)"],
        "deny": ["Bash(rm -rf *)"],
    }
    assert "team/allow@5" in result.err and "also covers write" in result.err  # `Edit` would allow Write too
    assert "team/ask@8" in result.err and f"{source}:8:3" in result.err
    assert "team/guard:g" in result.err and "team/default" in result.err
    assert "team/deny@7" in result.err and "other spellings of its options (`rm -f -r -- *`)" in result.err
