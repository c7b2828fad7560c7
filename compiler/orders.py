"""The order tests of conditions (`<`, `<=`, `>`, `>=`, and `==`/`!=` with them) on numbers, as the
argument tests and the session's counts read them."""

from __future__ import annotations

UNKNOWN = None


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def ordered(value, op: str, bound) -> bool | None:
    """`value OP bound` for numbers; not known for anything else (text, a boolean, a missing value): an order
    on such a value never satisfies an allow and always may hold for a deny."""
    if not (is_number(value) and is_number(bound)):
        return UNKNOWN
    if op == "<":
        return value < bound
    if op == "<=":
        return value <= bound
    if op == ">":
        return value > bound
    if op == ">=":
        return value >= bound
    return (value == bound) == (op == "==")
