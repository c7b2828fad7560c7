"""Options read per program, from catalogs/shell/options.json: a simple command or a command pattern → its
option set (any order, cluster, alias or unambiguous abbreviation), so `deny … "rm -rf /*"` meets `rm -fr /`.
"""

from __future__ import annotations

import os
import posixpath

from ..common import json_io
from ._base.frozen import record
from .globs import glob_match
from ._base.memo import cached_property, memoised, once
from .package_data import package_path

_GLOB = frozenset("*?")


@record(slots=False)
class Grammar:
    """How one program (or `program subcommand`) spells its options."""

    spelled: dict  # every spelling -> the canonical options it stands for (`-R` -> ("-r",); `-D` -> two)
    longs: tuple  # every long spelling, for abbreviations
    values: frozenset  # canonical options that take a value (any other takes one only attached: `--color=WHEN`)
    permutes: bool
    operand_options: tuple = ()  # (prefix, canonical options): an operand so starting gives them (`+main`)


@record(slots=False)
class OptionReading:
    """A command as its options: `program` (`rm`, `git push`), the canonical options given, those given a
    value as (option, value) pairs, and the operands joined by spaces. `open`: a word from some point on is an
    expansion, which may be any options and operands."""

    program: str
    options: frozenset
    valued: tuple
    operands: str
    open: bool = False

    @cached_property  # a part's label, made per call from a remembered reading
    def text(self) -> str:
        given = sorted(self.options - {name for name, _ in self.valued})
        given += sorted(f"{name}={value}" for name, value in self.valued)
        rest = ["…"] if self.open else ["--", self.operands] if self.operands else []
        return " ".join([self.program, *given, *rest])


@once
def grammars() -> dict:
    """The shipped grammars by program, read once per process."""
    with open(os.path.join(package_path("dshc.catalogs"), "shell", "options.json"), encoding="utf-8") as handle:
        rows = json_io.loads(handle.read())
    return {name: _grammar(row) for name, row in rows.items() if not name.startswith("$")}


def _grammar(row: dict) -> Grammar:
    spelled = {}
    for canonical, others in row["options"].items():
        for spelling in (canonical, *others):
            spelled[spelling] = (canonical,)
    for spelling, canonicals in row.get("expands", {}).items():
        spelled[spelling] = tuple(canonicals)
    return Grammar(
        spelled,
        tuple(s for s in spelled if s.startswith("--")),
        frozenset(row.get("values", ())),
        row.get("permutes", False),
        tuple((prefix, tuple(given)) for prefix, given in row.get("operand_options", {}).items()),
    )


def _program(words) -> tuple[str, int] | None:
    """(grammar name, index of the first word after it) when a grammar reads these words (`git -C d push`
    is `git push`); None otherwise."""
    if not words:
        return None
    name = posixpath.basename(words[0])
    table = grammars()
    if name in table:
        return name, 1
    at = _after_leading(name, words)
    if at is not None and at < len(words) and f"{name} {words[at]}" in table:
        return f"{name} {words[at]}", at + 1
    return None


def _after_leading(name: str, words) -> int | None:
    """Where the subcommand of `name` is, its leading options skipped (commands.json's
    `options_before_subcommand`), or None when the program has no subcommands."""
    from .shell_data import knowledge

    row = knowledge().programs.get(name)
    spec = row.leading if row is not None else None
    if spec is None:
        return None
    i = 1
    while i < len(words) and words[i].startswith("-") and words[i] != "--":
        word = words[i]
        if word.startswith("--"):
            takes = word in spec.long_values  # `--git-dir=D` carries its value
        else:
            takes = len(word) == 2 and word[1] in spec.values
        i += 2 if takes else 1
    return i


def _spellings(word: str, grammar: Grammar) -> tuple[str, ...]:
    """The canonical options a long option word names: exact, else every long option it abbreviates (an
    ambiguous abbreviation is refused by the program: naming them all only errs on the deny side), else
    itself."""
    found = grammar.spelled.get(word)
    if found is not None:
        return found
    matches = [c for spelling in grammar.longs if spelling.startswith(word) for c in grammar.spelled[spelling]]
    return tuple(dict.fromkeys(matches)) or (word,)


def _glob_named(word: str, grammar: Grammar) -> bool:
    """Whether a pattern's word has `*` or `?` where it names options (`-r*`, `--f*`): then it is an operand
    glob. In an option's value it is the value's glob (`--orphan=x*`, `-mfix*`)."""
    if word.startswith("--"):
        return bool(_GLOB & set(word.partition("=")[0]))
    for char in word[1:]:
        if char in _GLOB:
            return True
        if grammar.spelled.get("-" + char, ("",))[0] in grammar.values:
            return False
    return False


def read_options(words, grammar: Grammar, pattern: bool = False):
    """(canonical options, ((option, value), …), operands) of the words after the program name. In a
    pattern, a word holding `*` or `?` where it names options is an operand glob (`_glob_named`)."""
    options: list = []
    valued: list = []
    operands: list = []
    i, n, ended = 0, len(words), False
    while i < n:
        word = words[i]
        i += 1
        if ended or word == "-" or not word.startswith("-") or (pattern and _glob_named(word, grammar)):
            operands.append(word)
            ended = ended or not grammar.permutes
            if not pattern:  # (a pattern's `+*` is a glob of operands, not a force)
                options += [
                    option for prefix, given in grammar.operand_options if word.startswith(prefix) for option in given
                ]
            continue
        if word == "--":
            ended = True
            continue
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            names = _spellings(name, grammar)
            if not eq and names[0] in grammar.values and i < n:
                value, eq = words[i], "="
                i += 1
            options += names
            if eq:
                valued += [(each, value) for each in names]
            continue
        for at in range(1, len(word)):  # a cluster: `-rfv`; a value ends it (`-mMSG`) or is the next word
            names = grammar.spelled.get("-" + word[at], ("-" + word[at],))
            options += names
            if names[0] in grammar.values:
                value = word[at + 1 :]
                if not value and i < n:
                    value = words[i]
                    i += 1
                valued += [(each, value) for each in names]
                break
    return frozenset(options), tuple(valued), " ".join(operands)


def option_reading(argv, literal: int) -> OptionReading | None:
    """The command `argv` read by its program's grammar (words from `literal` on are expansions); None when
    no grammar reads it."""
    known = argv[:literal]
    found = _program(known)
    if found is None:
        return None
    name, at = found
    options, valued, operands = read_options(known[at:], grammars()[name])
    return OptionReading(name, options, valued, operands, literal < len(argv))


@memoised(4096)
def pattern_reading(pattern: str) -> OptionReading | None:
    """A command pattern read by its program's grammar, when one reads it and it names at least one option
    (`rm -rf /*`); None for any other pattern, which is matched as text only."""
    words = pattern.split(" ")
    found = _program(words)
    if found is None:
        return None
    name, at = found
    options, valued, operands = read_options(words[at:], grammars()[name], pattern=True)
    return OptionReading(name, options, valued, operands) if options else None


def except_problem(pattern: str, excepted) -> str:
    """Why `matches PATTERN except OPTIONS` cannot be read ("" when it can): no grammar reads the pattern's
    program, or a word is not one of its options."""
    found = _program(pattern.split(" "))
    if found is None:
        return f"no option grammar reads `{pattern}`: `except` is for " + ", ".join(
            f"`{name}`" for name in sorted(grammars())
        )
    grammar = grammars()[found[0]]
    for option in excepted:
        if not option.startswith("-") or option == "--" or " " in option:
            return f"`{option}` is not an option"
        if not read_options([option], grammar)[0] <= {c for each in grammar.spelled.values() for c in each}:
            return f"`{option}` is not an option of `{found[0]}`"
    return ""


def gives_excepted(segment, pattern: str, excepted, possibly: bool) -> bool:
    """Whether the command gives one of the options `except` names, however spelled: possibly (an expansion
    may be any option; a command no grammar of the pattern's program reads may be anything) or surely."""
    found = _program(pattern.split(" "))
    reading = segment.options or option_reading(segment.argv, segment.literal_words)
    if found is None or reading is None or reading.program != found[0] or reading.open:
        return possibly
    grammar = grammars()[found[0]]
    return any(read_options([option], grammar)[0] <= reading.options for option in excepted)


def options_match(reading: OptionReading, pattern: str) -> bool:
    """Whether the command may be one the pattern names (the deny side): the same program, every option of
    the pattern given (a valued one with a value its glob matches), and the operands matching the pattern's
    operand globs (a single operand glob: any one operand). An open command (an expansion among its words) may be any such command."""
    wanted = pattern_reading(pattern)
    if wanted is None or wanted.program != reading.program:
        return False
    if reading.open:
        return True
    if not wanted.options <= reading.options:
        return False
    if not all(
        any(name == given and glob_match(glob, value) for given, value in reading.valued)
        for name, glob in wanted.valued
    ):
        return False
    if glob_match(wanted.operands, reading.operands, shell=True):
        return True
    # one operand glob: any one operand it matches (`rm -rf /*` meets `rm -rf x /`, each operand is removed)
    return " " not in wanted.operands and any(
        glob_match(wanted.operands, operand) for operand in reading.operands.split(" ")
    )
