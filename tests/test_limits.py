"""Input limits: past each documented limit a DSH110 diagnostic with a span (exit 2), never a crash;
at the limit, and for flat chains of any length, the file is accepted and every command works."""
from __future__ import annotations

from pathlib import Path

import pytest

from dshc.compiler import limits
from dshc.compiler.diagnostics import DshError
from dshc.compiler.program import Program

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


@pytest.mark.parametrize("condition", [_nested_not(limits.MAX_CONDITION_DEPTH),
                                       _nested_groups(limits.MAX_CONDITION_DEPTH)], ids=["not", "groups"])
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
    member = 'preset p {{ mount tool-fs when platform in {} }}\n'
    assert [d.code for d in _diagnostics(member.format(_nested_list(limits.MAX_LIST_DEPTH)))] == ["DSH305"]
    diags = _diagnostics(member.format(_nested_list(400)))
    _only_limit_error(diags, 1, len("preset p { mount tool-fs when platform in ") + limits.MAX_LIST_DEPTH + 1,
                      "lists nested more than 16 deep")


@pytest.mark.parametrize("digits", [4_301, 65])
def test_a_long_number_literal_is_a_diagnostic_not_a_conversion_error(digits):
    text = f"preset p {{ mount tool-fs {{ x = {'7' * digits} }} }}\n"
    _only_limit_error(_diagnostics(text), 1, len("preset p { mount tool-fs { x = ") + 1,
                      f"number literal of {digits:,} characters; the limit is 64")


def test_numbers_at_the_limit_still_convert():
    text = f"preset p {{ mount tool-fs {{ x = {'7' * 64} }} }}\n"
    assert [d.code for d in _diagnostics(text)] == ["DSH209"]  # an unknown key, so the value was read


def test_long_strings_and_names_past_their_limits():
    long_string = '"' + "a/" * (limits.MAX_STRING_CHARS // 2) + '"'
    _only_limit_error(_diagnostics(_policy(f"args.file_path matches {long_string}")), 2,
                      len("  deny read when args.file_path matches ") + 1, "string literal of 65,538 characters")
    _only_limit_error(_diagnostics("policy " + "p" * (limits.MAX_NAME_CHARS + 1) + " { deny read }\n"), 1, 8,
                      "name of 1,025 characters; the limit is 1,024")


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
