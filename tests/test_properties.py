"""Whole-compiler invariants, property-tested: bad text never crashes, tightening never widens."""

from __future__ import annotations

import json

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dshc.compiler.diagnostics import DshError
from dshc.compiler.policy import widens
from dshc.compiler.program import Program
from dshc.compiler.request import Request

from dsl_strategies import documents

from conftest import examples

TOOLS = ["bash", "read", "write", "edit", "glob", "grep", "web_search", "todo_write", "subagent"]
COMMANDS = [
    "ls",
    "git push origin",
    "rm -rf /",
    "cd x && git push",
    "echo $(rm -rf ~)",
    "timeout 5 rm -rf /",
    "echo x | sh",
    "git",
    "cat .env",
    "make test",
]
PATHS = ["a.txt", "../up.txt", "/etc/passwd", "~/x", "sub/../b.txt"]

conditions = st.sampled_from(
    [
        "",
        " when plan_mode",
        " when not plan_mode",
        ' when platform == "win32"',
        ' when scope == "child"',
        ' when args.command matches "git *"',
        ' when args.command matches "rm *"',
        " when args.file_path outside workspace",
        " when has args.sandbox_permissions",
        ' when mode == "code" or plan_mode',
        ' when tool == "bash"',
        ' when tool in ["read", "write"] and not plan_mode',
        # globs on a plain argument: looked up by literal prefix / suffix in the index, with and without facts
        ' when args.file_path matches "*.txt"',
        ' when args.file_path matches "a*" and not plan_mode',
        ' when args.file_path matches "*.txt" and scope == "child"',
        ' when args.file_path matches "/etc/*"',
        # list literals against JSON arrays (a list argument equals the list literal written for it)
        " when args.view_range == [1, 2]",
        " when args.view_range in [[3], [1, 2]] and not plan_mode",
        " when args.view_range != [1, 2]",
    ]
)
targets = st.lists(
    st.sampled_from(TOOLS + ["risk(file-mutation)", "risk(any-process)", "package(tool-fs)", "*"]),
    min_size=1,
    max_size=2,
    unique=True,
)


def _rule(effect, tools, condition):
    # argument conditions only make sense for tools that have that argument
    if "args.command" in condition:
        tools = ["bash"]
    if "args.file_path" in condition:
        tools = ["write", "edit"]
    if "sandbox_permissions" in condition:
        tools = ["bash", "write"]
    if "args.view_range" in condition:
        tools = ["str_replace_editor"]
    return f"  {effect} {', '.join(tools)}{condition}"


rules = st.builds(_rule, st.sampled_from(["allow", "ask", "deny"]), targets, conditions)
policies = st.builds(
    lambda rs, default: 'policy gen "Generated" {\n' + default + "\n".join(rs) + "\n}\n",
    st.lists(rules, max_size=5),
    st.sampled_from(["", "  default allow\n", "  default ask\n"]),
)
requests = st.builds(
    Request,
    preset=st.sampled_from(["standard", "minimal", "code"]),
    platform=st.sampled_from(["linux", "win32"]),
    scope=st.sampled_from(["root", "child"]),
    plan=st.booleans(),
    policy=st.just("gen"),
)


def _calls():
    for tool in TOOLS:
        if tool == "bash":
            for command in COMMANDS:
                yield tool, {"command": command, "description": "d"}
            yield (
                tool,
                {
                    "command": "make",
                    "description": "d",
                    "sandbox_permissions": "danger-full-access",
                    "justification": "j",
                },
            )
        elif tool in ("write", "edit"):
            for path in PATHS:
                yield tool, {"file_path": path, "content": "x", "old_string": "a", "new_string": "b"}
        else:
            yield tool, {}
    for view_range in ([1, 2], [2, 1], [3], []):
        yield "str_replace_editor", {"command": "view", "path": "a.txt", "view_range": view_range}


CALLS = list(_calls())


def _decisions(program, request):
    return [program.decide(request, tool, args, workspace="/ws").effect for tool, args in CALLS]


@settings(max_examples=150)
@given(st.text(max_size=200))
def test_arbitrary_text_only_ever_raises_dsh_error(text):
    try:
        Program.load(texts={"fuzz.dsh": text}, shipped=False)
    except DshError as exc:
        assert exc.diagnostics and all(d.code.startswith("DSH") for d in exc.diagnostics)


@settings(max_examples=examples(35))  # programs that load: about as many as 60 drawn documents used to give
@given(documents)
def test_random_declarations_never_crash_the_compiler(text):
    try:
        program = Program.load(texts={"gen.dsh": text})
    except DshError as exc:
        assert exc.diagnostics and all(d.code.startswith("DSH") for d in exc.diagnostics)
        assume(False)  # only a program that loads reaches views and decisions; too few such → hypothesis fails
    for name in program.resolved.policies:
        request = Request(preset="standard", policy=name)
        program.view(request)
        for tool, args in CALLS[:12]:
            program.decide(request, tool, args, workspace="/ws")


@settings(max_examples=examples(40))
@given(policies, rules.filter(lambda r: r.lstrip().startswith("deny")), requests)
def test_adding_a_deny_rule_never_widens_a_decision(policy, extra, request):
    base = Program.load(texts={"p.dsh": policy})
    tightened = Program.load(texts={"p.dsh": policy.replace("\n}\n", "\n" + extra + "\n}\n")})
    for before, after in zip(_decisions(base, request), _decisions(tightened, request)):
        assert not widens(before, after)


@settings(max_examples=examples(40))
@given(policies, targets, conditions, requests)
def test_adding_a_guard_never_widens_a_decision(policy, tools, condition, request):
    guard = _rule("deny", tools, condition).replace("  deny ", "  guard extra: deny ", 1)
    base = Program.load(texts={"p.dsh": policy})
    guarded = Program.load(texts={"p.dsh": policy.replace("\n}\n", "\n" + guard + "\n}\n")})
    for before, after in zip(_decisions(base, request), _decisions(guarded, request)):
        assert not widens(before, after)


@settings(max_examples=examples(30))
@given(
    st.lists(st.sampled_from(TOOLS + ["job_*", "web_*", "*_goal", "s*"]), min_size=1, max_size=3, unique=True),
    st.sampled_from(["standard", "cordis", "minimal"]),
    st.sampled_from(["linux", "win32"]),
)
def test_adding_a_restriction_never_widens_a_view(patterns, preset, platform):
    scope = 'scope narrow "Narrow" {\n  parent root\n}\n'
    restricted = f'scope narrow "Narrow" {{\n  parent root\n  hide {", ".join(patterns)}\n}}\n'
    request = Request(preset=preset, platform=platform, scope="narrow")
    wide = set(Program.load(texts={"s.dsh": scope}).view(request).names)
    narrow = set(Program.load(texts={"s.dsh": restricted}).view(request).names)
    assert narrow <= wide


@settings(max_examples=examples(40))
@given(
    st.sampled_from(["standard", "cordis", "minimal", "code"]),
    st.sampled_from(["web", "headless"]),
    st.sampled_from(["attachments", "sandbox", "web-provider", "code-runtime", "cordis-runner", "web"]),
    st.sampled_from(["root", "child", "continuable-child"]),
)
def test_removing_a_host_service_never_widens_a_view(preset, host, service, scope):
    program = Program.load()
    request = Request(preset=preset if host == "web" else None, host=host, scope=scope)
    try:
        full = program.view(request)
    except DshError:
        assume(False)  # a cell that does not compose says nothing; too few that do → hypothesis fails
    try:
        fewer = program.view(request.model_copy(update={"without_services": frozenset({service})}))
    except DshError:
        return  # the composition no longer holds: nothing became visible
    reach = lambda view: {e.name for e in (*view.tools, *(view.sdk or ()))}  # noqa: E731
    assert reach(fewer) <= reach(full)
    assert json.loads(fewer.canonical_json())["fingerprint"].startswith("sha256:")


@settings(max_examples=examples(60))
@given(policies, requests)
def test_the_rule_index_decides_exactly_like_trying_every_rule(policy, request):
    program = Program.load(texts={"p.dsh": policy})
    for tool, args in CALLS:
        indexed = program.decide(request, tool, args, workspace="/ws")
        plain = program.decide_unindexed(request, tool, args, workspace="/ws")
        assert (indexed.effect, set(indexed.deciding)) == (plain.effect, set(plain.deciding)), (tool, args)
