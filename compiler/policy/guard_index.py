"""Which of a tool's guards a call can fire, found by their globs' literal parts instead of trying them all.

A guard whose condition is `args.F matches "GLOB"` (alone, or one item of an `and`) cannot hold for a
call whose `F` is absent or a text the glob does not match: that item is False, so is the `and`
(`conditions.evaluate`), and the guard neither fires nor makes the call unsure. Such guards are keyed
by the glob's literal text, prefix or suffix, like rules (`index._FieldIndex`); a call evaluates only
the guards its arguments may match, plus every guard that is not keyed, in source order — so the first
that fires and whether an earlier one was undecided are exactly what trying them all in order gives.

A shell tool's command is decided one simple command at a time: a glob reads a plain one (literal words
run by name, `Segment.plain`) as its text, the shell's way (`git *` also matches a bare `git`), so it is
looked up the same; any other (expansions, a hazard, a program named by its path, an opaque or unsplit
line) makes every guard keyed on the command a candidate.

Not keyed (always tried): guards with no condition or no such item. A value that is not text, or
arguments that are not a plain mapping, make every guard a candidate.
"""

from __future__ import annotations

from .. import ast
from ..conditions import SHELL_FIELDS, compile_condition
from ..file_pattern import FilePattern
from ..globs import glob_match
from ..paths import CanonicalPath, home_glob
from .affixes import AffixIndex, literal_keys


class _FieldGuards:
    """One argument's keyed guards, as their ordinals in the tool's guard list."""

    __slots__ = ("exact", "prefixed", "suffixed", "other", "every", "shell")

    def __init__(self, keyed: list[tuple[int, str]], shell: bool) -> None:
        self.shell = shell  # a shell tool's command: matched one simple command at a time
        by_kind: dict = {"exact": {}, "prefix": {}, "suffix": {}}
        self.other: list[tuple[int, str]] = []  # (ordinal, glob) tried as written
        for ordinal, pattern in keyed:
            keys = literal_keys(pattern, shell)
            if not keys:
                self.other.append((ordinal, pattern))
            for kind, key in keys:
                by_kind[kind].setdefault(key, []).append(ordinal)
        self.exact = by_kind["exact"]
        self.prefixed, self.suffixed = AffixIndex(by_kind["prefix"]), AffixIndex(by_kind["suffix"], suffixes=True)
        self.every = tuple(ordinal for ordinal, _ in keyed)

    def matching(self, value, into: set) -> None:
        """Add the ordinals of the guards whose glob may match `value` (a present argument)."""
        if not isinstance(value, str) or type(value) is FilePattern:
            # an odd value, or a file a command writes or reads but cannot name: the guard's test answers it
            into.update(self.every)
            return
        forms: tuple[str, ...]
        if self.shell:
            segment = getattr(value, "segment", None)
            if segment is None or not segment.plain:
                into.update(self.every)  # what it could run is not one text: try them as written
                return
            forms = (segment.text,)
        else:
            forms = value.forms() if isinstance(value, CanonicalPath) else (value,)  # either form matches
        for form in forms:
            into.update(self.exact.get(form, ()))
            for group in self.prefixed.matching(form):
                into.update(group)
            for group in self.suffixed.matching(form):
                into.update(group)
            into.update(ordinal for ordinal, pattern in self.other if glob_match(pattern, form, self.shell))


class GuardIndex:
    """A tool's guards (in source order), their conditions compiled, and per argument those keyed by a
    glob on it."""

    __slots__ = ("guards", "always", "fields", "name", "_tests")

    def __init__(self, guards: list, shell: bool, name: str) -> None:
        self.guards = tuple(guards)
        self.name = name  # the tool's: the compiled conditions read the `tool` fact from it
        self._tests: dict = {}  # id(guard) -> its condition compiled, when a call first tries it
        always: list[int] = []
        keyed: dict[str, list[tuple[int, str]]] = {}
        for ordinal, guard in enumerate(self.guards):
            key = _glob_key(guard.condition)
            if key is None:
                always.append(ordinal)
            else:  # as the condition reads it (`conditions`): a path glob's `~` is the home directory
                command = shell and key[0] in SHELL_FIELDS
                keyed.setdefault(key[0], []).append((ordinal, key[1] if command else home_glob(key[1])))
        self.always = tuple(always)
        self.fields = {
            field: _FieldGuards(entries, shell and field in SHELL_FIELDS) for field, entries in keyed.items()
        }

    def holds(self, guard, env) -> bool | None:
        """`core.holds` of one of these guards, by its compiled condition (`run_guards`' test)."""
        if guard.condition is None:
            return True
        test = self._tests.get(id(guard))
        if test is None:  # a guard's side: it counts when it possibly holds
            test = self._tests[id(guard)] = compile_condition(guard.condition, True)
        return test(env, self.name)

    def candidates(self, args) -> tuple:
        """The guards that may fire for a call with these arguments, in source order."""
        if not self.fields or type(args) is not dict:
            return self.guards
        found = set(self.always)
        for field, keyed in self.fields.items():
            value = args.get(field, _ABSENT)
            if value is not _ABSENT:  # an absent argument matches no glob: none of these can hold
                keyed.matching(value, found)
        if not found:
            return ()
        guards = self.guards
        return tuple(guards[ordinal] for ordinal in sorted(found))


_ABSENT = object()


def _glob_key(condition) -> tuple[str, str] | None:
    """(field, glob) of the first `args.F matches GLOB` the condition needs to hold, else None."""
    if condition is None:
        return None
    for item in condition.items if isinstance(condition, ast.And) else (condition,):
        if isinstance(item, ast.Matches):
            field = ast.argument_field(item)
            if field is not None:
                return field, item.pattern
    return None
