"""A rule whose glob test is an `or` of globs on arguments (`(args.file_path matches "*.lock" or
args.file_path matches "*.sum") and not plan_mode`, as docs/language.md writes it) is indexed with one
entry per alternative: the rule holds when any matches. Its decisions — effect and the deciding rules,
each listed once even when two alternatives match — must stay those of trying every rule as written,
for text, paths in both forms, values that are not text, absent arguments and shell commands."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler.program import Program
from dshc.compiler.request import Request
from conftest import examples, tool_index
from dsl_strategies import request_facts

PATH_GLOBS = ["*.lock", "*.sum", "go.*", "src/*", "/ws/*", "a.lock", "s?c/*", "*"]
SHELL_GLOBS = ["rm *", "git push*", "*--force*", "sudo *", "ls", "g?t *"]
FACTS = ["", " and not plan_mode", ' and platform == "linux"', " and flag beta", " and args.file_path inside workspace"]


def _alternatives(field, globs):
    return "(" + " or ".join(f'args.{field} matches "{glob}"' for glob in globs) + ")"


PATH_RULE = st.builds(
    lambda effect, tool, alternatives, facts: f"  {effect} {tool} when {alternatives}{facts}",
    st.sampled_from(["allow", "ask", "deny"]),
    st.sampled_from(["write", "read", "write, read"]),
    st.builds(_alternatives, st.just("file_path"), st.lists(st.sampled_from(PATH_GLOBS), min_size=2, max_size=3)),
    st.sampled_from(FACTS),
)
TWO_FIELDS = st.builds(
    lambda effect, a, b: f'  {effect} write when args.file_path matches "{a}" or args.content matches "{b}"',
    st.sampled_from(["allow", "ask", "deny"]),
    st.sampled_from(PATH_GLOBS),
    st.sampled_from(["x*", "*y", "xy"]),
)
SHELL_RULE = st.builds(
    lambda effect, alternatives, facts: f"  {effect} bash when {alternatives}{facts}",
    st.sampled_from(["allow", "ask", "deny"]),
    st.builds(_alternatives, st.just("command"), st.lists(st.sampled_from(SHELL_GLOBS), min_size=2, max_size=3)),
    st.sampled_from(FACTS[:4]),
)
# `or`s the index does not split: each stays a rule tried as written
MIXED_OR = st.builds(
    lambda effect, condition: f"  {effect} write when {condition}",
    st.sampled_from(["allow", "deny"]),
    st.sampled_from(
        [
            'args.file_path inside workspace or args.file_path matches "*.lock"',
            'args.file_path matches "*.lock" or plan_mode',
            'not args.file_path matches "*.lock" or args.file_path matches "go.*"',
            '(args.file_path matches "a*" and plan_mode) or args.file_path matches "*.sum"',
        ]
    ),
)
PLAIN_RULE = st.sampled_from(
    [
        '  allow write when args.file_path matches "src/*"',
        "  ask read",
        '  allow bash when args.command matches "git *"',
        "  deny write when plan_mode",
    ]
)
POLICIES = st.builds(
    lambda rules, default: "policy gen {\n" + default + "\n".join(rules) + "\n}\n",
    st.lists(st.one_of(PATH_RULE, TWO_FIELDS, SHELL_RULE, MIXED_OR, PLAIN_RULE), min_size=1, max_size=8),
    st.sampled_from(["", "  default allow\n", "  default deny\n"]),
)
PATHS = ["go.lock", "go.sum", "a.lock", "src/go.lock", "docs/x.md", "../go.lock", "/etc/go.sum", "", 5, None, "MISSING"]
COMMANDS = [
    "rm -rf x",
    "git push --force origin",
    "sudo rm x",
    "ls",
    "git status",
    "rm $X",
    "eval $X",
    "git push origin && ls",
    "./rm -rf x",
    7,
]


@settings(max_examples=examples(120), deadline=None)
@given(POLICIES, request_facts, st.sampled_from(["/ws", None]))
def test_rules_with_glob_alternatives_decide_like_trying_every_rule(policy, facts, workspace):
    program = Program.load(texts={"p.dsh": policy})
    request = Request(preset="standard", host="web", policy="gen", **facts)
    calls = [
        (tool, {"content": "xy"} if path == "MISSING" else {"file_path": path, "content": content})
        for tool in ("write", "read")
        for path in PATHS
        for content in ("xy", 3)
    ]
    calls += [("bash", {"command": command, "description": "d"}) for command in COMMANDS]
    for tool, args in calls:
        indexed = program.decide(request, tool, args, workspace=workspace)
        plain = program.decide_unindexed(request, tool, args, workspace=workspace)
        # the deciding rules as listed, not as a set: a rule two alternatives matched is listed once
        assert (indexed.effect, indexed.deciding) == (plain.effect, plain.deciding), (tool, args)


def test_the_documented_or_of_globs_is_indexed_and_listed_once():
    text = (
        "policy gen {\n  default allow\n"
        '  ask write when (args.file_path matches "*.lock" or args.file_path matches "go.*")'
        " and not plan_mode\n}\n"
    )
    index = tool_index(text, "write")
    assert not index.generic and set(index.globbed) == {"file_path"}  # found by its globs, not tried as written
    program = Program.load(texts={"p.dsh": text})
    request = Request(preset="standard", host="web", policy="gen")
    both = program.decide(request, "write", {"file_path": "go.lock", "content": "x"})
    assert both.effect == "ask" and len(both.deciding) == 1
    assert program.decide(request, "write", {"file_path": "go.mod", "content": "x"}).effect == "ask"
    assert program.decide(request, "write", {"file_path": "a.txt", "content": "x"}).effect == "allow"
    planning = Request(preset="standard", host="web", policy="gen", plan=True)
    assert program.decide(planning, "write", {"file_path": "go.lock", "content": "x"}).effect == "allow"
