"""A request's fact conditions read once, as a bitmask; a rule group's summary looked up by it.

A policy's fact-only conditions are built from few leaf tests (`platform == "linux"`, `plan_mode`,
`scope == "child"`, a service, a flag). `FactAtoms` gives each distinct test of the policy a bit. A
request's facts do not change while its calls are decided, so its decider reads every test once when it
is made (`mask`: the bits of the tests that hold, and the bits of those it cannot decide because a fact is
absent; a group reading one of those is left to the closures' three-valued logic). When a tool's index is
built, each group of rules (`index._tiers`) is tabulated (`tabulate`): for every assignment of the tests
it reads, what `RequestDecider._tiered` would answer. A cold call then looks a group's summary up
(`table[mask & bits]`) instead of evaluating its conditions.

String equalities on one fact are exclusive (a fact has one value), which keeps assignments few; a group
with more than TABLE_LIMIT assignments is left to the closures. Tests of the `tool` fact are constants
within one tool's index: they are evaluated there, not numbered.
"""

from __future__ import annotations

from itertools import product
from _thread import allocate_lock  # not `threading`: a hook process loads neither it nor what it imports

from .. import ast
from ..conditions import compile_facts
from .tier_code import NOTHING

TABLE_LIMIT = 256  # assignments tabulated per group: 4 facts of 3 values and 3 on/off tests is 648


def _reads_tool(atom) -> bool:
    fact = getattr(atom, "fact", None)  # `has NAME` tests a service, not a fact
    return fact is not None and fact.path == ("tool",) and not isinstance(atom, ast.Has)


def _reads_args(atom) -> bool:
    fact = getattr(atom, "fact", None)
    return fact is not None and fact.path[0] in ("args", "session", "call")  # read per call, never tabulated


def _string_equality(atom) -> bool:
    return isinstance(atom, ast.Compare) and atom.op == "==" and type(atom.value) is str


class FactAtoms:
    """The leaf fact tests of one policy's tabulated rule groups, numbered as they are first read (a
    tool's index being built); a request's facts read as their bitmask."""

    def __init__(self) -> None:
        self.bits: dict = {}  # leaf test -> its bit
        # len(bits), kept as a plain attribute: every cold call compares it with the mask's own count, and a
        # mask read before a later test was numbered is read again
        self.count = 0
        self._by_fact: tuple = ()  # (dotted fact, {string literal: bit}, all those bits): one lookup reads them
        self._others: tuple = ()  # (closure, bit) for every other test
        self._tool_tests: dict = {}  # a `tool` test -> its closure (per test, not per name: a model invents names)
        # by identity, not equality: hashing a test's record is most of tabulating a group
        self._ids: dict = {}  # id(test) -> (the test, its bit)
        self._conditions: dict = {}  # id(condition) -> (the condition, its leaves: `_leaves`)
        self._lock = allocate_lock()  # indexes may be built by several threads: no bit is given twice

    def mask(self, env) -> tuple[int, int]:
        """(the bits of the tests that hold for these facts, the bits of those that cannot be decided —
        a fact absent)."""
        facts = env.facts
        found = unknown = 0
        for dotted, by_value, every in self._by_fact:
            value = facts.get(dotted)
            if value is None:
                unknown |= every
            elif type(value) is str:
                found |= by_value.get(value, 0)
            else:  # another type may still equal a string (a subclass): each test as written
                for literal, bit in by_value.items():
                    if value == literal:
                        found |= bit
        for test, bit in self._others:
            value = test(env, None)
            if value is None:
                unknown |= bit
            elif value:
                found |= bit
        return found, unknown

    def _number(self, atom) -> int:
        found = self._ids.get(id(atom))
        if found is not None and found[0] is atom:
            return found[1]
        bit = self.bits.get(atom)
        if bit is not None:
            self._ids[id(atom)] = (atom, bit)
            return bit
        with self._lock:
            bit = self.bits.get(atom)
            if bit is None:
                bit = 1 << len(self.bits)
                if _string_equality(atom):  # new tuples and dicts: a mask being read keeps its own
                    by_fact = {dotted: dict(by_value) for dotted, by_value, _ in self._by_fact}
                    by_fact.setdefault(atom.fact.dotted, {})[atom.value] = bit
                    self._by_fact = tuple(
                        (dotted, by_value, sum(by_value.values())) for dotted, by_value in by_fact.items()
                    )
                else:
                    self._others = (*self._others, (compile_facts(atom, False), bit))
                self.bits[atom] = bit
                self.count = len(self.bits)
        self._ids[id(atom)] = (atom, bit)
        return bit

    def tabulate(self, tiers: tuple, name: str, source) -> tuple | None:
        """(the bits `tiers` read, {mask & bits: summary}) — `_tiered`'s answer for every assignment of
        the tests they read — or None when they read more than TABLE_LIMIT assignments. `source` maps a
        compiled condition to its AST."""
        conditions = {test: source(test) for _, groups in tiers for test, _ in groups if test is not None}
        read: dict = {}  # bit -> its test
        for condition in conditions.values():
            leaves = self._leaves(condition)
            if leaves is None:
                return None
            for atom, bit in leaves:
                if bit is not None:
                    read[bit] = atom
                elif self._tool_value(atom, name) is None:
                    return None
        choices: list = []
        exclusive: dict[str, list[int]] = {}
        for bit, atom in read.items():
            if _string_equality(atom):
                exclusive.setdefault(atom.fact.dotted, [0]).append(bit)  # none of them holds, or one
            else:
                choices.append((0, bit))
        choices.extend(exclusive.values())
        count = 1
        for choice in choices:
            count *= len(choice)
        if count > TABLE_LIMIT:
            return None
        masks = [sum(on) for on in product(*choices)]
        # each condition's truth under every assignment at once: bit i holds under masks[i]
        every = (1 << len(masks)) - 1
        truth_of = {bit: sum(1 << i for i, mask in enumerate(masks) if mask & bit) for bit in read}
        truth = {test: self._truth(condition, truth_of, every, name) for test, condition in conditions.items()}
        tiered = []  # per effect: (under which assignments some rule holds, its groups with their truth)
        for effect, groups in tiers:
            groups = tuple((every if test is None else truth[test], rules) for test, rules in groups)
            any_holds = 0
            for holds, _ in groups:
                any_holds |= holds
            tiered.append((effect, any_holds, groups))
        table: dict[int, tuple] = {}
        made: dict[tuple, tuple] = {}
        for i, mask in enumerate(masks):
            summary = NOTHING
            for effect, any_holds, groups in tiered:
                if any_holds >> i & 1:
                    matched = tuple(rules for holds, rules in groups if holds >> i & 1)
                    summary = made.setdefault((effect, tuple(map(id, matched))), (effect, matched, ()))
                    break
            table[mask] = summary
        return sum(read), table

    def _leaves(self, condition) -> tuple | None:
        """A condition's leaf tests with their bits (None for a `tool` test), remembered per condition
        object (the index interns equal ones); None when it reads arguments."""
        found = self._conditions.get(id(condition))
        if found is None or found[0] is not condition:
            leaves: list | None
            leaves = []  # (declared apart: the checker then reads it as a list until it is set to None)
            for atom in ast.atoms(condition):
                if _reads_args(atom):
                    leaves = None  # not a fact-only condition (the index never passes one)
                    break
                leaves.append((atom, None if _reads_tool(atom) else self._number(atom)))
            found = self._conditions[id(condition)] = (condition, None if leaves is None else tuple(leaves))
        return found[1]

    def _truth(self, expr, truth_of: dict, every: int, name: str) -> int:
        if isinstance(expr, ast.And):
            found = every
            for item in expr.items:
                found &= self._truth(item, truth_of, every, name)
            return found
        if isinstance(expr, ast.Or):
            found = 0
            for item in expr.items:
                found |= self._truth(item, truth_of, every, name)
            return found
        if isinstance(expr, ast.Not):
            return every & ~self._truth(expr.item, truth_of, every, name)
        if _reads_tool(expr):
            return every if self._tool_value(expr, name) else 0
        return truth_of[self._ids[id(expr)][1]]

    def _tool_value(self, atom, name: str) -> bool | None:
        test = self._tool_tests.get(atom)
        if test is None:
            test = self._tool_tests[atom] = compile_facts(atom, False)
        return test(None, name)
