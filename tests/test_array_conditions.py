"""Array conditions (`all in`, `any in`, `contains`, `length(…)`) and orders on number arguments: decided alike by
the indexed and the reference evaluator, failing closed on a value of another shape, checked against the tools'
declared types, kept by fmt, and split into argument classes `verify` proves over."""

from __future__ import annotations

import json

import pytest

from dshc.compiler import ast
from dshc.compiler.argclasses import argument_classes
from dshc.compiler.program import Program, SourceFile, parse_files
from dshc.compiler.request import Request

POLICY = """\
policy lines "Views of a few listed lines" extends workspace-write {
  default deny
  allow str_replace_editor when args.view_range all in [1, 2, 3] and length(args.view_range) <= 2
  deny str_replace_editor when args.view_range any in [13, 14]
  ask str_replace_editor when args.view_range contains 7
  allow read when args.offset < 10 and args.limit >= 1
  deny read when args.limit > 500
}
"""
ARRAYS = [
    ([1, 2], "allow"),
    ([3], "allow"),
    ([], "allow"),  # no item outside the list, and a length of 0
    ([2, 2], "allow"),
    ([1, 4], "deny"),  # an item the list does not name
    ([1, 2, 3], "deny"),  # three items: past the length bound
    ([7, 1], "ask"),
    ([7, 13], "deny"),  # the deny holds however the other rules read it
    ([14], "deny"),
]
NUMBERS = [
    ({"file_path": "/ws/a", "offset": 5, "limit": 1}, "allow"),
    ({"file_path": "/ws/a", "offset": 10, "limit": 1}, "deny"),
    ({"file_path": "/ws/a", "offset": 9.5, "limit": 2}, "allow"),
    ({"file_path": "/ws/a", "offset": 5, "limit": 0}, "deny"),
    ({"file_path": "/ws/a", "offset": 5, "limit": 501}, "deny"),
]


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"lines.dsh": POLICY})


def _decide(program, tool, args, indexed=True):
    request = Request(preset="minimal" if tool == "str_replace_editor" else "standard", policy="lines")
    decide = program.decide if indexed else program.decide_unindexed
    return decide(request, tool, args, "/ws").effect


@pytest.mark.parametrize("items, effect", ARRAYS)
def test_array_conditions_decide_alike_in_both_evaluators(program, items, effect):
    for indexed in (True, False):
        for value in (items, tuple(items)):  # the runtime hands arrays deep-frozen, as tuples
            args = {"command": "view", "path": "a.txt", "view_range": value}
            assert _decide(program, "str_replace_editor", args, indexed) == effect, (value, indexed)


@pytest.mark.parametrize("args, effect", NUMBERS)
def test_orders_compare_number_arguments(program, args, effect):
    assert _decide(program, "read", args) == effect
    assert _decide(program, "read", args, indexed=False) == effect


@pytest.mark.parametrize("odd", ["1", 2, {"a": 1}, [True], None])
def test_a_value_that_is_not_an_array_of_the_named_items_fails_closed(program, odd):
    """Text, a number, an object or `true` (which is not `1`) never satisfies the allow; a deny of arrays holds on
    any value that is not one."""
    args = {"command": "view", "path": "a.txt", "view_range": odd}
    effect = _decide(program, "str_replace_editor", args)
    assert effect == "deny", (odd, effect)


def test_a_deny_of_an_array_holds_on_a_value_of_another_shape():
    text = POLICY.replace("default deny", "default allow")
    program = Program.load(texts={"lines.dsh": text})
    for odd in ("13", 13, {"x": 13}):
        args = {"command": "view", "path": "a.txt", "view_range": odd}
        assert _decide(program, "str_replace_editor", args) == "deny", odd


@pytest.mark.parametrize("text", ["10", True, None, [5]])
def test_an_order_on_a_value_that_is_not_a_number_never_allows(program, text):
    args = {"file_path": "/ws/a", "offset": text, "limit": 1}
    assert _decide(program, "read", args) == "deny"
    # and on the deny side it holds: `limit > 500` of text may be a large number
    args = {"file_path": "/ws/a", "offset": 1, "limit": text}
    assert _decide(program, "read", args) == "deny"


def test_decide_and_dshc_test_agree_with_the_library(cli, tmp_path):
    path = tmp_path / "lines.dsh"
    path.write_text(POLICY)
    for items, effect in ARRAYS:
        call = json.dumps({"command": "view", "path": "a.txt", "view_range": items})
        result = cli(
            "decide",
            "str_replace_editor",
            "minimal",
            "--args",
            call,
            "--load",
            str(path),
            "--policy",
            "lines",
            "--json",
        )
        assert result.json()["decision"] == effect, (items, result.out + result.err)
    (tmp_path / "lines.test.toml").write_text(
        f'load = [{json.dumps(str(path))}]\n[context]\npreset = "minimal"\npolicy = "lines"\n'
        '[[test]]\nname = "arrays"\n'
        + "".join(
            f'[[test.call]]\ntool = "str_replace_editor"\nargs = {{ command = "view", path = "a.txt", '
            f'view_range = {json.dumps(items)} }}\nexpect = "{effect}"\n'
            for items, effect in ARRAYS
        )
    )
    result = cli("test", str(tmp_path / "lines.test.toml"), "--json")
    assert result.code == 0, result.out + result.err


def test_fmt_keeps_the_array_conditions(cli, tmp_path):
    (document,), diags, _ = parse_files([SourceFile("lines.dsh", POLICY.encode())])
    from dshc.compiler.fmt import format_document

    assert not diags and format_document(document) == POLICY
    rule = document.decls[0].rules[0]
    tests = list(ast.atoms(rule.condition))
    assert tests[0] == ast.ListTest(ast.Fact(("args", "view_range")), "all", (1, 2, 3))
    assert tests[1] == ast.Length(ast.Fact(("args", "view_range")), "<=", 2)
    path = tmp_path / "lines.dsh"
    path.write_text(POLICY)
    assert cli("fmt", "--check", str(path)).code == 0
    assert cli("check", str(path)).code == 0


@pytest.mark.parametrize(
    "condition, message",
    [
        ('str_replace_editor when args.path all in ["a"]', "declare `args.path` of type string"),
        ('str_replace_editor when args.path contains "a"', "declare `args.path` of type string"),
        ("read when length(args.offset) > 2", "declare `args.offset` of type number"),
        (
            "read when args.file_path > 3",
            "`>` compares numbers; the rule's tools declare `args.file_path` of type string",
        ),
        ('read when args.offset < "10"', '`<` compares numbers; `"10"` is not'),
        ("str_replace_editor when length(args.view_range) <= -1", "a length is a count; `-1` is not"),
        ('str_replace_editor when length(args.view_range) == "2"', 'a length is a count; `"2"` is not'),
        ('read when platform all in ["linux"]', "`platform` is not an array argument"),
        ('read when session.read any in ["x"]', "`session.read` is a set of files"),
    ],
)
def test_check_refuses_a_test_the_argument_can_never_pass(cli, tmp_path, condition, message):
    path = tmp_path / "bad.dsh"
    path.write_text(f'policy bad "Bad" extends workspace-write {{\n  allow {condition}\n}}\n')
    result = cli("check", str(path), "--json")
    assert result.code == 2, result.out + result.err
    found = [d for d in result.json()["diagnostics"] if d["code"] == "DSH305"]
    assert any(message in d["message"] for d in found), result.out
    assert all(d["line"] == 2 for d in found)


def test_check_accepts_the_tests_on_an_argument_of_any_type(cli, tmp_path):
    """A tool that declares no type for an argument may be given an array: the tests are not refused."""
    path = tmp_path / "ok.dsh"
    path.write_text(
        'policy ok "Ok" extends workspace-write {\n'
        "  allow str_replace_editor when args.view_range all in [1] and length(args.view_range) < 3\n}\n"
    )
    assert cli("check", str(path)).code == 0


def _conditions(text):
    (document,), diags, _ = parse_files([SourceFile("p.dsh", text.encode())])
    assert not diags
    return [rule.condition for rule in document.decls[0].rules]


def test_argument_classes_of_arrays_are_exact_and_tell_every_test_apart():
    conditions = _conditions(POLICY)
    classes = argument_classes(conditions[:3], shell_tool=False)
    assert classes.exact, classes.notes
    arrays = [w["view_range"] for w in classes.witnesses if isinstance(w.get("view_range"), list)]
    # every subset of the named items and one other, at each length a bound tells apart
    # items in the same lists are one kind: 1, 2, 3 | 13, 14 | 7 | one none names (15)
    kinds = [{1, 2, 3}, {13, 14}, {7}, {15}]
    assert len({frozenset(i for i, kind in enumerate(kinds) if kind & set(a)) for a in arrays}) == 16
    assert [] in arrays
    assert any(len(a) == 3 and len(set(a)) == 1 for a in arrays)  # one item, repeated past the bound
    assert any(w.get("view_range") == "not an array" for w in classes.witnesses)


def test_argument_classes_of_orders_cover_each_side_of_each_bound():
    classes = argument_classes(_conditions(POLICY)[3:], shell_tool=False)
    limits = {w.get("limit") for w in classes.witnesses}
    assert {0, 1, 2, 500, 501} <= limits and "not a number" in limits


def test_many_items_of_one_list_are_one_kind():
    items = ", ".join(map(str, range(10)))
    text = f'policy p "P" {{\n  allow str_replace_editor when args.view_range all in [{items}]\n}}\n'
    classes = argument_classes(_conditions(text), shell_tool=False)
    assert classes.exact and len(classes.witnesses) == 6  # absent, [], [kind], [other], [kind, other], not an array


def test_many_kinds_of_item_are_sampled_and_say_so():
    tests = " or ".join(f"args.view_range contains {n}" for n in range(8))
    text = f'policy p "P" {{\n  allow str_replace_editor when {tests}\n}}\n'
    classes = argument_classes(_conditions(text), shell_tool=False)
    assert not classes.exact and any("kinds of array item" in note for note in classes.notes)


def _verify(cli, tmp_path, old: str, new: str):
    (tmp_path / "old.dsh").write_text(f'policy p "P" extends workspace-write {{\n  default deny\n  {old}\n}}\n')
    (tmp_path / "new.dsh").write_text(f'policy p "P" extends workspace-write {{\n  default deny\n  {new}\n}}\n')
    return cli("verify", str(tmp_path / "new.dsh"), "--against", str(tmp_path / "old.dsh"), "--policy", "p", "--json")


def test_verify_proves_a_length_bound_narrows(cli, tmp_path):
    old = "allow str_replace_editor when args.view_range all in [1, 2, 3]"
    result = _verify(cli, tmp_path, old, old + " and length(args.view_range) <= 2")
    assert result.code == 0, result.out + result.err


def test_verify_finds_the_array_a_wider_rule_lets_through(cli, tmp_path):
    result = _verify(
        cli,
        tmp_path,
        "allow str_replace_editor when args.view_range all in [1, 2, 3]",
        "allow str_replace_editor when args.view_range any in [1, 2, 3]",
    )
    assert result.code == 1, result.out + result.err
    assert "view_range" in json.dumps(result.json())


@pytest.mark.parametrize(
    "wider",
    [
        "allow str_replace_editor when args.view_range all in [1, 2, 3, 4]",
        "allow str_replace_editor when args.view_range contains 1",
    ],
)
def test_the_argument_classes_hold_a_call_a_wider_array_rule_lets_through(wider):
    """What verify decides each class's witness with: among the witnesses of both rules' tests, one the old rule
    refuses and the wider one allows."""
    old = "allow str_replace_editor when args.view_range all in [1, 2, 3]"
    text = f'policy old "Old" extends workspace-write {{\n  default deny\n  {old}\n}}\n'
    text += f'policy new "New" extends workspace-write {{\n  default deny\n  {wider}\n}}\n'
    program = Program.load(texts={"p.dsh": text})
    conditions = [item.condition for name in ("old", "new") for item in program.resolved.policies[name].rules]
    classes = argument_classes(conditions, shell_tool=False)

    def effect(policy, args):
        request = Request(preset="minimal", policy=policy)
        return program.decide(request, "str_replace_editor", {"command": "view", "path": "a", **args}, "/ws").effect

    widened = [w for w in classes.witnesses if effect("old", w) == "deny" and effect("new", w) == "allow"]
    assert widened and all(isinstance(w.get("view_range"), list) for w in widened)


@pytest.mark.parametrize(
    "condition, hint",
    [
        ('args.view_range all "a"', 'write `all in ["a"]`'),
        ('args.view_range any in "a"', 'write `in ["a"]`'),
        ("length args.view_range > 2", "write `length(args.view_range) <= N`"),
    ],
)
def test_a_misspelt_array_test_says_how_to_write_it(cli, tmp_path, condition, hint):
    path = tmp_path / "bad.dsh"
    path.write_text(f'policy bad "Bad" extends workspace-write {{\n  allow str_replace_editor when {condition}\n}}\n')
    result = cli("check", str(path), "--json")
    assert result.code == 2
    (found,) = result.json()["diagnostics"]
    assert found["code"] == "DSH101" and found["line"] == 2 and hint in found["help"], found
