"""A tool's fact-only tiers as one generated function (compiler/policy/tier_code.py) answer what the
closures answer, and decisions through it are those of trying every rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from dshc.compiler import ast
from dshc.compiler.conditions import Env
from dshc.compiler.policy import fact_tables
from dshc.compiler.policy.tier_code import MIN_TESTS, compile_tiers
from dshc.compiler.program import Program
from dshc.compiler.request import Request

from conftest import examples


# well-typed conditions only (the checker refuses the rest): string facts with values of their kind
STRINGS = {
    "platform": ['"linux"', '"win32"', '"darwin"'],
    "scope": ['"root"', '"child"', '"x"'],
    "preset": ['"standard"', '"minimal"', '"p"'],
    "tool": ['"read"', '"grep"'],
}
string_fact = st.sampled_from(sorted(STRINGS))
atoms = st.one_of(
    st.builds(
        lambda f, op, i: f"{f} {op} {STRINGS[f][i % len(STRINGS[f])]}",
        string_fact,
        st.sampled_from(["==", "!="]),
        st.integers(0, 2),
    ),
    st.builds(
        lambda f, picks: f"{f} in [{', '.join(STRINGS[f][i % len(STRINGS[f])] for i in picks)}]",
        string_fact,
        st.lists(st.integers(0, 2), min_size=1, max_size=3),
    ),
    st.builds(lambda f, p: f"{f} matches {p}", string_fact, st.sampled_from(['"l*"', '"*d"', '"r?ot"', '"*"'])),
    st.sampled_from(
        ["plan_mode", "plan_mode == true", "plan_mode != false", "has web", "has attachments", "flag a", "flag b"]
    ),
)
conditions = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"({a} and {b})", inner, inner),
        st.builds(lambda a, b: f"({a} or {b})", inner, inner),
        st.builds(lambda a: f"not {a}", inner),
    ),
    max_leaves=4,
)
rules = st.lists(
    st.builds(lambda e, c: f"  {e} read when {c}", st.sampled_from(["allow", "ask", "deny"]), conditions),
    min_size=MIN_TESTS,
    max_size=14,
)
requests = st.builds(
    Request,
    preset=st.sampled_from(["standard", "minimal", None]),
    platform=st.sampled_from(["linux", "win32"]),
    scope=st.sampled_from(["root", "child"]),
    plan=st.booleans(),
    flags=st.lists(st.sampled_from(["a", "b"]), max_size=2),
    policy=st.just("gen"),
)


@pytest.fixture(autouse=True)
def _no_fact_tables(monkeypatch):
    """The generated function decides a tool's fact-only rules whose tests are too many to tabulate
    (`fact_tables`); with tables off, every tool's rules reach it."""
    monkeypatch.setattr(fact_tables, "TABLE_LIMIT", 0)


def _program(lines) -> Program | None:
    try:
        return Program.load(texts={"p.dsh": 'policy gen "Generated" {\n  default allow\n' + "\n".join(lines) + "\n}\n"})
    except Exception:  # noqa: BLE001 - a generated condition the checker refuses (a type clash): no policy to test
        return None


@settings(max_examples=examples(120), deadline=None)
@given(rules, st.lists(requests, min_size=1, max_size=4))
def test_the_generated_function_answers_what_the_closures_answer(lines, reqs):
    program = _program(lines)
    if program is None:
        return
    for request in reqs:
        try:
            decider = program._decider(request)[0]
        except Exception:  # noqa: BLE001 - a request that does not compose decides nothing
            continue
        index = decider.compiled.index("read", None)
        if index.plain_code is not None:
            found = index.plain_code(decider.env, "read")
            if found is not None:
                assert found == decider._tiered("read", index.plain)
        fast = program.decide(request, "read", {"file_path": "a"}, workspace="/ws")
        slow = program.decide_unindexed(request, "read", {"file_path": "a"}, workspace="/ws")
        assert (fast.effect, set(fast.deciding)) == (slow.effect, set(slow.deciding))


def test_a_tool_with_many_conditions_gets_one_function_and_uses_it():
    lines = [
        f'  {effect} read when scope == "{scope}" and platform == "{platform}"'
        for effect in ("allow", "ask", "deny")
        for scope in ("root", "child")
        for platform in ("linux", "win32")
    ]
    program = _program(lines)
    for scope, platform, effect in (("root", "linux", "deny"), ("child", "win32", "deny")):
        request = Request(policy="gen", scope=scope, platform=platform)
        decider = program._decider(request)[0]
        index = decider.compiled.index("read", None)
        assert index.plain_code is not None
        found = index.plain_code(decider.env, "read")
        assert found is not None and found[0] == effect and found == decider._tiered("read", index.plain)


def test_an_absent_fact_is_left_to_the_closures():
    lines = [f'  deny read when sandbox == "read-only" and scope == "s{i}"' for i in range(max(MIN_TESTS, 4))]
    program = _program(lines)
    decider = program._decider(Request(policy="gen"))[0]  # the policy sets no sandbox: the fact is absent
    index = decider.compiled.index("read", None)
    assert index.plain_code is not None and index.plain_code(decider.env, "read") is None
    present = Env({"sandbox": "read-only", "scope": "s3"}, frozenset())
    assert index.plain_code(present, "read")[0] == "deny"


def test_few_conditions_or_ones_it_does_not_write_get_no_function():
    assert compile_tiers((("deny", ((None, ()),)),), lambda test: None) is None
    tests = [object() for _ in range(MIN_TESTS)]
    compare = ast.Compare(ast.Fact(("scope",)), "==", "root")
    conditions = {id(t): compare for t in tests}
    tiers = (("deny", tuple((t, ()) for t in tests)),)
    assert compile_tiers(tiers, lambda t: conditions[id(t)]) is not None
    conditions[id(tests[-1])] = ast.InClass(ast.Fact(("scope",)), ast.Name("readonly"))  # not written here
    assert compile_tiers(tiers, lambda t: conditions[id(t)]) is None


def test_policy_text_never_becomes_code():
    # a literal that would end the generated source's string and run code, were it pasted in
    hostile = '  deny read when scope == "\\"); import os; os._exit(3); (\\""'
    program = _program([hostile] + [f'  deny read when scope == "s{i}"' for i in range(MIN_TESTS)])
    decider = program._decider(Request(policy="gen", scope="root"))[0]
    index = decider.compiled.index("read", None)
    assert index.plain_code is not None and index.plain_code(decider.env, "read") == (None, (), ())
    tricked = Env({"scope": '"); import os; os._exit(3); ("'}, frozenset())
    assert index.plain_code(tricked, "read")[0] == "deny"


def test_conditions_nested_to_the_input_limit_decide_as_written():
    from dshc.compiler.limits import MAX_CONDITION_DEPTH

    deep = "(" * (MAX_CONDITION_DEPTH - 1) + 'scope == "root"' + ")" * (MAX_CONDITION_DEPTH - 1)
    nots = "not " * (MAX_CONDITION_DEPTH - 2) + 'platform == "linux"'
    lines = [f'  deny read when {deep} and scope != "s{i}"' for i in range(MIN_TESTS)] + [f"  ask read when {nots}"]
    program = _program(lines)
    assert program is not None
    for scope in ("root", "child"):
        request = Request(policy="gen", scope=scope)
        fast = program.decide(request, "read", {"file_path": "a"}, workspace="/ws")
        slow = program.decide_unindexed(request, "read", {"file_path": "a"}, workspace="/ws")
        assert (fast.effect, set(fast.deciding)) == (slow.effect, set(slow.deciding))


def test_a_condition_past_pythons_own_nesting_limit_is_left_to_the_closures():
    # the loader refuses such input; the generator must not be the one to fail if it ever gets one
    condition = ast.Compare(ast.Fact(("scope",)), "==", "root")
    for _ in range(300):
        condition = ast.Not(condition)
    tests = [object() for _ in range(MIN_TESTS)]
    tiers = (("deny", tuple((t, ()) for t in tests)),)
    assert compile_tiers(tiers, lambda t: condition) is None
