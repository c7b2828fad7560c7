"""The session states verification decides a call in: the strictest one (no log: `None`) and one concrete
`Session` for each combination of the classes the conditions' session tests induce. In: conditions; out:
`SessionStates` (the states, whether they are every class, and why not).

A set fact (`session.read`, `session.env_read`) holds some elements; a test on it holds when one element
passes. Its values split into regions no pattern or listed name can tell apart (as argument classes do), so a
state is a set of regions, one witness each, plus `*` (a line that may have read anything: it passes a deny's
test and fails an allow's). `session.denied_count` takes 0 and each compared number, one below and one above.
Of the states every test answers alike, one is kept.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from . import ast
from ._base.frozen import record
from .session import ALL, Earlier, Session

MAX_STATES = 4096  # past this many combinations, each class is taken alone (and with every other): a sample
SET_FACTS = ("session.read", "session.env_read")
# past this many patterns on one session fact, each gives its own witness (not every region they make): the
# guard library's `*TOKEN*`-like name patterns made automata whose refinement took minutes from 6 on
MAX_REFINED_SESSION_PATTERNS = 4


@record
class SessionStates:
    states: tuple  # `None` (the strictest) first, then `Session`s
    exact: bool = True
    notes: tuple[str, ...] = ()


def session_states(conditions: Iterable) -> SessionStates:
    """The states that tell the conditions' session tests apart; `(None,)` when none tests the session."""
    tests: dict[str, list] = {}
    conditions = list(conditions)
    for condition in conditions:
        for atom in ast.atoms(condition):
            if not isinstance(atom, ast.Flag) and atom.fact.path[0] == "session":
                tests.setdefault(atom.fact.dotted, []).append(atom)
    if not tests:
        return SessionStates((None,))
    notes: list[str] = []
    exact = True
    choices: list[list] = []
    for fact in SET_FACTS:
        elements, complete = _set_classes(tests.get(fact, ()), fact == "session.read", notes)
        exact &= complete
        choices.append(elements)
    counts = _counts(tests.get("session.denied_count", ()))
    size = len(counts) * 2 ** sum(len(elements) for elements in choices)
    if size <= MAX_STATES:
        subsets = [list(_subsets(elements)) for elements in choices]
    else:
        exact = False
        notes.append(f"{size} session states: each class of earlier reads alone, none and all, not every mix")
        subsets = [[(), *((element,) for element in elements), tuple(elements)] for elements in choices]
    reading = [c for c in conditions if c is not None and any(_session_atom(a) for a in ast.atoms(c))]
    distinct: dict[tuple, Session] = {}
    for read, names, count in itertools.product(*subsets, counts):
        state = Session(read=_entries(read, "read"), env_read=_entries(names, "bash"), denied=_denied(count))
        # states that leave every condition the same test of the call (on the deny side and the allow side)
        # decide every call alike: `session.read matches A or session.read matches B` is one test whichever
        # of A and B an earlier read passed
        key = tuple((_residual(c, state, True), _residual(c, state, False)) for c in reading)
        distinct.setdefault(key, state)
    return SessionStates((None, *distinct.values()), exact, tuple(notes))


def _session_atom(atom) -> bool:
    return not isinstance(atom, ast.Flag) and atom.fact.path[0] == "session"


def _residual(expr, state: Session, lenient: bool):
    """What is left of a condition once the state answers its session tests: True, False, or the structure of
    the tests of the call it still depends on (compared by identity)."""
    if isinstance(expr, (ast.And, ast.Or)):
        stop = isinstance(expr, ast.Or)  # the value that decides the join
        parts = []
        for item in expr.items:
            part = _residual(item, state, lenient)
            if part is stop:
                return stop
            if part is not (not stop):
                parts.append(part)
        return ("or" if stop else "and", tuple(parts)) if parts else (not stop)
    if isinstance(expr, ast.Not):
        part = _residual(expr.item, state, not lenient)
        return (not part) if isinstance(part, bool) else ("not", part)
    if _session_atom(expr):
        held = state.test(expr, lenient)
        return ("unknown", id(expr)) if held is None else bool(held)
    return ("test", id(expr))


def describe(state) -> dict | str:
    """A state as a witness shows it."""
    if state is None:
        return "unknown (no event log: every session test holds for a deny or ask, fails for an allow)"
    return {
        "read": [value for value, _ in state.read],
        "env_read": [value for value, _ in state.env_read],
        "denied_count": len(state.denied),
    }


def _set_classes(atoms, paths: bool, notes: list[str]) -> tuple[list[str], bool]:
    """A witness element of each region the tests split the fact's values into, and `*`."""
    from .argclasses import FieldTests, _string_classes
    from .paths import home_glob

    fields = FieldTests()
    for atom in atoms:
        if isinstance(atom, ast.Matches):
            # the session matches a path's glob as given, with `~` as the home (`session._hit`)
            fields.patterns.append(home_glob(atom.pattern) if paths else atom.pattern)
        elif isinstance(atom, ast.Member):
            fields.literals.extend(value for value in atom.values if isinstance(value, str))
    if not atoms:
        return [], True
    found, exact = _string_classes(fields, False, notes, max_refined=MAX_REFINED_SESSION_PATTERNS)
    # the region no test passes matters only for `truthy` (not empty): it is kept either way, as one element
    return list(dict.fromkeys(str(value) for value in found if isinstance(value, str))) + [ALL], exact


def _counts(atoms) -> list[int]:
    found = {0}
    for atom in atoms:
        if isinstance(atom, ast.Compare) and isinstance(atom.value, (int, float)) and not isinstance(atom.value, bool):
            below = int(atom.value) if atom.value == int(atom.value) else int(atom.value) + 1
            found.update(count for count in (below - 1, below, below + 1) if count >= 0)
    return sorted(found)


def _subsets(elements):
    for size in range(len(elements) + 1):
        yield from itertools.combinations(elements, size)


def _entries(values, tool: str) -> tuple:
    return tuple((value, Earlier(f"earlier-{at}", tool, value)) for at, value in enumerate(values, 1))


def _denied(count: int) -> tuple:
    return tuple(Earlier(f"denied-{at}", "bash", "") for at in range(1, count + 1))
