"""A shell command line → the simple commands it would run (argv, program normalised, wrappers and
`sh -c` unwrapped) and the files it redirects; what the text cannot tell makes a segment opaque.
The entry points, and the guards around one reading (length, astral characters, line continuations)."""

from __future__ import annotations

from ..shell_data import knowledge
from .matching import by_base as by_base, command_matches, segment_matches, with_options
from .options import option_hit as option_hit
from .plain import _PLAIN as _PLAIN, _plain_words
from .records import MAX_COMMAND_CHARS, MAX_DEPTH, MAX_SEGMENTS, Analysis, FileAccess, Segment, _Unparseable
from .redirections import with_redirections
from .walk import _continuations_joined, _Walker

__all__ = [
    "Segment",
    "FileAccess",
    "Analysis",
    "analyse",
    "command_segments",
    "command_matches",
    "with_redirections",
    "with_options",
    "segment_matches",
    "MAX_DEPTH",
    "MAX_COMMAND_CHARS",
    "MAX_SEGMENTS",
]


def analyse(command: str) -> Analysis | None:
    """The segments and file accesses of `command`; None when it does not parse. Never raises.

    Beyond MAX_COMMAND_CHARS or MAX_SEGMENTS the command is one opaque segment.
    """
    if not isinstance(command, str):
        return None
    if len(command) > MAX_COMMAND_CHARS:
        return Analysis((Segment((), True, f"command longer than {MAX_COMMAND_CHARS} characters"),))
    if "\x00" in command:
        return None
    stand_ins = _stand_ins(command)
    if stand_ins is None:
        return Analysis((Segment((), True, "characters outside the Basic Multilingual Plane are not analysed"),))
    found = _read(command.translate(stand_ins[0]))
    if found is not None and _CONTINUATION in command:
        joined = _continuations_joined(command.translate(stand_ins[0]).encode("utf-8", "surrogatepass"))
        found = _with_continuations_joined(found, _read(joined.decode("utf-8", "surrogatepass")))
    return _restore(found, stand_ins[1]) if found is not None and stand_ins[1] else found


def _read(command: str) -> Analysis | None:
    try:
        walker = _Walker(knowledge(), _plain_words)
        walker.walk(command.encode("utf-8", "surrogatepass"), 0, ())
        return walker.result()
    except _Unparseable as exc:
        if str(exc) == "too many segments":
            return Analysis((Segment((), True, f"more than {MAX_SEGMENTS} simple commands"),))
        return None
    except (RecursionError, UnicodeError, ValueError):
        return None


_CONTINUATION = "\\\n"
_JOINED = Segment((), True, "a line continuation joins words: bash reads the line otherwise than its text shows")


def _with_continuations_joined(found: Analysis, joined: Analysis | None) -> Analysis:
    """Bash drops a backslash-newline before it splits words, so `r\\⏎m -rf x` runs `rm`; tree-sitter-bash
    reads two words. The line is read again with every continuation bash drops dropped (`_continuations_joined`):
    when both readings agree, the line is what its text shows; otherwise both readings count (a deny meets
    either) and the line is opaque (no allow covers it)."""
    if joined is not None and joined == found:
        return found
    extra = joined or Analysis(())
    return Analysis(
        (*found.segments, *(s for s in extra.segments if s not in found.segments), _JOINED),
        (*found.files, *(f for f in extra.files if f not in found.files)),
    )


_PRIVATE_USE = range(0xE000, 0xF900)


def _stand_ins(command: str):
    """(to stand-ins, back) for characters above U+FFFF, which crash tree-sitter-bash's scanner
    (`{` followed by U+E751E segfaults 0.25.1); None when no private-use stand-in is free."""
    astral = sorted({c for c in command if ord(c) > 0xFFFF})
    if not astral:
        return {}, {}
    if len(astral) > len(_PRIVATE_USE) or any(ord(c) in _PRIVATE_USE for c in command):
        return None
    forward = {ord(c): chr(_PRIVATE_USE[i]) for i, c in enumerate(astral)}
    return forward, {ord(v): chr(k) for k, v in forward.items()}


def _restore(found: Analysis, back: dict) -> Analysis:
    segments = tuple(
        Segment(
            tuple(a.translate(back) for a in s.argv),
            s.opaque,
            s.reason.translate(back),
            s.hazard,
            s.literal,
            s.wraps,
            s.base.translate(back),
            s.deny_only,
            tuple(r.translate(back) for r in s.redirects),
        )
        for s in found.segments
    )
    files = tuple(
        FileAccess(
            f.kind,
            f.path.translate(back),
            tuple(item.translate(back) for item in f.pattern),
            f.why.translate(back),
            f.tree,
        )
        for f in found.files
    )
    return Analysis(segments, files)


def command_segments(command: str) -> tuple[Segment, ...] | None:
    """The simple commands `command` would run, in text order (None: it does not parse)."""
    found = analyse(command)
    return None if found is None else found.segments
