"""Which of many literal prefixes a text starts with: one binary search, not one slice per length.

In: literal prefixes, each with a value (a glob group: `"src/*"` gives `src/`). Out, for a text: the
values of every prefix it starts with, shortest first. Suffixes are the prefixes of the reversed
text (`AffixIndex(..., suffixes=True)`).

The prefixes are kept sorted; a text's longest matching prefix `p` is the sorted key just at or
before the text, or one of that key's own shorter prefixes among the keys (every key between `p`
and the text starts with `p`), so a short walk up a key's parents finds it. Each key holds the
values of itself and all its parents, shortest first: the answer is one tuple.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right


WILD = ("*", "?")
SCREENED = 64  # keys a text is screened against in one C call before the binary search (`literals`)


def literal_keys(pattern: str, shell: bool) -> tuple[tuple[str, str], ...]:
    """Where a glob is looked up by its literal text: (("exact", text),), (("prefix", p),) for `p*`,
    (("suffix", s),) for `*s`, or () for any other glob (tried as written). For a shell command
    (`shell`) `git *` also matches the bare `git`: keyed under both."""
    body = pattern[:-1]
    if not any(w in pattern for w in WILD):
        return (("exact", pattern),)
    if pattern.endswith("*") and not any(w in body for w in WILD):
        return (("prefix", body), ("exact", body[:-1])) if shell and body.endswith(" ") else (("prefix", body),)
    if pattern.startswith("*") and not any(w in pattern[1:] for w in WILD):
        return (("suffix", pattern[1:]),)
    return ()


def path_segment(pattern: str) -> str | None:
    """The longest `X` the glob holds as a whole literal path segment (`/X/`, `X/` at its start or `/X` at
    its end, no wildcard in it), or None:
    every text the glob matches then has `X` among its `/`-separated parts, so a text lacking every such
    part needs no test (`*/pkg12/*.py` is tried on paths with a `pkg12` part only)."""
    best = None
    runs = pattern.replace("?", "*").split("*")
    for at, run in enumerate(runs):
        parts = run.split("/")
        # between two slashes of one literal run; the first run starts the text and the last ends it
        whole = parts[0 if at == 0 else 1 : len(parts) if at == len(runs) - 1 else -1]
        for part in whole if len(parts) > 1 else ():
            if part and (best is None or len(part) > len(best)):
                best = part
    return best


class AffixIndex:
    __slots__ = ("keys", "parent", "chain", "reverse", "literals")

    def __init__(self, values: dict, suffixes: bool = False) -> None:
        self.reverse = suffixes
        # as written: `text.startswith(literals)` (endswith) says if any matches, in C, before the search. That
        # test scans every key: past SCREENED keys it costs more than the search, and `("",)` lets every text by
        self.literals = tuple(values) if len(values) <= SCREENED else ("",)
        by_key = {(key[::-1] if suffixes else key): value for key, value in values.items()}
        self.keys = sorted(by_key)
        self.parent: list[int] = []  # per key: the position of its longest proper prefix among the keys, or -1
        self.chain: list[tuple] = []  # per key: the values of its prefixes among the keys and its own, shortest first
        # in sorted order the keys starting with `p` follow `p` together: a stack holds the current key's
        # prefixes among the keys (one `startswith` per key pushed or popped, whatever the keys' length)
        stack: list[int] = []
        for i, key in enumerate(self.keys):
            while stack and not key.startswith(self.keys[stack[-1]]):
                stack.pop()
            parent = stack[-1] if stack else -1
            self.parent.append(parent)
            self.chain.append((self.chain[parent] if parent >= 0 else ()) + (by_key[key],))
            stack.append(i)

    def matching(self, text: str) -> tuple:
        """The values of every key `text` starts (or, for suffixes, ends) with, shortest key first."""
        if self.reverse:
            text = text[::-1]
        keys = self.keys
        i = bisect_right(keys, text) - 1
        parent = self.parent
        while i >= 0 and not text.startswith(keys[i]):
            i = parent[i]
        return self.chain[i] if i >= 0 else ()

    def extending(self, text: str) -> list:
        """The values of every key that starts with `text` (prefixes only), in key order."""
        if self.reverse:
            raise ValueError("extending() reads prefixes, not suffixes")
        keys, chain, out = self.keys, self.chain, []
        i = bisect_left(keys, text)
        while i < len(keys) and keys[i].startswith(text):  # in sorted order they follow `text` together
            out.append(chain[i][-1])
            i += 1
        return out
