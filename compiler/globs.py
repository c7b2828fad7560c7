"""Policy glob patterns: `*` any run of characters, `?` one character, everything else literal.

Matching runs a bit-parallel automaton (one pass over the text, no backtracking), so a call's
arguments can never make a decision slow; `glob_regex` gives verification the same language.
For shell commands a pattern ending in ` *` also matches the bare command: `git *` covers `git`.
"""

from __future__ import annotations

from ._base.frozen import record
from ._base.memo import memoised


def glob_regex(pattern: str, shell: bool = False) -> str:
    """The pattern as a regular expression over the whole text (no anchors; callers add them)."""
    import re  # for verification's checks only: matching a call needs no regular expression

    bare_ok = shell and pattern.endswith(" *")
    body = pattern[:-2] if bare_ok else pattern
    out = []
    for char in body:
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        else:
            out.append(re.escape(char))
    regex = "".join(out)
    return regex + "( .*)?" if bare_ok else regex


@record(slots=False)
class _Automaton:
    """Bit i of a state set: the first i pattern items are matched. Runs of `*` are folded into one."""

    literal: dict  # char -> positions whose item is that char
    any_one: int  # positions whose item is `?`
    stars: int  # positions whose item is `*`
    accept: int  # the bit of the final position
    tail: int  # the position of a final `*`: from there every continuation is accepted (else 0)

    def close(self, states: int) -> int:
        return states | ((states & self.stars) << 1)  # a `*` may match nothing (runs are folded)

    def start(self) -> int:
        return self.close(1)

    def step(self, states: int, char: str) -> int:
        moved = (states & (self.literal.get(char, 0) | self.any_one)) << 1
        return self.close(moved | (states & self.stars))

    def run(self, text: str, states: int | None = None) -> int:
        states = self.start() if states is None else states
        lookup, any_one, stars = self.literal.get, self.any_one, self.stars  # `step`, inlined: it runs per character
        for char in text:
            states = ((states & (lookup(char, 0) | any_one)) << 1) | (states & stars)
            states |= (states & stars) << 1
            if not states:
                break
        return states


@memoised(4096)
def _automaton(pattern: str) -> _Automaton:
    items: list[str] = []
    for char in pattern:
        if char == "*" and items and items[-1] == "*":
            continue
        items.append(char)
    literal: dict[str, int] = {}
    any_one = stars = 0
    for index, item in enumerate(items):
        if item == "*":
            stars |= 1 << index
        elif item == "?":
            any_one |= 1 << index
        else:
            literal[item] = literal.get(item, 0) | (1 << index)
    accept = 1 << len(items)
    # not the accepting position itself: having matched the whole pattern, one more character fails it
    # (`"rm "` matches `rm ` and no `rm -rf /`)
    tail = 1 << (len(items) - 1) if items and items[-1] == "*" else 0
    return _Automaton(literal, any_one, stars, accept, tail)


def _variants(pattern: str, shell: bool) -> tuple[str, ...]:
    """A shell pattern `git *` is the language `git` ∪ `git *`."""
    if shell and pattern.endswith(" *"):
        return (pattern[:-2], pattern)
    return (pattern,)


def glob_match(pattern: str, text: str, shell: bool = False) -> bool:
    """Whole-text match in time linear in `len(text)` (times the pattern length / word size)."""
    return any(
        _stars_only(p, text) if "?" not in p else bool(_automaton(p).run(text) & _automaton(p).accept)
        for p in _variants(pattern, shell)
    )


def _stars_only(pattern: str, text: str) -> bool:
    """A glob of literals and `*`: the leftmost place of each literal piece is never worse than a
    later one, so one left-to-right pass of `str.find` decides it (no backtracking)."""
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return text == pattern
    first, last = pieces[0], pieces[-1]
    if len(text) < len(first) + len(last) or not text.startswith(first) or not text.endswith(last):
        return False
    at, end = len(first), len(text) - len(last)
    for piece in pieces[1:-1]:
        if piece:
            found = text.find(piece, at, end)
            if found < 0:
                return False
            at = found + len(piece)
    return True


def glob_prefix_viable(pattern: str, prefix: str, shell: bool = False) -> bool:
    """Some text starting with `prefix` matches (every live state can still reach the end)."""
    return any(_automaton(p).run(prefix) != 0 for p in _variants(pattern, shell))


def glob_accepts_any_continuation(pattern: str, prefix: str, shell: bool = False) -> bool:
    """Every text starting with `prefix` matches: after it, only `*` is left to match."""
    return any(_automaton(p).run(prefix) & _automaton(p).tail for p in _variants(pattern, shell))
