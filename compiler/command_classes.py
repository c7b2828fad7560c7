"""`commands NAME { … }` declarations → command classes, and whether a shell segment belongs to one.

A segment belongs when its program (and subcommand words) is an entry of the class, none of
the entry's excluded options is used, and nothing about it is unknown or hazardous.
"""

from __future__ import annotations

from . import ast
from ._base.frozen import record

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .shell import Segment


@record(slots=False)
class CommandClass:
    """A named class of shell commands, as all its declarations add up."""

    name: str
    entries: tuple[ast.CommandEntry, ...]
    declared: tuple[ast.Commands, ...] = ()

    def admits(self, segment: Segment) -> bool:
        if not segment.allowable or not segment.argv:
            return False
        own = segment.argv if segment.wraps is None else segment.argv[: segment.wraps]
        return any(_admits(entry, own, segment.literal_words) for entry in self.entries)


def _admits(entry: ast.CommandEntry, argv: tuple[str, ...], literal: int) -> bool:
    from .shell import option_hit  # a segment exists, so the shell analyser is loaded already
    from .shell_data import knowledge

    size = len(entry.words)
    if argv[:size] != entry.words or literal < size:
        return False
    row = knowledge().programs.get(argv[0])
    if literal < len(argv) and (entry.excluded or row is not None and not row.reads_only):
        return False  # `$X` may become a disqualifying option (`find $X` → `-delete`); a file read is decided as one
    for word in argv[size:]:
        if word == "--":
            break
        if word.startswith("-") and any(option_hit(word, option) is not None for option in entry.excluded):
            return False
    return True


def merge_classes(declarations: Iterable[ast.Commands]) -> tuple[CommandClass, ...]:
    """Declarations of one name add up, in file order."""
    merged: dict[str, list[ast.Commands]] = {}
    for decl in declarations:
        merged.setdefault(decl.name.text, []).append(decl)
    return tuple(
        CommandClass(name, tuple(e for d in decls for e in d.entries), tuple(decls))
        for name, decls in sorted(merged.items())
    )
