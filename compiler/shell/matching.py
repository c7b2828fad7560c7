"""Whether a policy's command pattern covers a segment: as text (expansions possibly or surely), by the
basename of a program run by path, and, on the deny side, by the program's option grammar."""

from __future__ import annotations

from .._base.frozen import replace
from ..globs import glob_accepts_any_continuation, glob_match, glob_prefix_viable
from .._base.memo import memoised
from .records import Segment


def command_matches(segment: Segment, pattern: str) -> bool:
    """Glob-match one segment's text (opacity ignored): `"git *"` covers `git` and `git push`."""
    return glob_match(pattern, segment.text, shell=True)


def by_base(segment: Segment) -> Segment:
    """The segment with its program named by its basename (`./rm x` as `rm x`): what denies also meet."""
    return replace(segment, argv=(segment.base, *segment.argv[1:]), base="")


@memoised(4096)  # a policy's calls repeat their commands, and its analyses keep equal segments
def with_options(segment: Segment) -> Segment | None:
    """The segment with its reading by its program's option grammar, deny-only (`rm -fr /` read as the
    options -f -r and the operand /); None when no grammar reads it or what runs is not known."""
    if segment.opaque:
        return None
    from ..shell_options import option_reading

    reading = option_reading(segment.argv, segment.literal_words)
    return None if reading is None else replace(segment, options=reading, deny_only=True)


def segment_matches(segment: Segment, pattern: str, lenient: bool) -> bool:
    """Whether `pattern` covers the segment: possibly (lenient, deny/ask side) or surely (allow).

    An expansion word `$X` may become anything: the deny side matches when some value could
    match; the allow side only when every value does. A segment read by its option grammar also
    matches, on the deny side, a pattern naming options it gives however spelled (`options_match`).
    """
    if lenient and segment.options is not None:
        from ..shell_options import options_match

        if options_match(segment.options, pattern):
            return True
    return _text_matches(segment, pattern, lenient)


def _text_matches(segment: Segment, pattern: str, lenient: bool) -> bool:
    if not segment.allowable:
        if segment.opaque or not lenient:
            return lenient
    if lenient and segment.base and _text_matches(by_base(segment), pattern, True):
        return True  # `./rm x` is denied where `rm *` is
    literal = segment.literal_words
    if literal == len(segment.argv):
        return glob_match(pattern, segment.text, shell=True)
    prefix = " ".join(segment.argv[:literal])
    if lenient:
        return glob_prefix_viable(pattern, prefix, shell=True)
    return glob_accepts_any_continuation(pattern, prefix + " " if literal else "", shell=True)
