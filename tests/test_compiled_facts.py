"""A fact condition compiled to a closure answers exactly what `evaluate` answers, on either side."""

from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler import ast
from dshc.compiler.conditions import Env, compile_facts, evaluate

from conftest import examples

FACTS = ["scope", "platform", "plan_mode", "tool", "mode", "host.kind"]
VALUES = ["root", "child", "linux", "win32", "bash", "read", "", 0, 1, True, False, None, ("a",)]

facts = st.sampled_from(FACTS).map(lambda dotted: ast.Fact(tuple(dotted.split("."))))
atoms = st.one_of(
    st.builds(ast.Compare, facts, st.sampled_from(["==", "!="]), st.sampled_from(VALUES)),
    st.builds(ast.Member, facts, st.lists(st.sampled_from(VALUES), max_size=3).map(tuple)),
    st.builds(ast.Matches, facts, st.sampled_from(["lin*", "*32", "b?sh", "*", "root"])),
    st.builds(ast.Truthy, facts),
    st.builds(ast.Has, st.sampled_from(["web", "sandbox", "host.kind"]).map(lambda d: ast.Fact(tuple(d.split("."))))),
    st.builds(ast.Flag, st.sampled_from(["beta", "fast"]).map(ast.Name)),
    st.builds(ast.Place, facts, st.booleans(), st.just(ast.Name("workspace"))),
)
conditions = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.builds(ast.Not, inner),
        st.lists(inner, min_size=1, max_size=3).map(lambda items: ast.And(tuple(items))),
        st.lists(inner, min_size=1, max_size=3).map(lambda items: ast.Or(tuple(items))),
    ),
    max_leaves=8,
)
envs = st.builds(
    lambda values, flags, services: Env(values, frozenset(services), frozenset(flags)),
    st.dictionaries(st.sampled_from(FACTS), st.sampled_from(VALUES), max_size=len(FACTS)),
    st.lists(st.sampled_from(["beta", "fast"]), max_size=2),
    st.lists(st.sampled_from(["web", "sandbox"]), max_size=2),
)


@settings(max_examples=examples(400))
@given(conditions, envs, st.sampled_from(["bash", "read", "web_fetch"]), st.booleans())
def test_a_compiled_fact_condition_answers_like_evaluate(condition, env, tool, lenient):
    as_written = evaluate(condition, Env({**env.facts, "tool": tool}, env.services, env.flags), lenient)
    assert compile_facts(condition, lenient)(env, tool) is as_written


def test_an_argument_condition_is_not_compiled():
    try:
        compile_facts(ast.Matches(ast.Fact(("args", "command")), "git *"), True)
    except ValueError as exc:
        assert "no arguments" in str(exc)
    else:
        raise AssertionError("an argument test compiled as a fact condition")


def test_every_single_atom_on_every_value_answers_like_evaluate():
    """Exhaustive over one-atom conditions (each atom kind has its own compiled form), negated or not."""
    for dotted in FACTS:
        fact = ast.Fact(tuple(dotted.split(".")))
        atoms = [ast.Truthy(fact), ast.Matches(fact, "lin*"), ast.Member(fact, ("root", 0, None))]
        atoms += [ast.Compare(fact, op, value) for op in ("==", "!=") for value in VALUES]
        for atom in atoms + [ast.Not(atom) for atom in atoms]:
            for value, lenient in ((v, side) for v in VALUES + ["(absent)"] for side in (True, False)):
                if dotted == "tool":  # the compiled form is handed the tool name; evaluate reads the fact
                    facts, tool = {}, value
                else:
                    facts, tool = ({} if value == "(absent)" else {dotted: value}), "bash"
                as_written = evaluate(atom, Env({**facts, "tool": tool}, frozenset(), frozenset()), lenient)
                compiled = compile_facts(atom, lenient)(Env(facts, frozenset(), frozenset()), tool)
                assert compiled is as_written, (atom, value, lenient)


# --- any condition, argument tests included (`compile_condition`: rules the index tries as written) ---
ARG_FIELDS = ["args.file_path", "args.command", "args.content"]
arg_facts = st.sampled_from(ARG_FIELDS).map(lambda dotted: ast.Fact(tuple(dotted.split("."))))
argument_atoms = st.one_of(
    st.builds(ast.Matches, arg_facts, st.sampled_from(["*.py", "src/*", "git *", "rm *", "*", "/ws/*", "a?c"])),
    st.builds(ast.Place, arg_facts, st.booleans(), st.just(ast.Name("workspace"))),
    st.builds(ast.Has, arg_facts),
    st.builds(ast.Has, st.just(ast.Fact(("args",)))),  # a service named `args`, not an argument
    st.builds(ast.Compare, arg_facts, st.sampled_from(["==", "!="]), st.sampled_from(["src/a.py", "git status", 5])),
    st.builds(ast.Member, arg_facts, st.lists(st.sampled_from(["src/a.py", "ls", 7]), max_size=2).map(tuple)),
    st.builds(ast.Truthy, arg_facts),
    st.builds(ast.InClass, st.just(ast.Fact(("args", "command"))), st.just(ast.Name("readonly"))),
    st.builds(
        ast.ListTest,
        arg_facts,
        st.sampled_from(["all", "any"]),
        st.lists(st.sampled_from(["a", "b", 5, True]), max_size=2).map(tuple),
    ),
    st.builds(ast.ListTest, arg_facts, st.just("contains"), st.sampled_from([("a",), (5,), (("a",),)])),
    st.builds(ast.Length, arg_facts, st.sampled_from(["==", "<", ">="]), st.sampled_from([0, 1, 3])),
    st.builds(ast.Compare, arg_facts, st.sampled_from(["<", ">="]), st.sampled_from([0, 5, 6.5])),
)
any_conditions = st.recursive(
    st.one_of(atoms, argument_atoms),
    lambda inner: st.one_of(
        st.builds(ast.Not, inner),
        st.lists(inner, min_size=1, max_size=3).map(lambda items: ast.And(tuple(items))),
        st.lists(inner, min_size=1, max_size=3).map(lambda items: ast.Or(tuple(items))),
    ),
    max_leaves=8,
)


def _path(text):
    from dshc.compiler.paths import CanonicalPath

    return CanonicalPath(text, "/ws/" + text)


ARG_VALUES = [
    "src/a.py",
    "../x.py",
    "/etc/passwd",
    "git status",
    "rm -rf /",
    "eval $X",
    "",
    5,
    None,
    ["a"],
    ["a", "b", "a"],
    [5, True],
    [],
    ("b",),
    "(path)",
]
ARG_VALUE = st.sampled_from(ARG_VALUES).map(lambda v: _path("src/b.py") if v == "(path)" else v)
call_args = st.one_of(
    st.fixed_dictionaries({"file_path": ARG_VALUE, "command": ARG_VALUE, "content": ARG_VALUE}),
    st.dictionaries(st.sampled_from(["file_path", "command", "content"]), ARG_VALUE, max_size=2),
    st.none(),
)
call_envs = st.builds(
    lambda env, args, workspace, shell: Env(env.facts, env.services, env.flags, args, workspace, shell),
    envs,
    call_args,
    st.sampled_from(["/ws", None]),
    st.booleans(),
)


@settings(max_examples=examples(600), deadline=None)
@given(any_conditions, call_envs, st.sampled_from(["bash", "read", "write"]), st.booleans())
def test_a_compiled_condition_answers_like_evaluate(condition, env, tool, lenient):
    from dshc.compiler.conditions import compile_condition
    from dshc.compiler._base.frozen import replace

    # what `tool_env` gives the call's conditions; one each: an environment remembers answers (`found`)
    as_written = evaluate(condition, replace(env, facts={**env.facts, "tool": tool}), lenient)
    assert compile_condition(condition, lenient)(replace(env, facts={**env.facts, "tool": tool}), tool) is as_written
