"""Fact-only rule groups tabulated by the request's fact mask decide exactly as their conditions
evaluated one by one — every kind of fact test, facts absent (`preset`, `sandbox` are None in some
requests), `tool` tests, groups too wide to tabulate, and deciders made before an index numbered
the tests they need."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler import ast
from dshc.compiler.policy.fact_tables import TABLE_LIMIT, FactAtoms
from dshc.compiler.program import Program
from dshc.compiler.request import Request

from conftest import examples

FACT_TESTS = [
    'platform == "linux"',
    'platform == "win32"',
    'platform != "darwin"',
    'scope == "child"',
    'scope == "root"',
    'mode == "code"',
    'host == "web"',
    'preset == "standard"',
    'sandbox == "read-only"',
    "plan_mode",
    "not plan_mode",
    "flag beta",
    "has sandbox",
    'tool == "write"',
    'tool in ["read", "grep"]',
    'platform in ["linux", "darwin"]',
    'platform matches "win*"',
]
conditions = st.one_of(
    st.sampled_from(FACT_TESTS),
    st.builds(lambda a, b: f"{a} and {b}", st.sampled_from(FACT_TESTS), st.sampled_from(FACT_TESTS)),
    st.builds(lambda a, b: f"({a} or {b})", st.sampled_from(FACT_TESTS), st.sampled_from(FACT_TESTS)),
    st.builds(lambda a, b: f"not ({a} and {b})", st.sampled_from(FACT_TESTS), st.sampled_from(FACT_TESTS)),
)
globs = st.sampled_from(["", ' and args.file_path matches "*.txt"', ' and args.file_path matches "src/*"'])


def _rule(effect: str, target: str, condition: str, glob: str) -> str:
    return f"  {effect} {target if not glob else 'read, write'} when {condition}{glob}"  # both have a file_path


rules = st.builds(
    _rule,
    st.sampled_from(["allow", "ask", "deny"]),
    st.sampled_from(["read", "write", "grep", "package(tool-fs)"]),
    conditions,
    globs,
)
requests = st.builds(
    Request,
    preset=st.sampled_from(["standard", None]),
    platform=st.sampled_from(["linux", "win32"]),
    scope=st.sampled_from(["root", "child"]),
    plan=st.booleans(),
    flags=st.sampled_from([frozenset(), frozenset({"beta"})]),
    without_services=st.sampled_from([frozenset(), frozenset({"sandbox"})]),
    policy=st.just("p"),
)
CALLS = [
    ("read", {"file_path": "src/a.txt"}),
    ("read", {"file_path": "b.md"}),
    ("grep", {"pattern": "x"}),
    ("write", {"file_path": "src/c.py", "content": "x"}),
    ("write", {"file_path": "d.txt", "content": "x"}),
]


def _policy(lines) -> str:
    return 'policy p "Fact tests" {\n  default ask\n' + "\n".join(lines) + "\n}\n"


def _seen(decision):
    return decision.effect, decision.reason, decision.deciding


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(rules, min_size=1, max_size=8), st.lists(requests, min_size=1, max_size=4))
def test_tabulated_groups_decide_as_their_conditions_one_by_one(lines, asked):
    program = Program.load(texts={"p.dsh": _policy(lines)})
    for request in asked:
        for tool, args in CALLS:
            assert _seen(program.decide(request, tool, args)) == _seen(program.decide_unindexed(request, tool, args)), (
                request,
                tool,
                args,
            )


def test_a_decider_made_before_an_index_numbered_its_tests_reads_them_again():
    program = Program.load(
        texts={
            "p.dsh": _policy(
                ['  deny read when platform == "win32"', '  allow skill when scope == "child" and plan_mode']
            )
        }
    )
    request = Request(preset="standard", policy="p", platform="win32", scope="child", plan=True)
    decider = program._decider(request)[0]  # made while no index has numbered a test: its mask reads none
    assert decider._facts_read[0] == 0
    read = program.catalog.by_name_or_alias["read"][0]
    skill = program.catalog.by_name_or_alias["skill"][0]
    assert decider.decide("read", read, {"file_path": "a"}).effect == "deny"
    assert decider.decide("skill", skill, {"name": "x"}).effect == "allow"
    assert decider._facts_read[0] == decider.compiled.atoms.count == 3


def _tiers_reading(text):
    """A one-group tier whose condition is `text` (parsed from a rule), with its source map."""
    rule = Program.load(texts={"p.dsh": _policy([f"  deny read when {text}"])}).resolved.policies["p"].rules[0]
    test = object()
    return ((("deny", ((test, (rule,)),)),), {test: rule.condition}.__getitem__)


def test_string_equalities_on_one_fact_are_exclusive():
    tiers, source = _tiers_reading('(scope == "a" or scope == "b" or scope == "c") and plan_mode')
    bits, table = FactAtoms().tabulate(tiers, "read", source)
    assert len(table) == 4 * 2  # none or one of three scopes, times plan_mode on or off
    assert bin(bits).count("1") == 4


def test_a_group_reading_too_many_tests_is_left_to_its_conditions():
    wide = " and ".join(f"flag f{i}" for i in range(TABLE_LIMIT.bit_length()))  # 2^9 assignments > 256
    tiers, source = _tiers_reading(wide)
    assert FactAtoms().tabulate(tiers, "read", source) is None
    policy = _policy([f"  deny read when {wide}"])
    request = Request(preset="standard", policy="p", flags=frozenset(f"f{i}" for i in range(9)))
    decision = Program.load(texts={"p.dsh": policy}).decide(request, "read", {"file_path": "a"})
    assert decision.effect == "deny"


def test_a_tool_test_is_a_constant_of_the_index_not_a_bit():
    tiers, source = _tiers_reading('tool == "read" and plan_mode')
    atoms = FactAtoms()
    bits, table = atoms.tabulate(tiers, "read", source)
    assert list(atoms.bits) == [ast.Truthy(ast.Fact(("plan_mode",)))]
    assert table[bits][0] == "deny" and table[0][0] is None
    _, elsewhere = atoms.tabulate(tiers, "grep", source)
    assert all(summary[0] is None for summary in elsewhere.values())
    for index in range(1000):  # names a model invents keep nothing per name
        atoms.tabulate(tiers, f"invented{index}", source)
    assert len(atoms._tool_tests) == 1


def test_an_absent_fact_leaves_only_the_groups_reading_it_to_their_conditions():
    program = Program.load(
        texts={"p.dsh": _policy(['  deny read when sandbox == "read-only"', "  ask grep when plan_mode"])}
    )
    request = Request(preset="standard", policy="p", plan=True)  # the policy sets no sandbox: the fact is absent
    decider = program._decider(request)[0]
    tools = {name: program.catalog.by_name_or_alias[name][0] for name in ("read", "grep")}
    indexes = {name: decider.compiled.index(name, tool) for name, tool in tools.items()}
    assert decider.env.facts["sandbox"] is None and decider._fact_mask() is None
    assert decider._tabled(indexes["read"].plain_table) is None  # its test cannot be decided: the closures say
    assert decider._tabled(indexes["grep"].plain_table)[0] == "ask"  # plan_mode is decided: looked up
    for name, tool in tools.items():
        assert _seen(decider.decide(name, tool, {"file_path": "a", "pattern": "x"})) == _seen(
            program.decide_unindexed(request, name, {"file_path": "a", "pattern": "x"})
        )


def test_tests_numbered_from_many_threads_get_distinct_bits():
    made = [_tiers_reading(f"flag f{i} and not flag g{i}") for i in range(40)]
    atoms = FactAtoms()
    threads = [
        threading.Thread(target=lambda part=made[i::4]: [atoms.tabulate(t, "read", s) for t, s in part])
        for i in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    bits = list(atoms.bits.values())
    assert len(bits) == len(set(bits)) == atoms.count == 80
