"""List literals compare as lists: `args.view_range == [1, 10]` holds for the JSON array `[1, 10]`, in
`dshc decide` and `dshc test`, in the indexed and the reference evaluator, with `!=` and `in` alike; fmt and
check keep list literals as written."""

from __future__ import annotations

import json
import textwrap

import pytest

from dshc.compiler.program import Program
from dshc.compiler.request import Request

POLICY = """\
policy ranges "Views of listed line ranges only" extends workspace-write {
  default deny
  allow str_replace_editor when args.view_range == [1, 10] and args.path == "a.txt"
  allow str_replace_editor when args.view_range in [[20, 30], [40, -1]] and args.path != "b.txt"
  allow str_replace_editor when args.view_range != [5, 6] and args.path == "c.txt"
  allow str_replace_editor when args.view_range == [] and args.path == "e.txt"
}
"""
CASES = [
    ({"path": "a.txt", "view_range": [1, 10]}, "allow"),
    ({"path": "d.txt", "view_range": [20, 30]}, "allow"),
    ({"path": "d.txt", "view_range": [40, -1]}, "allow"),
    ({"path": "c.txt", "view_range": [1, 2]}, "allow"),
    ({"path": "e.txt", "view_range": []}, "allow"),
    # order and length are part of a list's value; `!=` of the very list is false
    ({"path": "a.txt", "view_range": [10, 1]}, "deny"),
    ({"path": "a.txt", "view_range": [1, 10, 11]}, "deny"),
    ({"path": "b.txt", "view_range": [20, 30]}, "deny"),
    ({"path": "c.txt", "view_range": [5, 6]}, "deny"),
    ({"path": "d.txt", "view_range": [20]}, "deny"),
    ({"path": "e.txt", "view_range": [0]}, "deny"),
]


@pytest.fixture
def policy(tmp_path) -> str:
    path = tmp_path / "ranges.dsh"
    path.write_text(POLICY)
    return str(path)


@pytest.mark.parametrize("args, effect", CASES)
def test_decide_compares_list_literals_as_lists(cli, policy, args, effect):
    call = json.dumps({"command": "view", **args})
    result = cli(
        "decide", "str_replace_editor", "minimal", "--args", call, "--load", policy, "--policy", "ranges", "--json"
    )
    assert result.code == (0 if effect == "allow" else 1), result.out + result.err
    assert result.json()["decision"] == effect


def test_the_indexed_and_the_reference_evaluator_agree_on_lists(policy):
    program = Program.load([policy])
    request = Request(preset="minimal", policy="ranges")
    for args, effect in CASES:
        for frozen in (False, True):  # the runtime hands arguments deep-frozen (arrays as tuples)
            call = {"command": "view", **args}
            if frozen:
                call["view_range"] = tuple(call["view_range"])
            assert program.decide(request, "str_replace_editor", call, "/ws").effect == effect, call
            assert program.decide_unindexed(request, "str_replace_editor", call, "/ws").effect == effect, call


def test_dshc_test_decides_list_arguments(cli, policy, tmp_path):
    (tmp_path / "ranges.test.toml").write_text(
        textwrap.dedent(f"""\
        load = [{json.dumps(policy)}]

        [context]
        preset = "minimal"
        policy = "ranges"

        [[test]]
        name = "only the listed ranges are viewed"

        [[test.call]]
        tool = "str_replace_editor"
        args = {{ command = "view", path = "a.txt", view_range = [1, 10] }}
        expect = "allow"

        [[test.call]]
        tool = "str_replace_editor"
        args = {{ command = "view", path = "d.txt", view_range = [40, -1] }}
        expect = "allow"

        [[test.call]]
        tool = "str_replace_editor"
        args = {{ command = "view", path = "a.txt", view_range = [10, 1] }}
        expect = "deny"
        """)
    )
    result = cli("test", str(tmp_path / "ranges.test.toml"), "--json")
    assert result.code == 0, result.out + result.err


def test_fmt_and_check_keep_list_literals(cli, policy):
    checked = cli("check", policy)
    assert checked.code == 0, checked.out + checked.err
    formatted = cli("fmt", "--check", policy)
    assert formatted.code == 0, formatted.out + formatted.err
    from dshc.compiler.fmt import format_document
    from dshc.compiler.program import SourceFile, parse_files

    (document,), diags, _ = parse_files([SourceFile("ranges.dsh", POLICY.encode())])
    assert not diags and format_document(document) == POLICY
