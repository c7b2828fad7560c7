"""Input limits: past each documented limit a DSH110 diagnostic with a span (exit 2), never a crash;
at the limit, and for flat chains of any length, the file is accepted and every command works."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dshc.compiler import limits
from dshc.compiler.diagnostics import DshError
from dshc.cli.host import session
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.runtime.pipeline import Pipeline
from dshc.runtime.stages import DEFAULT_STAGES
from dshc.runtime.types import ToolCall

from conftest import run_cli


def _diagnostics(text: str):
    try:
        Program.load(texts={"limits.dsh": text}, shipped=False)
    except DshError as exc:
        return exc.diagnostics
    return ()


def _policy(condition: str) -> str:
    return f"policy p {{\n  deny read when {condition}\n}}\n"


def _nested_not(depth: int) -> str:
    return "not " * depth + "plan_mode"


def _nested_groups(depth: int) -> str:
    # each level is an `or` holding an `and`: two condition levels per parenthesis
    return "(plan_mode or flag x and " * (depth // 2) + "plan_mode" + ")" * (depth // 2)


def _nested_list(depth: int) -> str:
    return "[" * depth + '"a"' + "]" * depth


def _only_limit_error(diags, line: int, col: int, words: str):
    assert [(d.code, d.span.line, d.span.col) for d in diags] == [("DSH110", line, col)], diags
    assert words in diags[0].message, diags[0].message


@pytest.mark.parametrize(
    "condition",
    [_nested_not(limits.MAX_CONDITION_DEPTH), _nested_groups(limits.MAX_CONDITION_DEPTH)],
    ids=["not", "groups"],
)
def test_conditions_at_the_depth_limit_are_accepted(condition):
    assert _diagnostics(_policy(condition)) == ()


def test_a_not_chain_past_the_limit_is_a_diagnostic_at_the_first_level_too_deep():
    depth = limits.MAX_CONDITION_DEPTH
    diags = _diagnostics(_policy(_nested_not(depth + 1)))
    _only_limit_error(diags, 2, len("  deny read when ") + 1 + 4 * depth, "conditions nested more than 64 deep")


@pytest.mark.parametrize("depth", [limits.MAX_CONDITION_DEPTH + 2, 600, 5_000])
def test_nested_groups_past_the_limit_are_one_diagnostic(depth):
    diags = _diagnostics(_policy(_nested_groups(depth)))
    assert [d.code for d in diags] == ["DSH110"] and diags[0].span.line == 2


@pytest.mark.parametrize("operator", ["and", "or"])
def test_flat_chains_of_any_length_are_one_node(operator):
    program = Program.load(texts={"chain.dsh": _policy(f" {operator} ".join(["plan_mode"] * 2_000))}, shipped=False)
    (rule,) = program.resolved.policies["p"].rules
    assert len(rule.condition.items) == 2_000


def test_lists_at_and_past_the_depth_limit():
    member = "preset p {{ mount tool-fs when platform in {} }}\n"
    assert [d.code for d in _diagnostics(member.format(_nested_list(limits.MAX_LIST_DEPTH)))] == ["DSH305"]
    diags = _diagnostics(member.format(_nested_list(400)))
    _only_limit_error(
        diags,
        1,
        len("preset p { mount tool-fs when platform in ") + limits.MAX_LIST_DEPTH + 1,
        "lists nested more than 16 deep",
    )


@pytest.mark.parametrize("digits", [4_301, 65])
def test_a_long_number_literal_is_a_diagnostic_not_a_conversion_error(digits):
    text = f"preset p {{ mount tool-fs {{ x = {'7' * digits} }} }}\n"
    _only_limit_error(
        _diagnostics(text),
        1,
        len("preset p { mount tool-fs { x = ") + 1,
        f"number literal of {digits:,} characters; the limit is 64",
    )


def test_numbers_at_the_limit_still_convert():
    text = f"preset p {{ mount tool-fs {{ x = {'7' * 64} }} }}\n"
    assert [d.code for d in _diagnostics(text)] == ["DSH209"]  # an unknown key, so the value was read


def test_long_strings_and_names_past_their_limits():
    long_string = '"' + "a/" * (limits.MAX_STRING_CHARS // 2) + '"'
    _only_limit_error(
        _diagnostics(_policy(f"args.file_path matches {long_string}")),
        2,
        len("  deny read when args.file_path matches ") + 1,
        "string literal of 65,538 characters",
    )
    _only_limit_error(
        _diagnostics("policy " + "p" * (limits.MAX_NAME_CHARS + 1) + " { deny read }\n"),
        1,
        8,
        "name of 1,025 characters; the limit is 1,024",
    )


def test_a_path_of_six_thousand_characters_is_an_ordinary_value():
    path = "a/" * 3_000
    assert _diagnostics(_policy(f'args.file_path matches "{path}*"')) == ()


def test_an_oversized_file_is_refused_before_it_is_read_as_text(tmp_path: Path):
    big = tmp_path / "big.dsh"
    big.write_bytes(b"#" * (limits.MAX_FILE_BYTES + 1))
    result = run_cli("check", str(big))
    assert result.code == 2 and "error[DSH110]: file is 16,777,217 bytes" in result.err, result.err


@pytest.mark.parametrize("command", [["check"], ["fmt", "--check"], ["verify", "--no-shipped"]])
def test_every_command_that_reads_files_reports_limits_with_exit_2(tmp_path: Path, command):
    deep = tmp_path / "deep.dsh"
    deep.write_text(_policy(_nested_not(3_000)), encoding="utf-8")
    result = run_cli(*command, str(deep))
    assert result.code == 2, (result.code, result.err)
    assert f"{deep}:2:" in result.err and "DSH110" in result.err and "Traceback" not in result.err


def test_the_codes_table_lists_the_limit_code():
    result = run_cli("codes")
    assert "DSH110" in result.out


# --- tool arguments -----------------------------------------------------------------------------
def _string_parameter_calls(view, skip: set[str], bad: str) -> list[ToolCall]:
    """One call per (tool definition on the wire, string parameter): that one holds `bad`, the others are valid."""
    calls = []
    for entry in view.tools:
        if entry.definition in skip:
            continue
        skip.add(entry.definition)
        schema = json.loads(entry.parameters_json)
        properties = schema.get("properties", {})
        plain = {key for key, spec in properties.items() if spec.get("type") == "string" and "enum" not in spec}
        for name in sorted(plain):
            args = {key: "x" for key in schema.get("required", ()) if key in plain}
            args[name] = bad
            calls.append(ToolCall.from_model(f"{entry.name}.{name}", entry.name, args))
    return calls


# the whole pipeline, except recording the call in the event log (which must encode the text as UTF-8)
STAGES_FROM_DECISION = [stage for stage in DEFAULT_STAGES if stage[0] not in ("record-call", "record-result")]


@pytest.mark.parametrize(
    "bad, words",
    [
        ("a\0b", "contains a NUL character at offset 1"),
        ("ok\udc80", "contains an invalid character (U+DC80, an unpaired surrogate) at offset 2"),
    ],
    ids=["nul", "surrogate"],
)
def test_an_unusable_string_in_any_parameter_of_any_tool_is_invalid_args(program, tmp_path, bad, words):
    tried: set[str] = set()
    tools: set[str] = set()
    for host, preset in [
        ("web", "standard"),
        ("headless", None),
        *(("web", p) for p in sorted(program.resolved.presets)),
    ]:
        request = Request(preset=preset, host=host, policy="danger-full-access")
        try:
            calls = _string_parameter_calls(program.view(request), tried, bad)
        except DshError:
            continue  # a preset this host cannot compose
        ctx, state = session(program, request, str(tmp_path))
        try:
            for call in calls:
                result = Pipeline(STAGES_FROM_DECISION).run(call, ctx).result
                parameter = call.id.split(".", 1)[1]
                assert (result.error or {}).get("code") == "INVALID_ARGS", (call, result)
                assert (
                    result.content
                    == f"Error: the arguments of `{call.name}` do not fit its schema: {parameter}: {words}"
                ), result
                tools.add(call.name)
        finally:
            state.close()
            ctx.log.close()
    assert len(tools) >= 25, sorted(tools)
    assert list(tmp_path.iterdir()) == []  # nothing ran


def test_nested_strings_and_keys_are_named_by_their_path(program, tmp_path):
    from dshc.runtime.arguments import _unusable_string

    assert _unusable_string({"a": [{"b": "ok"}, {"c": ["fine", "x\0"]}]}) == (
        "a/1/c/1",
        "contains a NUL character at offset 1",
    )
    assert _unusable_string({"ok": 1, "k\0": "v"})[1] == "key contains a NUL character at offset 1"
    assert _unusable_string({"deep": _deeply_nested(5_000, "\0")})[0].count("/") == 5_000
    assert _unusable_string({"a": "plain", "b": ["é", "日本"], "c": {"d": None}}) is None


def _deeply_nested(depth: int, leaf):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def test_a_nul_reaches_the_tool_as_invalid_args_through_dshc_run(tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps({"id": "1", "name": "bash", "arguments": {"command": "echo a\u0000b", "description": "x"}}) + "\n"
    )
    result = run_cli("run", str(calls), "--policy", "danger-full-access", "--workspace", str(tmp_path), "--json")
    (line,) = [json.loads(text) for text in result.out.splitlines()]
    assert result.code == 1 and line["error"]["code"] == "INVALID_ARGS" and "command:" in line["content"], result


def test_an_unpaired_surrogate_is_invalid_args_and_the_log_keeps_it_exactly(tmp_path):
    from dshc.runtime.events import read_log

    calls, log = tmp_path / "calls.jsonl", tmp_path / "events.jsonl"
    # json.dumps escapes the lone surrogate as \udc80, which json.loads turns back into one
    calls.write_text(json.dumps({"id": "1", "name": "read", "arguments": {"file_path": "a\udc80b"}}) + "\n")
    result = run_cli("run", str(calls), "--workspace", str(tmp_path), "--log", str(log), "--json")
    (line,) = [json.loads(text) for text in result.out.splitlines()]
    assert result.code == 1 and line["error"]["code"] == "INVALID_ARGS", result
    read = read_log(str(log))
    assert not read.problems
    (call,) = [r for r in read.records if r["type"] == "tool/call"]
    assert call["arguments"]["file_path"] == "a\udc80b"
    assert run_cli("replay", str(log), "--policy", "read-only").code in (0, 1)


# --- linear resolution and lints ------------------------------------------------------------------
def _pairwise_shadowed(program) -> list[tuple[str, str]]:
    """DSH307 by its definition, every pair of rules: the reference the indexed lint must agree with."""
    from dshc.compiler.policy import RANK
    from dshc.compiler.resolve import target_matches_tool

    tools = program.catalog.definitions.values()

    def covers(rule, tool):
        return any(target_matches_tool(t, tool.name, tool, tool.aliases) for t in rule.targets)

    found = []
    for policy in program.resolved.policies.values():
        for rule in policy.decl.rules:
            covered = [t for t in tools if covers(rule, t)]
            for other in policy.rules if covered else ():
                if (
                    RANK[other.effect] > RANK[rule.effect]
                    and other.condition in (None, rule.condition)
                    and all(covers(other, t) for t in covered)
                ):
                    found.append((str(rule.span), str(other.span)))
                    break
    return found


def test_the_indexed_shadowed_rule_lint_agrees_with_the_pairwise_definition():
    from dshc.compiler.checks import check_shadowed_rules

    sys.path.insert(0, str(Path(__file__).parent / "bench"))
    from bench_resolution import glob_rules

    # 500 rules: enough shadowing whatever the catalog's name count (the workload cycles through it)
    program = Program.load(texts={"many.dsh": glob_rules(500)})
    indexed = [(str(d.span), d.message.rsplit(" at ", 1)[1]) for d in check_shadowed_rules(program)]
    assert indexed == _pairwise_shadowed(program)
    assert len(indexed) >= 10  # the workload does shadow rules, so agreement is not vacuous


def test_a_deep_chain_inherits_from_its_root():
    sys.path.insert(0, str(Path(__file__).parent / "bench"))
    from bench_resolution import chains

    program = Program.load(texts={"chains.dsh": chains(1_500)})
    resolved = program.resolved
    assert [m.row_name for m in resolved.presets["c1499"].mounts] == ["tool-fs"]
    assert [r.effect for r in resolved.policies["q1499"].rules] == ["allow"]
    assert [n.text for n in resolved.scopes["s1499"].hide] == ["web_*"] and resolved.scopes["s1499"].parent == "s1498"
