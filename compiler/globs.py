"""Policy glob patterns: `*` any run of characters, `?` one character, everything else literal.

One definition serves matching (per call) and verification (as a regular language), so the
proof and the decision can never disagree about what a pattern means. For shell commands a
pattern ending in ` *` also matches the bare command: `git *` covers `git` and `git push`.
"""
from __future__ import annotations

import re
from functools import lru_cache


def glob_regex(pattern: str, shell: bool = False) -> str:
    """The pattern as a regular expression over the whole text (no anchors; callers add them)."""
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


@lru_cache(maxsize=4096)
def _compiled(pattern: str, shell: bool) -> re.Pattern:
    return re.compile(glob_regex(pattern, shell), re.DOTALL)


def glob_match(pattern: str, text: str, shell: bool = False) -> bool:
    return _compiled(pattern, shell).fullmatch(text) is not None
