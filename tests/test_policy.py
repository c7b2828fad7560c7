"""Gate 4: strictest-wins decisions, deny-only guards, approval pins, shell structure and paths."""

from __future__ import annotations

import os

import pytest

from dshc.compiler.diagnostics import DshError
from dshc.compiler.program import Program
from dshc.compiler.request import Request

DENY_RM = """
policy no-rm "Denies rm and git push, allows the rest of bash" {
  default ask
  allow bash when args.command matches "*"
  deny bash when args.command matches "rm *"
  deny bash when args.command matches "git push*"
  deny bash when args.command matches "cat .env"
  deny bash when args.command matches "git *" and flag strict-git
}
"""


@pytest.fixture(scope="module")
def guarded() -> Program:
    return Program.load(texts={"no-rm.dsh": DENY_RM})


def decide_call(program, command, **request):
    req = Request(preset="standard", host="web", policy="no-rm", **request)
    return program.decide(req, "bash", {"command": command, "description": "d"}, workspace="/ws")


def call(program, command, **request):
    return decide_call(program, command, **request).effect


OPAQUE = {5, 6, 7}  # a command that cannot be analysed may match every deny whose facts hold (not line 8's flag)


@pytest.mark.parametrize(
    "command, lines",
    [
        ("cd x && git push", {6}),
        ("timeout 5 rm -rf /", {5}),
        ("echo $(rm -rf ~)", {5}),  # the inner `rm` meets line 5; `echo` of a computed word is `echo $X`
        ("{ cat .env; }", {7}),
        ("echo x | sh", OPAQUE),
        ("env FOO=1 nice -n 5 rm -rf /tmp/x", {5}),
        ("bash -c 'git push origin main'", {6}),
        ("ls `rm -rf /`", {5}),
        ("(cd /; rm -rf x)", {5}),
        ("xargs rm < files", {5}),
        ("echo 'unterminated", OPAQUE),
    ],
)
def test_bypass_shapes_are_denied_by_the_rule_they_dodge(guarded, command, lines):
    decision = decide_call(guarded, command)
    assert decision.effect == "deny"
    assert {int(rule.split("@")[1]) for rule, _ in decision.deciding} == lines


@pytest.mark.parametrize("command", ["git status", "ls -la && echo done", "cat README.md | wc -l"])
def test_harmless_commands_stay_allowed(guarded, command):
    assert call(guarded, command) == "allow"


def test_a_bare_git_is_covered_by_a_git_star_rule(guarded):
    assert call(guarded, "git", flags={"strict-git"}) == "deny"
    assert call(guarded, "gitk", flags={"strict-git"}) == "allow"


def test_unparseable_commands_are_never_allowed(guarded):
    decision = decide_call(guarded, "echo $(")
    assert decision.effect == "deny" and {int(rule.split("@")[1]) for rule, _ in decision.deciding} == OPAQUE


def test_strictest_wins_regardless_of_order():
    text = 'policy a "A" {\n  deny glob\n  allow glob\n}\npolicy b "B" {\n  allow glob\n  deny glob\n}\n'
    program = Program.load(texts={"order.dsh": text})
    for name in ("a", "b"):
        decision = program.decide(Request(policy=name), "glob", {"pattern": "*"})
        assert decision.effect == "deny"
        ((rule, span),) = decision.deciding
        assert rule.startswith(f"{name}/deny@") and span.path == "order.dsh"


@pytest.mark.parametrize(
    "first, second, winner",
    [
        ("allow", "ask", "ask"),
        ("ask", "allow", "ask"),
        ("ask", "deny", "deny"),
        ("deny", "ask", "deny"),
        ("allow", "deny", "deny"),
        ("deny", "allow", "deny"),
    ],
)
def test_strictest_wins_for_every_pair_of_effects(first, second, winner):
    text = f'policy p "P" {{\n  approval ask\n  {first} glob\n  {second} glob\n}}\n'
    program = Program.load(texts={"pair.dsh": text})
    for decide in (program.decide, program.decide_unindexed):
        decision = decide(Request(policy="p"), "glob", {"pattern": "*"})
        assert decision.effect == winner
        ((rule, _),) = decision.deciding
        assert rule == f"p/{winner}@{3 if first == winner else 4}"


def test_no_rule_and_no_default_denies():
    program = Program.load(texts={"empty.dsh": 'policy bare "Nothing" {\n  allow read\n}\n'})
    decision = program.decide(Request(policy="bare"), "glob", {"pattern": "*"})
    assert decision.effect == "deny" and "no default" in decision.reason


# the shipped workspace-write refuses outside writes at execution (the reference's behaviour);
# a policy may still ask about them, and that is the rule form these tests exercise
CAREFUL = {
    "careful.dsh": 'policy careful "Asks before writing outside" extends workspace-write {\n'
    "  ask write, edit when args.file_path outside workspace\n}\n"
}


@pytest.fixture(scope="module")
def careful() -> Program:
    return Program.load(texts=CAREFUL)


def test_child_scopes_turn_every_ask_into_a_deny(careful):
    outside = {"file_path": "/etc/passwd", "content": "x"}
    root = careful.decide(Request(preset="standard", policy="careful"), "write", outside, workspace="/ws")
    child = careful.decide(
        Request(preset="standard", policy="careful", scope="child"), "write", outside, workspace="/ws"
    )
    assert (root.effect, child.effect) == ("ask", "deny")
    assert any(rule == "approval never" for rule, _ in child.deciding)


def test_escalation_is_an_ask(program):
    args = {
        "command": "make",
        "description": "build",
        "sandbox_permissions": "danger-full-access",
        "justification": "needs the network",
    }
    assert program.decide(Request(policy="workspace-write"), "bash", args).effect == "ask"
    assert (
        program.decide(Request(policy="workspace-write"), "bash", {"command": "make", "description": "b"}).effect
        == "allow"
    )


def test_read_only_denies_writes_without_an_escalation(program):
    write = program.decide(Request(policy="read-only"), "write", {"file_path": "a", "content": ""})
    assert (write.effect, write.gate) == ("deny", "allowed")
    assert (
        program.decide(
            Request(preset="minimal", policy="read-only"), "str_replace_editor", {"command": "view", "path": "a"}
        ).effect
        == "allow"
    )


def test_plan_policy_denies_mutations_while_planning_and_lists_everything(program):
    args = {"file_path": "notes.md", "content": "x"}
    planning = Request(preset="standard", policy="plan", plan=True)
    assert program.decide(planning, "write", args, workspace="/ws").effect == "deny"
    assert program.decide(planning, "bash", {"command": "ls", "description": "d"}).effect == "deny"
    assert program.decide(planning, "read", {"file_path": "notes.md"}).effect == "allow"
    assert program.decide(Request(preset="standard", policy="plan"), "write", args, workspace="/ws").effect == "allow"
    assert "exit_plan_mode" in program.view(planning).names
    assert program.view(planning).fingerprint == program.view(Request(preset="standard", policy="plan")).fingerprint


def test_paths_are_normalised_before_inside_or_outside(careful, tmp_path):
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "escape").symlink_to(tmp_path)
    request = Request(policy="careful")

    def effect(path):
        return careful.decide(request, "write", {"file_path": path, "content": ""}, workspace=str(workspace)).effect

    assert effect("sub/file.txt") == "allow"
    assert effect(str(workspace / "sub" / ".." / "file.txt")) == "allow"
    assert effect("sub/../../outside.txt") == "ask"
    assert effect("escape/outside.txt") == "ask"  # a symlink leaving the workspace
    assert effect("~/x") == ("allow" if os.path.expanduser("~").startswith(str(workspace)) else "ask")


@pytest.mark.parametrize(
    "text, code",
    [
        ('policy p "P" {\n  allow wirte\n}\n', "DSH202"),
        ('policy p "P" {\n  allow package(tool-fss)\n}\n', "DSH201"),
        ('policy p "P" {\n  allow bash when args.comand matches "x"\n}\n', "DSH208"),
        ('policy p "P" {\n  allow bash when plan_mod\n}\n', "DSH208"),
        ('policy p "P" {\n  allow risk(files)\n}\n', "DSH217"),
    ],
)
def test_rules_naming_unknown_things_are_errors(text, code):
    with pytest.raises(DshError) as info:
        Program.load(texts={"bad.dsh": text})
    assert [d.code for d in info.value.diagnostics] == [code]


def test_decide_cli_names_the_deciding_rule_for_each_outcome(cli, tmp_path):
    policy = tmp_path / "p.dsh"
    policy.write_text(DENY_RM)
    base = ["decide", "bash", "--policy", "no-rm", "--load", str(policy), "--json"]
    allow = cli(*base, "--args", '{"command": "ls", "description": "d"}')
    deny = cli(*base, "--args", '{"command": "cd x && git push", "description": "d"}')
    ask = cli(
        "decide",
        "write",
        "--policy",
        "workspace-write",
        "--workspace",
        str(tmp_path),
        "--json",
        "--args",
        '{"file_path": "/etc/hosts", "content": "", "sandbox_permissions": "danger-full-access", '
        '"justification": "the host file lives outside"}',
    )
    for result, code, effect in ((allow, 0, "allow"), (deny, 1, "deny"), (ask, 1, "ask")):
        data = result.json()
        assert (result.code, data["decision"]) == (code, effect)
        assert data["rules"] and all(r["source"] and r["source"].count(":") >= 2 for r in data["rules"])
    assert str(policy) in deny.json()["rules"][0]["source"]
    bad = cli("decide", "bash", "--args", "{not json")
    assert bad.code == 2 and "Traceback" not in bad.err


def test_the_tool_fact_names_the_called_tool():
    text = 'policy by-tool "Tool fact" {\n  default allow\n  deny * when tool == "bash"\n}\n'
    program = Program.load(texts={"t.dsh": text})
    request = Request(policy="by-tool")
    assert program.decide(request, "bash", {"command": "ls", "description": "d"}).effect == "deny"
    assert program.decide(request, "read", {"file_path": "a"}).effect == "allow"
    assert program.view(request).entry("bash").policy == "deny"
    assert program.view(request).entry("read").policy == "allow"


# --- decide runs every gate (issue 10.4) ------------------------------------------------------
GATED = """
preset noshell "Files only" {
  mount tool-fs
}
scope no-bash "Hides bash" {
  parent root
  hide bash
}
"""
LS = {"command": "ls", "description": "d"}


@pytest.fixture(scope="module")
def gated() -> Program:
    return Program.load(texts={"gated.dsh": GATED})


@pytest.mark.parametrize(
    "tool, request_fields, gate",
    [
        ("bash", {"preset": "noshell"}, "registered"),  # a preset that mounts no shell never allows bash
        ("bash", {"scope": "no-bash"}, "visible"),
        ("run_code", {}, "projected"),  # native mode puts no run_code within reach
        ("web_search", {"without_services": {"web-provider"}}, "ready"),
        ("no_such_tool", {}, "registered"),
    ],
)
def test_decide_denies_a_call_an_earlier_gate_stops_naming_that_gate(gated, tool, request_fields, gate):
    request = Request(host="web", policy="danger-full-access", **request_fields)
    for decision in (gated.decide(request, tool, LS), gated.decide_unindexed(request, tool, LS)):
        assert (decision.effect, decision.gate) == ("deny", gate)
        assert f"gate `{gate}`" in decision.reason and decision.deciding[0][0] == f"gate:{gate}"
    # the policy's word alone (another agent's call, as the hook asks) skips dshc's own gates
    assert gated.decide(request, tool, LS, gates=False).gate == "allowed"
    # the same tool passes every gate in the standard preset at the root
    if tool == "bash":
        assert gated.decide(Request(host="web", policy="danger-full-access"), tool, LS).effect == "allow"


def test_code_mode_decides_sdk_tools_by_policy(gated):
    code = Request(host="web", preset="standard", mode="code", policy="danger-full-access")
    decision = gated.decide(code, "bash", LS)
    assert (decision.effect, decision.gate) == ("allow", "allowed")  # reachable through run_code
    assert gated.decide(code, "run_code", {"code": "1"}).gate == "allowed"


def test_decide_cli_names_the_failing_gate_and_exits_1(cli, tmp_path):
    path = tmp_path / "gated.dsh"
    path.write_text(GATED)
    result = cli(
        "decide",
        "bash",
        "noshell",
        "--load",
        str(path),
        "--policy",
        "danger-full-access",
        "--json",
        "--args",
        '{"command": "ls", "description": "d"}',
    )
    assert result.code == 1
    assert (result.json()["decision"], result.json()["gate"]) == ("deny", "registered")
    text = cli("decide", "bash", "noshell", "--load", str(path), "--args", '{"command": "ls"}')
    assert text.code == 1 and text.out.startswith("deny: gate `registered` fails")
    unknown = cli("decide", "bassh", "--args", "{}", "--json")
    assert unknown.code == 2 and unknown.json()["diagnostics"][0]["help"] == "did you mean `bash`?"


# --- depth limits on call arguments (issue 10.6) ----------------------------------------------
def nested(depth: int):
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_arguments_beyond_the_nesting_limit_are_denied_not_a_recursion_error(program):
    request = Request(policy="danger-full-access")
    deep = program.decide(request, "bash", {**LS, "x": nested(1000)})
    assert deep.effect == "deny" and "deeper than 64 levels" in deep.reason
    wide = program.decide(request, "bash", {**LS, "x": [0] * 200_000})
    assert wide.effect == "deny" and "more than 100000 values" in wide.reason
    # within the limits the call is decided as usual: the limit is what refuses it
    assert program.decide(request, "bash", {**LS, "x": nested(60)}).effect == "allow"


@pytest.mark.parametrize("depth", [65, 1000, 100_000])
def test_deep_args_on_the_cli_exit_2_with_a_clear_error(cli, depth):
    text = '{"command": "ls", "description": "d", "x": ' + "[" * depth + "]" * depth + "}"
    result = cli("decide", "bash", "--args", text, "--json")
    assert result.code == 2 and "Traceback" not in result.err
    (diag,) = result.json()["diagnostics"]
    assert diag["code"] == "DSH405" and "deeper than 64 levels" in diag["message"] and diag["help"]
    shallow = '{"command": "ls", "description": "d", "x": ' + "[" * 60 + "]" * 60 + "}"
    assert cli("decide", "bash", "--args", shallow, "--policy", "danger-full-access").code == 0


@pytest.mark.parametrize(
    "args, named",
    [
        ('{"file_path": "a\\u0000b"}', "file_path"),
        ('{"file_path": "a\\udc80"}', "file_path"),
        ('{"file_path": "ok", "x": {"y": ["\\u0000"]}}', "x"),
    ],
)
def test_a_nul_or_lone_surrogate_in_cli_args_is_an_argument_error_naming_it(cli, args, named):
    result = cli("decide", "read", "--args", args, "--json")
    assert result.code == 2 and "Traceback" not in result.err
    (diag,) = result.json()["diagnostics"]
    assert diag["code"] == "DSH405" and f"`{named}`" in diag["message"]
    assert cli("decide", "read", "--args", '{"file_path": "a\\u00e9b"}').code == 0  # ordinary text passes
