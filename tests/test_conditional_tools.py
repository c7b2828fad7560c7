"""A tool whose rules allow some calls and deny others is `conditional` in compile, explain and the ui matrix."""

from __future__ import annotations

from dshc.cli.ui.surface import matrix
from dshc.compiler.program import Program

TEAM = """policy team extends workspace-write {
  default deny
  allow bash when args.command matches "git status *"
}
"""


def _team(tmp_path):
    path = tmp_path / "team.dsh"
    path.write_text(TEAM)
    return str(path)


def test_compile_lists_a_tool_some_calls_may_use_as_conditional(cli, tmp_path):
    done = cli("compile", "--host", "web", "--policy", "team", "--load", _team(tmp_path), "--json")
    policies = {tool["name"]: tool["policy"] for tool in done.json()["tools"]}
    assert policies["bash"] == "conditional" and policies["read"] == "deny"
    text = cli("compile", "--host", "web", "--policy", "team", "--load", _team(tmp_path)).out
    assert any(line.split()[:1] == ["bash"] and "conditional" in line.split() for line in text.splitlines())


def test_explain_names_the_allowing_rule_and_what_decides_other_calls_and_exits_0(cli, tmp_path):
    path = _team(tmp_path)
    done = cli("explain", "bash", "--host", "web", "--policy", "team", "--load", path)
    assert done.code == 0, done.out + done.err
    assert done.out.startswith("`bash` is available for some calls")
    assert f'available for calls where `args.command matches "git status *"` (team/allow@3 at {path}:3:3)' in done.out
    assert (
        f"other calls: `deny` (no rule matched; the policy default is `deny`; team/default at {path}:2:11)" in done.out
    )
    data = cli("explain", "bash", "--host", "web", "--policy", "team", "--load", path, "--json").json()
    assert data["available"] is True and data["policy"] == "conditional"
    per_call = next(g for g in data["gates"] if g["gate"] == "allowed")["per_call"]
    assert {
        "effect": "allow",
        "rule": "team/allow@3",
        "when": 'args.command matches "git status *"',
        "source": f"{path}:3:3",
    } in per_call["rules"]
    assert per_call["otherwise"]["effect"] == "deny"


def test_a_default_deny_with_only_deny_rules_or_asks_under_approval_never_stays_deny():
    program = Program.load(
        texts={
            "p.dsh": """policy p {
  default deny
  deny bash when args.command matches "rm *"
}
policy q {
  approval never
  default deny
  ask bash when args.command matches "git *"
}
"""
        }
    )
    from dshc.compiler.request import Request

    for name in ("p", "q"):
        entry = program.view(Request(host="web", policy=name)).entry("bash")
        assert entry.policy == "deny", name


def test_the_ui_matrix_marks_a_conditional_tool(tmp_path):
    program = Program.load([_team(tmp_path)])
    data = matrix(program, {"host": "web", "policy": "team"}, [])
    cell = data["cells"]["bash"][0]
    assert cell["policy"] == "conditional" and cell["label"] == "on · conditional"
    assert data["cells"]["read"][0]["label"] == "on · deny"
