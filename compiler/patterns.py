"""Regular expressions compiled when first used.

`import re` costs a process ~25 million instructions (it imports `enum`, `functools` and
`collections`), a seventh of a hook that decides one call. The expressions dshc keeps at module
level are used only by some commands (arithmetic in a shell line, a URL in an agent's call, an
upstream's name), so each is compiled, and `re` imported, by its first use. Flags go inline in
the text (`(?s)`, `(?m)`): naming them needs `re`.
"""

from __future__ import annotations

_COMPILED: dict = {}  # text -> compiled expression: the texts are the program's own, a fixed few


def compiled(text: str):
    """`re.compile(text)`, once per text and process."""
    found = _COMPILED.get(text)
    if found is None:
        import re

        found = _COMPILED[text] = re.compile(text)
    return found


def fnmatchcase(name: str, pattern: str) -> bool:
    """`fnmatch.fnmatchcase(name, pattern)`; fnmatch (which imports `re`) loads on first use."""
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)


class Pattern:
    """A module-level expression: `re.compile(text)`'s match/search/fullmatch/sub/findall/finditer, compiled on
    first use."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def match(self, string: str):
        return compiled(self.text).match(string)

    def search(self, string: str):
        return compiled(self.text).search(string)

    def fullmatch(self, string: str):
        return compiled(self.text).fullmatch(string)

    def sub(self, replacement, string: str) -> str:
        return compiled(self.text).sub(replacement, string)

    def findall(self, string: str) -> list:
        return compiled(self.text).findall(string)

    def finditer(self, string: str):
        return compiled(self.text).finditer(string)
