"""Source texts and spans: where a declaration came from.

A Span travels with every AST node but never takes part in equality or hashing, so two
declarations that mean the same thing compare equal wherever they were written.
"""

from __future__ import annotations


from ._base.frozen import field, record


@record
class Span:
    """Where a piece of text was written: its file, and the line and column it starts and ends at."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


def span_field():
    """A record field for spans: kept on the node, ignored by ==, hash and repr."""
    return field(default=None, compare=False, hash=False, repr=False)


@record
class Source:
    """A decoded source file: its path and its text."""

    path: str
    text: str
