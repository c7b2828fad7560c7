"""A tool's fact-only tiers as one generated function: what `RequestDecider._tiered` answers, in one call.

In: the tiers (per effect, strictest first: (condition, rules) groups) with each condition's AST.
Out: `run(env, tool)` → (strictest effect that holds or None, its rule groups, ()) — or None when a
fact the conditions read is absent, where three-valued logic (a condition neither holds nor fails)
takes over in the closures. Each fact is read once and each condition is an inline Python test, where
the closures made one call per condition and per atom.

Nothing from a policy's text becomes code: literals, fact names and rule groups are the generated
function's globals (K0, K1, …); the source holds only generated names and operators.
"""

from __future__ import annotations

from .. import ast
from ..globs import glob_match

# one condition is enough: a cold call (empty memos, the tool's data out of the CPU's caches) pays for each
# code object and cell it touches — the closures are one per condition and atom, this is one function
MIN_TESTS = 1
NOTHING = (None, (), ())  # the summary of tiers none of whose rules holds


class _Unsupported(Exception):
    """A condition this generator does not write (the closures decide it)."""


class _Writer:
    def __init__(self) -> None:
        self.constants: dict[str, object] = {"glob_match": glob_match}
        self.facts: dict[str, str] = {}  # dotted fact -> its local variable
        self.flags = self.services = False

    def constant(self, value) -> str:
        name = f"K{len(self.constants)}"
        self.constants[name] = value
        return name

    def fact(self, dotted: str) -> str:
        if dotted == "tool":
            return "tool"  # the tool's name, always a string
        if dotted not in self.facts:
            self.facts[dotted] = f"v{len(self.facts)}"
        return self.facts[dotted]

    def test(self, expr) -> str:
        """The condition as a Python expression whose truth is the condition's, every fact present."""
        if isinstance(expr, (ast.And, ast.Or)):
            joiner = " and " if isinstance(expr, ast.And) else " or "
            return "(" + joiner.join(self.test(item) for item in expr.items) + ")"
        if isinstance(expr, ast.Not):
            return f"(not {self.test(expr.item)})"
        if isinstance(expr, ast.Flag):
            self.flags = True
            return f"({self.constant(expr.name.text)} in flags)"
        fact = getattr(expr, "fact", None)
        if fact is None:
            raise _Unsupported(type(expr).__name__)
        if isinstance(expr, ast.Has) and len(fact.path) == 1:
            self.services = True
            return f"({self.constant(fact.path[0])} in services)"
        if fact.path[0] in ("args", "session", "call"):
            raise _Unsupported("a condition on arguments or the session")
        value = self.fact(fact.dotted)
        if isinstance(expr, ast.Compare) and expr.op in ("==", "!="):
            return (
                f"({value} == {self.constant(expr.value)})"
                if expr.op == "=="
                else f"(not {value} == {self.constant(expr.value)})"
            )
        if isinstance(expr, ast.Truthy):
            return f"bool({value})"
        if isinstance(expr, ast.Member):
            return f"({value} in {self.constant(expr.values)})"
        if isinstance(expr, ast.Matches):
            return f"(isinstance({value}, str) and glob_match({self.constant(expr.pattern)}, {value}))"
        raise _Unsupported(type(expr).__name__)


def compile_tiers(tiers: tuple, source_of):
    """`run(env, tool)` for `tiers`, or None when they have fewer than MIN_TESTS conditions or one the
    generator does not write. `source_of(test)`: the condition AST a compiled test was made from."""
    if sum(test is not None for _, groups in tiers for test, _ in groups) < MIN_TESTS:
        return None
    writer = _Writer()
    body = []
    try:
        for effect, groups in tiers:
            body.append("    m = []")
            for test, rules in groups:
                append = f"m.append({writer.constant(rules)})"
                body.append(f"    {append}" if test is None else f"    if {writer.test(source_of(test))}: {append}")
            body.append(f"    if m: return ({writer.constant(effect)}, tuple(m), ())")
    except _Unsupported:
        return None
    head = ["def run(env, tool):"]
    if writer.facts:
        head.append("    facts = env.facts")
        for dotted, local in writer.facts.items():
            head.append(f"    {local} = facts.get({writer.constant(dotted)})")
            head.append(f"    if {local} is None: return None")
    if writer.flags:
        head.append("    flags = env.flags")
    if writer.services:
        head.append("    services = env.services")
    source = "\n".join(head + body + ["    return NOTHING", ""])
    namespace = {
        **writer.constants,
        "NOTHING": NOTHING,
        "__builtins__": {"bool": bool, "tuple": tuple, "isinstance": isinstance, "str": str},
    }
    try:
        exec(compile(source, "<dshc fact tiers>", "exec"), namespace)  # noqa: S102 - generated names only (see above)
    except (SyntaxError, RecursionError, MemoryError):  # Python's own nesting limits: the closures decide
        return None
    return namespace["run"]
