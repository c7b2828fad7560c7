"""bash's brace expansion (`src/{a,b}.py`, `f{1..3}`) of an unquoted word of plain characters, into the words it
becomes, each read as that word written out; any other form stays an unknown word."""

from __future__ import annotations

from .words import _DIR_TILDES, _directory_tilde, _glob_shape, _unquote_plain, _Word

MAX_BRACE_WORDS = 64  # beyond: the word is not expanded, and its command is opaque
# a word of these alone has no quote, expansion, bracket pattern or escape: its braces are bash's to expand
_BRACE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+@%,{}*?~")


def _brace_words(raw: str) -> list[_Word] | None:
    """The words bash makes of the unquoted word `raw` by brace expansion, or None: a character other than
    `_BRACE_CHARS`, a brace bash would keep as it is (`{a}`, an unmatched one), a sequence with a step or
    leading zeros, or more than MAX_BRACE_WORDS words. An empty word is dropped, as bash drops it."""
    if not _BRACE_CHARS.issuperset(raw):
        return None
    texts = _expand(raw)
    if texts is None:
        return None
    return [_plain_word(text) for text in texts if text]


def _expand(text: str) -> list[str] | None:
    """Expands the first brace group, its alternatives and the text after it, in bash's order (`{a,b}{c,d}` →
    ac ad bc bd)."""
    start = text.find("{")
    if start == -1:
        return None if "}" in text else [text]
    if "}" in text[:start]:
        return None
    depth, end, cuts = 0, -1, [start]
    for index in range(start, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                end = index
                break
        elif char == "," and depth == 1:
            cuts.append(index)
    if end == -1:
        return None
    if len(cuts) > 1:
        cuts.append(end)
        alternatives = [_expand(text[a + 1 : b]) for a, b in zip(cuts, cuts[1:])]
        middles: list[str] | None = []
        for alternative in alternatives:
            if alternative is None or middles is None:
                return None
            middles += alternative
    else:
        middles = _sequence(text[start + 1 : end])
    rest = _expand(text[end + 1 :])
    if middles is None or rest is None or len(middles) * len(rest) > MAX_BRACE_WORDS:
        return None
    return [text[:start] + middle + after for middle in middles for after in rest]


def _sequence(inner: str) -> list[str] | None:
    """`1..3`, `3..1`, `-1..2`, `a..e`: bash's sequence; None for any other text (a step, leading zeros, mixed
    letter cases, which run through `[` and `\\`)."""
    first, dots, last = inner.partition("..")
    if not dots or ".." in last:
        return None
    if _integer(first) and _integer(last):
        low, high = int(first), int(last)
        step = 1 if high >= low else -1
        if abs(high - low) >= MAX_BRACE_WORDS:
            return None
        return [str(n) for n in range(low, high + step, step)]
    letters = first + last
    if len(first) == len(last) == 1 and letters.isascii() and (letters.islower() or letters.isupper()):
        low, high = ord(first), ord(last)
        step = 1 if high >= low else -1
        return [chr(n) for n in range(low, high + step, step)]
    return None


def _integer(text: str) -> bool:
    digits = text[1:] if text.startswith("-") else text
    return digits.isascii() and digits.isdigit() and (digits[0] != "0" or text == "0")


def _plain_word(raw: str) -> _Word:
    """The word `raw` (plain characters, braces expanded) as the builder reads an unquoted word of that text."""
    value, glob = _unquote_plain(raw, False)
    shape = tuple(_glob_shape(raw)) if glob else (value,)
    word = _Word(value, False, "", glob, raw[:1] in ("*", "?"), shape)
    return _directory_tilde(word) if value[:2] in _DIR_TILDES else word
