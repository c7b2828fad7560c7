"""Rules that test an argument `inside` / `outside` the workspace are indexed by that test (read once a
call, their groups only where it holds): decisions stay those of trying every rule as written, for paths
in and out of the workspace, values that are not text, absent arguments and no workspace at all."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dsl_strategies import request_facts

from conftest import examples

PARTS = [
    "args.file_path inside workspace",
    "args.file_path outside workspace",
    'args.file_path matches "*.env"',
    'args.file_path matches "src/*"',
    'args.content matches "x*"',
    'platform == "linux"',
    "plan_mode",
    "not plan_mode",
    "flag beta",
    "args.content inside workspace",
]
PATH_PARTS = [part for part in PARTS if "content" not in part]  # `read` has no `content`


def _rule(effect, tool, parts):
    return f"  {effect} {tool}" + (" when " + " and ".join(parts) if parts else "")


RULE = st.one_of(
    st.builds(
        _rule,
        st.sampled_from(["allow", "ask", "deny"]),
        st.just("write"),
        st.lists(st.sampled_from(PARTS), max_size=3, unique=True),
    ),
    st.builds(
        _rule,
        st.sampled_from(["allow", "ask", "deny"]),
        st.sampled_from(["read", "write, read"]),
        st.lists(st.sampled_from(PATH_PARTS), max_size=3, unique=True),
    ),
)
GUARD = st.builds(
    lambda parts: "  guard g: deny write when " + " and ".join(parts),
    st.lists(st.sampled_from(PARTS), min_size=1, max_size=2, unique=True),
)
POLICIES = st.builds(
    lambda rules, guards, default: "policy gen {\n" + default + "\n".join(rules + guards) + "\n}\n",
    st.lists(RULE, min_size=1, max_size=10),
    st.lists(GUARD, max_size=1),
    st.sampled_from(["", "  default allow\n", "  default deny\n"]),
)
PATHS = ["src/a.txt", "../x.env", "/etc/passwd", "a.env", "~/x.txt", "src/../../y", 5, None, ["a"], "MISSING"]


@settings(max_examples=examples(80), deadline=None)
@given(POLICIES, request_facts, st.sampled_from(["/ws", None]))
def test_placed_rules_decide_like_trying_every_rule(policy, facts, workspace):
    program = Program.load(texts={"p.dsh": policy})
    request = Request(preset="standard", host="web", policy="gen", **facts)
    for tool in ("write", "read"):
        for path in PATHS:
            args = {"content": "xy"} if path == "MISSING" else {"file_path": path, "content": "xy"}
            indexed = program.decide(request, tool, args, workspace=workspace)
            plain = program.decide_unindexed(request, tool, args, workspace=workspace)
            assert (indexed.effect, set(indexed.deciding)) == (plain.effect, set(plain.deciding)), (tool, path)


def test_an_outside_deny_is_met_only_outside():
    text = (
        "policy gen {\n  default allow\n  deny write when args.file_path outside workspace\n"
        '  ask write when args.file_path inside workspace and args.file_path matches "*.env"\n}\n'
    )
    program = Program.load(texts={"p.dsh": text})
    request = Request(preset="standard", host="web", policy="gen")

    def effect(path, workspace="/ws"):
        return program.decide(request, "write", {"file_path": path, "content": "x"}, workspace=workspace).effect

    assert (effect("src/a.txt"), effect("../a.txt"), effect("/etc/passwd"), effect("src/../../a")) == (
        "allow",
        "deny",
        "deny",
        "deny",
    )
    assert effect("x.env") == "ask"
    assert effect("x.txt", workspace=None) == "deny"  # no workspace: a deny may match, an allow never would
