"""An HTTP request's body bytes → a JSON value, strictly: what an answer could not carry is refused here.

Refused with a ValueError whose text says why: bytes that are not JSON, `NaN`/`Infinity` (not JSON, though
Python's parser takes them), a number too large for a float or past Python's 4,300-digit integer limit,
and a lone surrogate (`\\ud800`), which parses but has no UTF-8 bytes to answer with.
"""

from __future__ import annotations

import json


def _not_a_number(text: str):
    raise ValueError(f"`{text}` is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number `{text[:40]}` is too large")
    return value


def strict_json(raw: bytes):
    """The value; RecursionError passes through (the caller names its depth limit)."""
    value = json.loads(raw, parse_constant=_not_a_number, parse_float=_finite)
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("it holds an unpaired surrogate (`\\ud800`…`\\udfff`); send UTF-8 text") from None
    return value
