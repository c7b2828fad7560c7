"""The argument classes a policy's own patterns induce on a tool's arguments, with witnesses.

Every condition on `args.FIELD` splits that field's values into finitely many classes that no
condition can tell apart: glob patterns are intersected as regular languages (interegular
automata), literals and paths add their own classes, absence is a class. A witness of each
class is a concrete value, so the verifier decides real calls. Where a split cannot be made
exact, `exact` is False and the reason is recorded: the caller must not claim a proof.
"""

from __future__ import annotations

import itertools
import random
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

import interegular

from . import ast
from .globs import glob_regex
from .orders import is_number
from .shell import command_segments
from .shell_data import knowledge

SHELL_WORD = r"[a-z0-9._/~=:+%@,-]+"
SHELL_UNIVERSE = rf"{SHELL_WORD}( {SHELL_WORD})*"
TEXT_UNIVERSE = r"[ -~]*"
MAX_SEGMENT_ATOMS = 8  # all non-empty subsets of up to 8 segment classes are enumerated
MAX_CLASSES = 4096
# past this many patterns on one field, refining the universe by all of them builds automata whose states
# multiply (the guard library's path globs, or 14 `*ADDRESS*` URL globs, took minutes): each pattern then gives
# its own witness
MAX_REFINED_PATTERNS = 8
MAX_PATTERN_WITNESSES = 48  # and at most this many of them, an even spread over the patterns
SEARCH_SAMPLES = 500
OPAQUE_COMMAND = "echo x | sh"
UNPARSEABLE_COMMAND = "echo 'unterminated"
INSIDE_PATH = "inside/file.txt"
# commands inside and outside the shipped `readonly` class, with wrappers and redirections
CLASS_SAMPLES = (
    "cat x",
    "ls -la && git status",
    "rm x",
    "find . -delete",
    "sed -i s/a/b/ f",
    "ls > out",
    "sudo cat x",
    "timeout 5 cat x",
    "cat < .env",
)
OUTSIDE_PATH = "/outside-the-workspace/file.txt"
# a shell line that reaches the network, one that does not, one not known (code): every value `call.network` takes
NETWORK_SAMPLES = ("curl https://example.com", "ls", "python3 -c x")


@dataclass
class FieldTests:
    patterns: list[str] = field(default_factory=list)
    literals: list[Any] = field(default_factory=list)
    place: bool = False
    classes: list[str] = field(default_factory=list)  # `args.FIELD is CLASS`
    # patterns matched by an option grammar too (`rm -rf /*` meets `rm -fr /`; `… except "-D"`): the
    # option spellings are samples, not classes of the patterns' languages
    optioned: list[str] = field(default_factory=list)
    items: list[Any] = field(default_factory=list)  # the items `all in`, `any in`, `contains` and list literals name
    lengths: list[Any] = field(default_factory=list)  # the bounds of `length(args.FIELD) OP N`
    bounds: list[Any] = field(default_factory=list)  # the bounds of `args.FIELD < N` and the other orders
    lists: list[tuple] = field(default_factory=list)  # each `all in`/`any in` list and `contains` value
    arrays: bool = False  # some test reads the value as an array
    network: bool = False  # `call.network` reads this field (a shell tool's command line)


@dataclass(frozen=True)
class ArgumentClasses:
    witnesses: tuple[dict, ...]  # one concrete argument object per class
    exact: bool
    notes: tuple[str, ...]


def field_tests(conditions: Iterable[ast.Expr | None]) -> dict[str, FieldTests]:
    found: dict[str, FieldTests] = {}
    for condition in conditions:
        for atom in ast.atoms(condition):
            if isinstance(atom, ast.Flag) or atom.fact.path[0] != "args" or len(atom.fact.path) != 2:
                continue
            tests = found.setdefault(atom.fact.path[1], FieldTests())
            if isinstance(atom, ast.Matches):
                tests.patterns.append(atom.pattern)
            elif isinstance(atom, ast.MatchesExcept):
                tests.patterns.append(atom.pattern)
                stem = atom.pattern.replace("*", "x").replace("?", "x")
                tests.optioned += [f"{stem} {option}" for option in atom.excepted]
            elif isinstance(atom, ast.Compare):
                if atom.op in ("==", "!="):
                    tests.literals.append(atom.value)
                else:
                    tests.bounds.append(atom.value)
            elif isinstance(atom, ast.Member):
                tests.literals.extend(atom.values)
            elif isinstance(atom, ast.ListTest):
                tests.items.extend(atom.values)
                tests.lists.append(atom.values)
                tests.arrays = True
            elif isinstance(atom, ast.Length):
                tests.lengths.append(atom.value)
            elif isinstance(atom, ast.Place):
                tests.place = True
            elif isinstance(atom, ast.Truthy):
                tests.literals.extend([True, False])
            elif isinstance(atom, ast.InClass):
                tests.classes.append(atom.name.text)
    return found


def _fsm(regex: str):
    return interegular.parse_pattern(regex).to_fsm()


def _atoms(universe: str, regexes: list[str]) -> list[Any]:
    """Refine the universe by every regex: the non-empty regions no pattern can tell apart."""
    regions = [_fsm(universe)]
    for regex in regexes:
        pattern = _fsm(regex)
        refined = []
        for region in regions:
            for part in (region & pattern, region - pattern):
                if not part.empty():
                    refined.append(part)
        regions = refined
    return regions


def _shortest(region) -> str | None:
    """The first string `region.strings()` would yield (shortest, then first in transition and symbol
    order), found by a search over states with one symbol per transition: enumerating strings costs
    the alphabet to the power of the length (95**3 strings before `.env`), this costs the states."""
    if region.initial in region.finals:
        return ""
    parents: dict = {region.initial: None}
    queue = deque([region.initial])
    while queue:
        state = queue.popleft()
        for transition in sorted(region.map.get(state, {})):
            following = region.map[state][transition]
            if following in parents:
                continue
            parents[following] = (state, min(region.alphabet.by_transition[transition]))
            if following in region.finals:
                chars = []
                while parents[following] is not None:
                    following, symbol = parents[following]
                    chars.append(symbol)
                return "".join(reversed(chars))
            queue.append(following)
    return None


def _cell(text: str, classes) -> tuple | None:
    """What besides its text decides a one-segment command: can an allow cover it (no hazard), and
    which tested command classes admit it. None when `text` is not one plain segment."""
    segments = command_segments(text)
    if segments is None or len(segments) != 1 or segments[0].opaque or segments[0].text != text:
        return None
    segment = segments[0]
    return (segment.allowable, tuple(klass.admits(segment) for klass in classes))


def _cell_candidates(region, classes, tries: int) -> Iterable[str]:
    """Strings to try for each cell of a region: its shortest strings, then commands built from the
    classes' entries and the shell knowledge's risky options (the cells those alone reach)."""
    shortest = []
    for count, chars in enumerate(region.strings()):
        shortest.append("".join(chars))
        yield shortest[-1]
        if count >= tries:
            break
    words = {" ".join(e.words) for klass in classes for e in klass.entries}
    options = sorted({o for row in knowledge().programs.values() for o in row.hazard | row.writes | row.exec})
    for program, row in sorted(knowledge().programs.items()):
        for option in sorted(row.hazard | row.writes | row.exec):
            yield f"{program} {option} x"
    for text in shortest[:3]:  # the region's own commands with a risky option added
        for option in options:
            yield f"{text} {option} x"
    for klass in classes:
        for entry in klass.entries:
            for option in entry.excluded:
                yield f"{' '.join(entry.words)} {option} x"
    for text in sorted(words):
        yield text
        yield f"{text} x"


def _first_word_regex(words) -> str:
    """Commands whose program word is one of `words`, or any word holding `/` or `=` (a path or an
    environment prefix: both can make a segment hazardous)."""
    names = "|".join(_literal_regex(w) for w in sorted(words))
    return rf"({names}|[a-z0-9._~:+%@,-]*[/=][a-z0-9._/~=:+%@,-]*)( {SHELL_WORD})*"


@lru_cache(maxsize=64)
def _first_word_fsm(words: frozenset):
    return _fsm(_first_word_regex(words))


def _empty_cells(region, classes) -> set:
    """Cells proved empty: no hazard where no risky program can start a command; no class
    membership where no entry's program can."""
    data = knowledge()
    risky = {name for name, row in data.programs.items() if not row.writes_named_files_only}
    risky |= set(data.wrappers) | data.shells
    proved: set[str | int] = set()  # "hazard", and each class proved empty by its index
    if (region & _first_word_fsm(frozenset(risky))).empty():
        proved.add("hazard")
    for index, klass in enumerate(classes):
        if (region & _first_word_fsm(frozenset(e.words[0] for e in klass.entries if e.words))).empty():
            proved.add(index)
    return proved


def _split_cells(region, classes, notes: list[str]) -> tuple[list[str], bool]:
    """One witness per cell (allowable × admitted by each class) a region holds; a cell with no
    witness must be proved empty, else the split is not exact."""
    cells = [
        (allowable, bits)
        for allowable in (True, False)
        for bits in itertools.product((True, False), repeat=len(classes))
        if allowable or not any(bits)
    ]  # a class admits only what an allow may cover
    found: dict[tuple, str] = {}
    for text in _cell_candidates(region, classes, SEARCH_SAMPLES):
        if all(cell in found for cell in cells):
            break
        if not region.accepts(text):
            continue
        cell = _cell(text, classes)
        if cell is not None and cell not in found:
            found[cell] = text
    empty = _empty_cells(region, classes) if any(cell not in found for cell in cells) else set()
    possible = [
        (allowable, bits)
        for allowable, bits in cells
        if (allowable or "hazard" not in empty) and not any(bit and index in empty for index, bit in enumerate(bits))
    ]
    missing = [cell for cell in possible if cell not in found]
    if missing:
        notes.append(
            "a region of command words has cells (hazard, class membership) without a witness; they may be empty"
        )
    return list(found.values()), not missing


def _string_classes(
    tests: FieldTests, shell: bool, notes: list[str], classes=(), max_refined: int = MAX_REFINED_PATTERNS
) -> tuple[list[Any], bool]:
    exact = True
    strings = [v for v in tests.literals if isinstance(v, str)]
    others = [v for v in tests.literals if not isinstance(v, str)]
    regexes = [glob_regex(p, shell) for p in tests.patterns] + [_literal_regex(s) for s in strings]
    universe = SHELL_UNIVERSE if shell else TEXT_UNIVERSE
    if len(regexes) > max_refined:
        notes.append(f"{len(regexes)} patterns on one argument: one witness per pattern, not every class they make")
        return _witness_per_pattern(universe, regexes, shell) + others, False
    try:
        regions = _atoms(universe, regexes)
    except Exception as exc:  # noqa: BLE001 - an automaton we cannot build is a reason, not a crash
        notes.append(f"patterns could not be turned into automata ({exc.__class__.__name__}); classes are a sample")
        return list(dict.fromkeys(tests.patterns + strings)) + others, False
    witnesses = []
    for region in regions:
        if shell:
            # within a region, a hazard or a command class can still tell commands apart: one witness per cell
            cells, complete = _split_cells(region, classes, notes)
            exact &= complete
            witnesses.extend(cells)
            continue
        found = _shortest(region)
        if found is None:
            exact = False
            notes.append("a class of command words has no witness that parses as one plain command")
            continue
        witnesses.append(found)
    if shell:
        segment_classes = witnesses
        if len(segment_classes) > MAX_SEGMENT_ATOMS:
            exact = False
            notes.append(f"{len(segment_classes)} classes of shell segments: only single and paired segments checked")
            combos = [c for k in (1, 2) for c in itertools.combinations(segment_classes, k)]
        else:
            combos = [c for k in range(1, len(segment_classes) + 1) for c in itertools.combinations(segment_classes, k)]
        commands = [" && ".join(combo) for combo in combos] + [OPAQUE_COMMAND, UNPARSEABLE_COMMAND]
        return commands + others, exact
    return witnesses + others, exact


def _witness_per_pattern(universe: str, regexes: list[str], shell: bool) -> list[Any]:
    """A value each pattern matches (and one none need match): a sample of the classes, never a proof. A
    shell command is checked one segment at a time, with the opaque and unparseable commands."""
    whole = _fsm(universe)
    step = -(-len(regexes) // MAX_PATTERN_WITNESSES)
    found = [w for w in (_shortest(whole & _fsm(regex)) for regex in regexes[::step]) if w is not None]
    found = list(dict.fromkeys(found + ["x"]))
    return found + [OPAQUE_COMMAND, UNPARSEABLE_COMMAND] if shell else found


def _literal_regex(text: str) -> str:
    return "".join("\\" + c if not c.isalnum() else c for c in text)


def argument_classes(conditions: Iterable[ast.Expr | None], shell_tool: bool, command_classes=None) -> ArgumentClasses:
    """`command_classes`: name -> CommandClass, for the `args.command is NAME` tests."""
    notes: list[str] = []
    exact = True
    per_field: list[tuple[str, list[Any]]] = []
    conditions = list(conditions)
    tested = field_tests(conditions)
    if shell_tool and any(_tests_network(condition) for condition in conditions):
        tested.setdefault("command", FieldTests()).network = True
    for name, tests in sorted(tested.items()):
        values: list[Any] = []
        shell = shell_tool and name == "command"
        classes = tuple((command_classes or {})[c] for c in sorted(set(tests.classes)) if c in (command_classes or {}))
        if tests.patterns or any(isinstance(v, str) for v in tests.literals) or (shell and tests.classes):
            found, ok = _string_classes(tests, shell, notes, classes)
            values += found
            exact &= ok
            if tests.place:
                exact = False
                notes.append(f"`args.{name}` is tested both as text and as a path; classes are combined, not crossed")
        else:
            values += list(tests.literals)
        if tests.bounds:
            values += _number_classes(tests.bounds)
        if tests.arrays or tests.lengths or any(isinstance(v, tuple) for v in tests.literals):
            found, ok = _array_classes(tests, tests.lists)
            values += found
            if not ok:
                exact = False
                notes.append(f"`args.{name}`: many kinds of array item, or a witness equal to a list literal; sampled")
        if tests.place:
            values += [INSIDE_PATH, OUTSIDE_PATH]
        if shell:
            from .shell_options import pattern_reading

            # the pattern's options apart and sorted, then `--` and its operands: named by options, not by text
            tests.optioned += [
                reading.text.replace("*", "x").replace("?", "x")
                for reading in map(pattern_reading, tests.patterns)
                if reading is not None
            ]
        if tests.optioned:
            exact = False
            notes.append(
                f"`args.{name}` has patterns read by an option grammar; their spellings are checked on samples"
            )
            values += tests.optioned
        if tests.network:
            if values:  # the line's reach is not a class of its patterns: the two are crossed on samples only
                exact = False
                notes.append(f"`call.network` and other tests of `args.{name}`: their classes are checked on samples")
            values += list(NETWORK_SAMPLES)
        if tests.classes and not shell:
            exact = False
            notes.append(f"`args.{name} is …` tests a value that is not a shell command; checked on samples")
            values += list(CLASS_SAMPLES)
        elif len(classes) < len(set(tests.classes)):
            exact = False
            notes.append(f"`args.{name}` names a command class that is not declared")
        if not values:
            values = ["value"]  # only presence is tested
        per_field.append((name, [_ABSENT] + _distinct(values)))
    total = 1
    for _, values in per_field:
        total *= len(values)
    if total > MAX_CLASSES:
        exact = False
        notes.append(f"{total} argument classes: checked a deterministic sample of {MAX_CLASSES}")
    witnesses = []
    for combo in itertools.islice(itertools.product(*(values for _, values in per_field)), MAX_CLASSES):
        witnesses.append({name: value for (name, _), value in zip(per_field, combo) if value is not _ABSENT})
    if not exact:
        # fields sampled one witness per pattern already hold many classes: fewer recombinations keep
        # `dshc verify` of a large guard library within minutes
        sampled = any("patterns on one argument" in note for note in notes)
        extra = _random_search(per_field, SEARCH_SAMPLES // 5 if sampled else SEARCH_SAMPLES)
        witnesses += extra
        notes.append(f"not exact, so not a proof: also searched {len(extra)} seeded random argument objects")
    return ArgumentClasses(tuple(witnesses), exact, tuple(dict.fromkeys(notes)))


def _distinct(values: list) -> list:
    """`values` without repeats, in order; an array (a list) is a value too, and `true` is not `1`."""
    seen: dict = {}
    for value in values:
        seen.setdefault((type(value).__name__, repr(value)), value)
    return list(seen.values())


MAX_ITEM_ATOMS = 6  # every subset of up to 6 kinds of item: 64 arrays (before lengths)


def _number_classes(bounds: list) -> list:
    """A witness of each class the orders' bounds cut the numbers into: each bound, one below the least, one
    above the greatest, one between each pair (an integer where one fits, else the midpoint). Text and a
    boolean are classes of their own (an order never holds on them)."""
    points = sorted({b for b in bounds if is_number(b)})
    found: list = [*points, "not a number", True]
    if points:
        found += [points[0] - 1, points[-1] + 1]
    for low, high in zip(points, points[1:]):
        between = low + 1 if low + 1 < high else (low + high) / 2
        found.append(between)
    return found


def _item_key(value) -> tuple:
    """An item as JSON tells items apart: `true` is not `1`."""
    return (isinstance(value, bool), value)


def _array_classes(tests: FieldTests, lists: list[tuple]) -> tuple[list, bool]:
    """Arrays that no test can tell apart, one of each. A test of an array reads only which lists of the
    policy (`all in` and `any in` lists, a `contains` value) its items fall in, and its length: items in the
    same lists are one kind. Every subset of the kinds (one item none names among them), at each length a
    `length` bound tells apart; the list literals of `==`/`in` as written; a value that is not an array.
    Exact unless the kinds are too many to take every subset, or a witness is itself one of the literals."""
    literals = [v for v in tests.literals if isinstance(v, tuple)]
    named = list({_item_key(i): i for i in [*tests.items, *(i for v in literals for i in v)]}.values())
    numbers = [i for i in named if is_number(i)]
    other: Any = max(numbers) + 1 if numbers and len(numbers) == len(named) else "other item"
    while _item_key(other) in {_item_key(i) for i in named}:
        other = f"{other}!"
    keyed = [{_item_key(i) for i in group} for group in lists]
    kinds = list({tuple(_item_key(i) in group for group in keyed): i for i in [*named, other]}.values())
    exact = len(kinds) <= MAX_ITEM_ATOMS
    sizes = range(len(kinds) + 1) if exact else (0, 1, 2)
    subsets = [list(c) for k in sizes for c in itertools.combinations(kinds, k)]
    if not exact:
        subsets.append(kinds)
    bounds = {b for b in tests.lengths if isinstance(b, int) and not isinstance(b, bool)}
    lengths = sorted({n for b in bounds for n in (b - 1, b, b + 1) if n >= 0})
    found: list = []
    for subset in subsets:
        found.append(subset)
        if subset:
            found += [subset + [subset[0]] * (n - len(subset)) for n in lengths if n > len(subset)]
    written = {repr(list(v)) for v in literals}
    exact &= not any(repr(w) in written for w in found)  # the class "equal to none of the literals" may be missed
    found += [list(v) for v in literals]
    found += ["x" * n for n in lengths] + ["not an array"]
    return found, exact


def _tests_network(condition) -> bool:
    return any(not isinstance(atom, ast.Flag) and atom.fact.dotted == "call.network" for atom in ast.atoms(condition))


def _random_search(per_field, count: int) -> list[dict]:
    """Argument objects built by recombining the class witnesses' words (seeded: runs repeat)."""
    rng = random.Random(8785)
    words = sorted({w for _, values in per_field for v in values if isinstance(v, str) for w in v.split()}) or ["x"]
    joins = [" ", " && ", " | ", "; ", " || "]
    found = []
    for _ in range(count):
        args = {}
        for name, values in per_field:
            pick = rng.choice(values)
            if pick is _ABSENT:
                continue
            if isinstance(pick, str) and rng.random() < 0.5:
                pick = rng.choice(joins).join(rng.choice(words) for _ in range(rng.randint(1, 4)))
            args[name] = pick
        found.append(args)
    return found


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()
