"""Call arguments in, a verdict on their shape out: how deep and how large a call may nest.

Conditions read arguments a few levels deep at most; a deeper or larger value is refused
before any rule sees it (a deny from `Program.decide`, exit 2 from the CLI), so no recursion
limit is ever reached on the way.
"""

from __future__ import annotations

from _collections_abc import (
    Mapping,
)  # collections.abc's own source, loaded at start-up (collections.abc loads collections)

MAX_DEPTH = 64  # containers inside containers; no tool schema comes near it
MAX_NODES = 100_000  # values in all, containers included
_SCALARS = frozenset({str, int, float, bool, type(None)})


def shape_problem(value, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES, text: bool = False) -> str | None:
    """Why `value` is too deep or too large (with `text`, also: holds a string no tool can use —
    the runtime refuses such a call as INVALID_ARGS), or None when it is fine (iterative walk)."""
    if type(value) is dict and len(value) < max_nodes and _SCALARS.issuperset(map(type, value.values())):
        return _unusable_text(value.items()) if text else None  # the common call: one flat object
    stack = [(value, 1, None)]
    nodes = 0
    while stack:
        item, depth, key = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            return f"the arguments hold more than {max_nodes} values"
        if text and isinstance(item, str):
            problem = _unusable_text(((key, item),))
            if problem:
                return problem
            continue
        if isinstance(item, Mapping):
            if depth > max_depth:
                return f"the arguments nest deeper than {max_depth} levels"
            stack.extend((child, depth + 1, name if depth == 1 else key) for name, child in item.items())
        elif isinstance(item, (list, tuple)):
            if depth > max_depth:
                return f"the arguments nest deeper than {max_depth} levels"
            stack.extend((child, depth + 1, key) for child in item)
    return None


def _unusable_text(items) -> str | None:
    for key, text in items:
        if type(text) is str and not _usable(text):
            return f"argument `{key}` contains a NUL or an unpaired surrogate"
    return None


def _usable(text: str) -> bool:
    """No path or command can hold a NUL (the OS refuses it) or a surrogate code point (it has no
    bytes in UTF-8: encoding refuses it), so such text is refused before any rule reads it."""
    if "\x00" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
