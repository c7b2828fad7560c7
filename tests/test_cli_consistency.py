"""The CLI speaks one way everywhere: positionals anywhere among options, PRESET as a positional,
the shipped declarations under diff/verify sides, and syntax errors that name what was meant;
`dshc ls` lists what there is."""

from __future__ import annotations

import json
from argparse import Namespace

import pytest

from dshc.compiler.diagnostics import DshError

EXTENDS_SHIPPED = """\
policy careful "Careful" extends workspace-write {
  deny bash when args.command matches "git push *"
}
"""


@pytest.mark.parametrize(
    "argv",
    [
        ("decide", "read", "--args", '{"file_path": "a.md"}', "minimal", "--json"),
        ("decide", "--json", "read", "minimal", "--args", '{"file_path": "a.md"}'),
        ("decide", "--args", '{"file_path": "a.md"}', "--json", "read", "minimal"),
    ],
)
def test_positionals_may_stand_anywhere_among_options(cli, argv):
    result = cli(*argv)
    # minimal mounts no `read`: the preset really was read from its position
    assert result.code == 1 and result.json()["gate"] == "registered", result.err


def test_compile_and_explain_take_their_preset_after_options(cli):
    assert cli("compile", "--json", "minimal").json()["preset"] == "minimal"
    assert cli("explain", "--json", "str_replace_editor", "--host", "web", "minimal").json()["available"] is True


def test_explain_all_honours_its_preset(cli):
    minimal = {row["tool"]: row["available"] for row in cli("explain", "--all", "minimal", "--json").json()["tools"]}
    standard = {row["tool"]: row["available"] for row in cli("explain", "--all", "--json").json()["tools"]}
    assert minimal["str_replace_editor"] and not minimal["read"]
    assert standard["read"] and not standard["str_replace_editor"]
    after = {
        row["tool"]: row["available"]
        for row in cli("explain", "--json", "--all", "--host", "web", "minimal").json()["tools"]
    }
    assert after == minimal
    both = cli("explain", "--all", "minimal", "standard")
    assert both.code == 2 and "explain --all takes one PRESET" in both.err


def test_run_takes_preset_as_a_positional_and_keeps_the_flag(cli, tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"id": "1", "name": "read", "arguments": {"file_path": "nope.md"}}) + "\n")
    positional = cli("run", str(calls), "minimal", "--workspace", str(tmp_path), "--json")
    flag = cli("run", "--preset", "minimal", str(calls), "--workspace", str(tmp_path), "--json")
    standard = cli("run", str(calls), "--workspace", str(tmp_path), "--json")
    assert positional.out == flag.out
    assert json.loads(positional.out)["error"]["code"] != json.loads(standard.out).get("error", {}).get("code")
    clash = cli("run", str(calls), "standard", "--preset", "minimal")
    assert clash.code == 2 and "two presets" in clash.err


def side(spec: str, *load: str, no_shipped: bool = False):
    from dshc.cli.sides import side_program_of as _side_program

    return _side_program(spec, Namespace(load=list(load), no_shipped=no_shipped, catalog=None))


def test_diff_and_verify_sides_load_the_shipped_declarations(tmp_path):
    # (the side loader `diff OLD NEW` and `verify --against OLD` share; a full diff of the
    # shipped program takes seconds, so the commands themselves are run in test_diff/test_verify)
    path = tmp_path / "careful.dsh"
    path.write_text(EXTENDS_SHIPPED)
    program = side(str(path))
    assert program.resolved.policies["careful"].default.text == "allow"  # inherited from workspace-write
    assert "standard" in program.resolved.presets
    extra = tmp_path / "extra.dsh"
    extra.write_text('scope reviewer-child "A reviewer child" {\n  parent root\n}\n')
    assert "reviewer-child" in side(str(path), str(extra)).resolved.scopes  # --load reaches every side
    assert "reviewer-child" in side("@shipped", str(extra)).resolved.scopes
    with pytest.raises(DshError, match="unknown policy `workspace-write`"):
        side(str(path), no_shipped=True)


def test_diff_names_an_unknown_parent_policy_only_under_no_shipped(cli, tmp_path):
    old = tmp_path / "old.dsh"
    old.write_text(EXTENDS_SHIPPED)
    alone = cli("diff", str(old), str(old), "--no-shipped")
    assert alone.code == 2 and "unknown policy `workspace-write`" in alone.err


def test_a_complete_tree_under_the_shipped_one_says_to_pass_no_shipped(cli, tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "scopes.dsh").write_text('scope root "Root" {\n}\n')
    result = cli("diff", str(tree), "@shipped")
    assert result.code == 2 and "declared twice" in result.err and "pass --no-shipped" in result.err
    verify = cli("verify", "--against", str(tree))
    assert verify.code == 2 and "pass --no-shipped" in verify.err


@pytest.mark.parametrize(
    "condition, message, hint",
    [
        (
            'args.file_path outside "docs/"',
            "`outside` takes a place (`workspace`), not a path",
            'write `not args.file_path matches "docs/*"`',
        ),
        (
            'args.file_path inside "src"',
            "`inside` takes a place (`workspace`), not a path",
            'write `args.file_path matches "src/*"`',
        ),
        (
            'args.command not matches "git *"',
            "`not` goes before the whole test",
            'write `not args.command matches "git *"`',
        ),
        ("args.command is not readonly", "`not` goes before the whole test", "write `not args.command is readonly`"),
        ("args.command matches git*", "`matches` takes a quoted pattern", 'write `matches "git*"`'),
        ('args.command in "ls"', "`in` takes a list", 'write `in ["ls"]`'),
    ],
)
def test_condition_mistakes_name_what_was_probably_meant(cli, tmp_path, condition, message, hint):
    path = tmp_path / "p.dsh"
    path.write_text(f"policy p {{\n  deny bash when {condition}\n}}\n")
    result = cli("check", str(path), "--json")
    assert result.code == 2
    (found,) = result.json()["diagnostics"]
    assert found["code"] == "DSH101" and found["line"] == 2
    assert message in found["message"] and "expected a rule" not in found["message"]
    assert hint in found["help"]


def test_the_suggested_rewrites_parse(cli, tmp_path):
    path = tmp_path / "p.dsh"
    path.write_text(
        'policy p {\n  deny bash when not args.command matches "git *"\n'
        '  deny write when not args.file_path matches "docs/*"\n'
        "  deny bash when not args.command is readonly\n}\n"
    )
    assert cli("check", str(path)).code == 0


# --- ls ------------------------------------------------------------------------------------
def test_ls_lists_every_kind_with_sources(cli):
    data = cli("ls", "--json").json()["items"]
    kinds = {item["kind"] for item in data}
    assert kinds == {"presets", "hosts", "scopes", "policies", "commands", "packages", "tools"}
    by_name = {(i["kind"], i["name"]): i for i in data}
    assert by_name[("presets", "standard")]["source"] == "presets/standard.dsh:2:8"
    assert "extends standard" in by_name[("presets", "code")]["summary"]
    assert by_name[("scopes", "continuable-child")]["summary"].endswith("own tool-subagent-report/report")
    assert by_name[("policies", "plan")]["summary"].endswith("2 rules, 1 guard")
    assert by_name[("packages", "tool-web")]["source"].startswith("catalogs/packages/tool-web.json:")
    assert by_name[("tools", "read")]["summary"].startswith("tool-fs · parallel")


def test_ls_one_kind_and_one_name_and_loaded_files(cli, tmp_path):
    path = tmp_path / "careful.dsh"
    path.write_text(EXTENDS_SHIPPED)
    text = cli("ls", "policies", "--load", str(path)).out
    assert "careful" in text and f"({path}:1:8)" in text and "extends workspace-write" in text
    one = cli("ls", "policy", "careful", "--load", str(path), "--json").json()["items"]
    assert [i["name"] for i in one] == ["careful"]


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (
            ("ls", "presets", "standrd"),
            "DSH204",
            "did you mean `standard`? known: `base`, `code`, `cordis`, `minimal`, `standard`",
        ),
        (
            ("ls", "scopes", "kid"),
            "DSH206",
            "known: `child`, `continuable-child`, `ralph-child`, `root`, `workflow-child`",
        ),
        (("ls", "tools", "raed"), "DSH406", "did you mean `read`?"),
        (("ls", "polices"), "DSH405", "did you mean `policies`? kinds: presets, hosts, scopes, policies"),
    ],
)
def test_ls_unknown_names_list_the_candidates(cli, argv, code, message):
    result = cli(*argv, "--json")
    assert result.code == 2
    (found,) = result.json()["diagnostics"]
    assert found["code"] == code and message in found["help"]
