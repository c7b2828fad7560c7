"""One truth at every door: compile, explain, decide, `dshc test`, the Claude Code hook, MCP and the decision API
give a call the effect it will have. Small generated policies (rules, guards, defaults, sandbox modes) and calls
(paths inside and outside the workspace, shell lines, invalid arguments) hold the doors together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.testclient import TestClient

from conftest import claude_code_answer, examples
from dshc.cli.call_decision import decide_call, runtime_effect
from dshc.cli.decision_api import routes
from dshc.cli.serve import Served, ServeOptions
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.runtime.types import Allow, Ask, Deny, ToolCall

TOOLS = ("bash", "write", "edit", "read")
CONDITIONS = {  # tool -> conditions a rule or guard on it may have
    "bash": ('args.command matches "git status*"', 'args.command matches "git *"', 'args.command matches "rm *"'),
    "write": ('args.file_path matches "src/*"', "args.file_path outside workspace", 'args.file_path matches "*.lock"'),
    "edit": ('args.file_path matches "src/*"', "args.file_path outside workspace"),
    "read": ('args.file_path matches "/etc/*"', "args.file_path inside workspace"),
}
LINES = ("git status", "git push origin main", "rm -rf build", "ls && git status", "echo hi > out.txt")
PATHS = ("src/a.py", "notes.md", "/etc/passwd", "../outside.txt", "src/deps.lock")

rules = st.lists(
    st.sampled_from(TOOLS).flatmap(
        lambda tool: st.tuples(
            st.sampled_from(("allow", "ask", "deny")), st.just(tool), st.sampled_from((None, *CONDITIONS[tool]))
        )
    ),
    max_size=3,
)
guards = st.lists(
    st.sampled_from(TOOLS).flatmap(lambda tool: st.tuples(st.just(tool), st.sampled_from(CONDITIONS[tool]))), max_size=1
)
policies = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(("read-only", "workspace-write", "danger-full-access")),
        "approval": st.sampled_from(("ask", "never")),
        "default": st.sampled_from((None, "allow", "ask", "deny")),
        "rules": rules,
        "guards": guards,
    }
)


def _args(tool: str, path: str, line: str) -> dict:
    return {
        "bash": {"command": line, "description": "d"},
        "write": {"file_path": path, "content": "x"},
        "edit": {"file_path": path, "old_string": "a", "new_string": "b"},
        "read": {"file_path": path},
    }[tool]


def _invalid(tool: str, args: dict, kind: str) -> dict:
    """A misspelt required key, or a wrong type for it."""
    key = "command" if tool == "bash" else "file_path"
    if kind == "misspelt":
        return {("comand" if tool == "bash" else "file_pth"): args[key], **{k: v for k, v in args.items() if k != key}}
    return {**args, key: 3}


calls = (
    st.sampled_from(TOOLS)
    .flatmap(
        lambda tool: st.tuples(
            st.just(tool),
            st.sampled_from(PATHS),
            st.sampled_from(LINES),
            st.sampled_from((None, None, "misspelt", "type")),
        )
    )
    .map(lambda c: (c[0], _args(c[0], c[1], c[2]) if c[3] is None else _invalid(c[0], _args(c[0], c[1], c[2]), c[3])))
)


def _policy_text(spec: dict) -> str:
    lines = [
        "policy gen {",
        f"  sandbox {spec['mode']}",
        "  sandbox fallback unsandboxed",
        f"  approval {spec['approval']}",
    ]
    if spec["default"]:
        lines.append(f"  default {spec['default']}")
    for effect, tool, condition in spec["rules"]:
        lines.append(f"  {effect} {tool}" + (f" when {condition}" if condition else ""))
    for index, (tool, condition) in enumerate(spec["guards"]):
        lines.append(f"  guard g{index}: deny {tool} when {condition}")
    return "\n".join(lines) + "\n}\n"


# --- the doors, each as its user meets it --------------------------------------------------------
CLAUDE = {"bash": "Bash", "write": "Write", "edit": "Edit", "read": "Read"}


def _hook(project: Path, tool: str, args: dict) -> str:
    name = CLAUDE[tool]
    tool_input = {key: value for key, value in args.items() if key != "description"}  # Claude's Bash may omit it
    return claude_code_answer(project, "gen", name, tool_input, project)["permissionDecision"]


def _mcp(served: Served, tool: str, args: dict) -> str:
    """The MCP server's pre-decision (what it elicits an approval for) and its pipeline's pre-execute listener
    and guard stage (what `tools/call` runs before the body)."""
    effect, _ = served.pre_decision(tool, args)
    session = served.current()
    entry = session.view.entry(tool)
    call = ToolCall.from_model("c1", tool, args)
    verdicts = [listener(call, entry) for listener in session.ctx.pre_execute]
    verdict = next(v for v in verdicts if v is not None)
    if isinstance(verdict, (Allow, Ask)) and any(isinstance(guard(call, entry), Deny) for guard in session.ctx.guards):
        verdict = Deny("guard")
    listened = {Allow: "allow", Ask: "ask", Deny: "deny"}[type(verdict)]
    if verdict.__class__ is Deny and verdict.code == "INVALID_ARGS":
        listened = "invalid"
    assert effect == ("deny" if listened == "invalid" else listened) or listened == "deny", (effect, listened)
    return listened


def _rest(client: TestClient, tool: str, args: dict, workspace: str) -> str:
    # the server decides under its own policy (`gen`) and workspace, as a server started without --caller-context
    answer = client.post("/v1/decide", json={"tool": tool, "args": args})
    if answer.status_code == 400:
        return "invalid"
    assert answer.status_code == 200, answer.text
    return answer.json()["decision"]


def _dshc_test(cli, project: Path, tool: str, args: dict, expect: str) -> bool:
    """Whether `dshc test` passes a case expecting `expect` for this call."""
    path = project / "gen.test.toml"
    path.write_text(
        f'load = [{json.dumps(str(project / "p.dsh"))}]\n[[test]]\nname = "call"\npolicy = "gen"\n'
        f'workspace = {json.dumps(str(project))}\n[[test.call]]\ntool = "{tool}"\n'
        f'args = {_toml(args)}\nexpect = "{expect}"\n'
    )
    return cli("test", str(path)).code == 0


def _toml(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)  # a JSON string or number is TOML's too


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    return root


@settings(
    max_examples=examples(20),
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=policies, batch=st.lists(calls, min_size=1, max_size=4))
def test_every_door_gives_a_call_the_same_effect(project, cli, spec, batch):
    text = _policy_text(spec)
    (project / "p.dsh").write_text(text)
    program = Program.load([project / "p.dsh"])
    request = Request(policy="gen")
    view = program.view(request)
    workspace = str(project)
    options = ServeOptions((str(project / "p.dsh"),), True, None, request, workspace, None, 10.0, False)
    served = Served(options, lambda text: None)
    served.start()
    client = TestClient(Starlette(routes=routes(served)))
    static = {tool: view.entry(tool).policy for tool in TOOLS}
    for tool in TOOLS:  # explain agrees with compile
        explained = cli("explain", tool, "--load", str(project / "p.dsh"), "--policy", "gen", "--json").json()
        assert explained["policy"] == static[tool], (tool, text)
        assert explained["available"] is (static[tool] != "deny")
    for tool, args in batch:
        decided = decide_call(program, request, tool, args, workspace)
        own = program.decide(request, tool, args, workspace)
        effect = "invalid" if decided.invalid is not None else decided.effect
        event(f"{tool}: {effect} by {decided.gate}; compiled {static[tool]}")
        if decided.invalid is None:
            # the policy's word is Program.decide's; only the sandbox may change it, and only to ask or deny
            assert decided.policy_effect == own.effect
            assert (
                decided.effect == runtime_effect(own.effect)
                or decided.gate == "sandbox"
                and decided.effect in ("ask", "deny")
                and runtime_effect(own.effect) != "deny"
            )
            # compile's per-tool effect holds for every call (conditional: either)
            if static[tool] != "conditional":
                assert own.effect == static[tool], (tool, args, text)
            if decided.effect == "deny":  # every denial names what decided it and where
                assert decided.deciding and all(span is not None for _, span in decided.deciding), decided
        on_cli = cli(
            "decide",
            tool,
            "--args",
            json.dumps(args),
            "--load",
            str(project / "p.dsh"),
            "--policy",
            "gen",
            "--workspace",
            workspace,
            "--json",
        )
        assert (on_cli.code == 2) if effect == "invalid" else (on_cli.json()["decision"] == effect), (on_cli.out, text)
        assert _rest(client, tool, args, workspace) == effect
        assert _mcp(served, tool, args) == effect
        hooked = _hook(project, tool, args)
        assert hooked == ("deny" if effect == "invalid" else effect), (tool, args, text)
        if effect == "invalid":
            assert not _dshc_test(cli, project, tool, args, "deny")
        else:
            assert _dshc_test(cli, project, tool, args, effect), (tool, args, text)
    served.close()


# --- the examples the doors are held to ----------------------------------------------------------
TEAM = (
    'policy team extends workspace-write {\n  default deny\n  allow bash when args.command matches "git status *"\n}\n'
)


def test_decide_refuses_a_misspelt_key_with_the_schema_path_and_a_did_you_mean(cli):
    done = cli("decide", "bash", "--args", '{"comand": "git push"}', "--json")
    assert done.code == 2
    diagnostic = done.json()["diagnostics"][0]
    assert "'command' is a required property (schema `/required`)" in diagnostic["message"]
    assert diagnostic["help"] == "`comand` is close to `command`: did you mean `command`?"
    typed = cli("decide", "read", "--args", '{"file_path": ["a"]}')
    assert typed.code == 2 and "file_path: ['a'] is not of type 'string'" in typed.err + typed.out
    # the parameter root stays open (the reference's schemas say nothing else): an extra key is a call
    assert cli("decide", "read", "--args", '{"file_path": "a", "extra": 1}', "--policy", "workspace-write").code == 0


def test_decide_gives_the_sandbox_refusal_and_keeps_the_policy_word(cli, tmp_path):
    done = cli(
        "decide",
        "write",
        "--args",
        '{"file_path": "/etc/passwd", "content": "x"}',
        "--policy",
        "workspace-write",
        "--workspace",
        str(tmp_path),
        "--json",
    )
    data = done.json()
    assert done.code == 1 and (data["decision"], data["policy_effect"], data["gate"]) == ("ask", "allow", "sandbox")
    assert data["reason"].startswith("the `workspace-write` sandbox refuses writes outside the workspace")
    assert "sandbox_permissions" in data["reason"]
    edit = cli(
        "decide",
        "edit",
        "--args",
        '{"file_path": "../../../etc/shadow", "old_string": "a", "new_string": "b"}',
        "--policy",
        "workspace-write",
        "--workspace",
        str(tmp_path),
        "--json",
    ).json()
    assert edit["decision"] == "ask"
    # where approval is `never`, no escalation can run it
    never = Program.load(texts={"p.dsh": "policy strict extends workspace-write { approval never }\n"})
    decided = decide_call(
        never, Request(policy="strict"), "write", {"file_path": "/etc/passwd", "content": "x"}, str(tmp_path)
    )
    assert decided.effect == "deny" and "approval is `never`" in decided.reason
    # read-only: any change asks for the narrowest wider mode
    inside = decide_call(
        Program.load(),
        Request(policy="read-only"),
        "write",
        {"file_path": "a.txt", "content": "x", "sandbox_permissions": "workspace-write", "justification": "j"},
        str(tmp_path),
    )
    assert inside.effect == "ask" and inside.sandbox.escalate_to == "workspace-write"


def test_the_issue_example_is_conditional_and_decides_per_call(cli, tmp_path):
    path = tmp_path / "team.dsh"
    path.write_text(TEAM)
    flags = ("--load", str(path), "--policy", "team")
    assert {t["name"]: t["policy"] for t in cli("compile", *flags, "--json").json()["tools"]}["bash"] == "conditional"
    assert cli("explain", "bash", *flags).code == 0
    args = '{"command": "git status", "description": "d"}'
    assert cli("decide", "bash", "--args", args, *flags).code == 0
    denied = cli("decide", "bash", "--args", '{"command": "git push", "description": "d"}', *flags, "--json").json()
    assert denied["decision"] == "deny" and denied["decided_by"] == [{"rule": "team/default", "source": f"{path}:2:11"}]


def test_dshc_test_fails_a_case_whose_arguments_miss_the_schema(cli, tmp_path):
    (tmp_path / "a.test.toml").write_text(
        '[[test]]\nname = "typo"\npolicy = "workspace-write"\n'
        '[[test.call]]\ntool = "bash"\nargs = { comand = "git push" }\n'
        'expect = "allow"\n'
    )
    done = cli("test", str(tmp_path / "a.test.toml"))
    assert done.code == 1 and "expected allow, but the arguments are invalid" in done.out


def test_the_hook_denies_a_misspelt_key_naming_the_schema(project):
    (project / "p.dsh").write_text("policy open extends workspace-write { }\n")
    answer = claude_code_answer(project, "open", "Write", {"file_pth": "a.txt", "content": "x"}, project)
    assert answer["permissionDecision"] == "deny"
    assert "'file_path' is a required property" in answer["permissionDecisionReason"]


def test_the_runtime_refuses_invalid_arguments_before_any_rule_and_names_the_rule_of_a_denial(cli, tmp_path):
    (tmp_path / "p.dsh").write_text(
        'policy p extends workspace-write {\n  deny bash when args.command matches "rm *"\n}\n'
    )
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        "\n".join(
            json.dumps(c)
            for c in [
                {"id": "bad", "name": "bash", "arguments": {"comand": "rm -rf /"}},
                {"id": "rm", "name": "bash", "arguments": {"command": "rm -rf build", "description": "d"}},
            ]
        )
        + "\n"
    )
    log = tmp_path / "events.jsonl"
    done = cli(
        "run",
        str(calls),
        "--load",
        str(tmp_path / "p.dsh"),
        "--policy",
        "p",
        "--workspace",
        str(tmp_path),
        "--log",
        str(log),
        "--json",
    )
    rows = {row["id"]: row for row in map(json.loads, done.out.splitlines())}
    assert rows["bad"]["error"]["code"] == "INVALID_ARGS" and "did you mean `command`" in rows["bad"]["content"]
    assert f"decided by p/deny@2 at {tmp_path / 'p.dsh'}:2:3" in rows["rm"]["content"]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    denial = next(r for r in records if r["type"] == "tool/decision" and r["callId"] == "rm")
    assert denial["decidedBy"] == [["p/deny@2", f"{tmp_path / 'p.dsh'}:2:3"]]


def test_web_search_without_a_provider_answers_the_tools_own_code(cli, tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"id": "s", "name": "web_search", "arguments": {"query": "q"}}) + "\n")
    done = cli("run", str(calls), "--without", "web-provider", "--workspace", str(tmp_path), "--json")
    row = json.loads(done.out.splitlines()[0])
    assert row["error"]["code"] == "WEB_PROVIDER_UNAVAILABLE" and row["error"]["name"] == "WebError"
    assert "gate:ready at presets/hosts.dsh" in row["content"]


def test_an_approved_sandbox_ask_runs_escalated_and_a_rejected_one_writes_nothing(tmp_path):
    from dshc.cli.host import session
    from dshc.runtime.scheduler import run_batch

    workspace, outside = tmp_path / "ws", tmp_path / "out"
    workspace.mkdir()
    outside.mkdir()
    program, request = Program.load(), Request(policy="workspace-write")
    for answer, written in (("rejected", False), ("allowed-once", True)):
        ctx, _ = session(program, request, str(workspace), approver=lambda call, reason, a=answer: a)
        call = ToolCall.from_model(f"w-{answer}", "write", {"file_path": str(outside / "a.txt"), "content": "x"})
        outcomes, _ = run_batch([call], ctx)
        assert outcomes[0].result.is_error is not written and (outside / "a.txt").exists() is written


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from((1.0, 1.5)),
    st.text(max_size=3),
    st.lists(st.sampled_from(("a", 1)), max_size=2),
    st.just({"a": 1}),
)


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_the_argument_check_finds_the_problem_jsonschema_finds_first(program, data):
    """The one argument check (runtime.arguments) reads the catalog's schema keywords itself, so a deciding
    process loads no validation library; its first problem is jsonschema's, for the texts the runtime
    passes and the objects the doors pass alike."""
    import jsonschema
    from dshc.runtime.arguments import check

    entry = data.draw(st.sampled_from(program.view(Request(host="web")).tools))
    keys = [*entry.parameters.get("properties", {}), "comand", "extra"]
    args = data.draw(st.dictionaries(st.sampled_from(keys), VALUES, max_size=4))
    errors = sorted(jsonschema.Draft202012Validator(entry.parameters).iter_errors(args), key=lambda e: list(e.path))
    want = (
        (
            "/".join(map(str, errors[0].absolute_path)) or "arguments",
            "/" + "/".join(map(str, errors[0].absolute_schema_path)),
            errors[0].message,
        )
        if errors
        else None
    )
    for schema in (entry.parameters_json, entry.parameters):
        found = check(schema, args)
        assert (None if found is None else (found.where, found.schema_path, found.message)) == want


def test_the_mcp_server_names_the_rule_of_a_denial_and_refuses_invalid_arguments(tmp_path):
    """What `tools/call` answers (`Served.run_call`, the text the CallToolResult carries)."""
    (tmp_path / "p.dsh").write_text(
        'policy p extends workspace-write {\n  deny bash when args.command matches "rm *"\n}\n'
    )
    options = ServeOptions(
        (str(tmp_path / "p.dsh"),), True, None, Request(policy="p"), str(tmp_path), None, 10.0, False
    )
    served = Served(options, lambda text: None)
    served.start()
    try:
        denied = served.run_call(ToolCall.from_model("d", "bash", {"command": "rm -rf x", "description": "d"}), None)
        assert denied.result.is_error
        assert f"rule `deny` matched (decided by p/deny@2 at {tmp_path / 'p.dsh'}:2:3)" in denied.result.content
        invalid = served.run_call(ToolCall.from_model("i", "bash", {"comand": "ls"}), None)
        assert invalid.result.is_error and invalid.result.error["code"] == "INVALID_ARGS"
        assert "did you mean `command`" in invalid.result.content
        outside = served.run_call(ToolCall.from_model("w", "write", {"file_path": "/etc/passwd", "content": "x"}), None)
        assert outside.result.is_error and "sandbox refuses writes outside the workspace" in outside.result.content
        assert served.pre_decision("write", {"file_path": "/etc/passwd", "content": "x"})[0] == "ask"
    finally:
        served.close()


def test_a_shell_tool_whose_writes_its_policy_decides_otherwise_is_conditional(tmp_path):
    # `allow bash` with no default: `rm -rf build` is also a write of `build`, which nothing allows; compile
    # said `allow` for bash while the call was denied (found by the property above)
    (tmp_path / "p.dsh").write_text("policy gen {\n  sandbox read-only\n  approval ask\n  allow bash\n}\n")
    program = Program.load([tmp_path / "p.dsh"])
    request = Request(policy="gen")
    assert program.view(request).entry("bash").policy == "conditional"
    rm = {"command": "rm -rf build", "description": "d"}
    assert program.decide(request, "bash", rm, str(tmp_path)).effect == "deny"
    ls = {"command": "ls", "description": "d"}
    assert program.decide(request, "bash", ls, str(tmp_path)).effect == "allow"
    # with a word on writes that allows them, the tool is the rule's again
    (tmp_path / "p.dsh").write_text("policy gen {\n  sandbox read-only\n  allow bash\n  allow write\n}\n")
    assert Program.load([tmp_path / "p.dsh"]).view(request).entry("bash").policy == "allow"
