"""Call arguments in, a verdict on their shape out: how deep and how large a call may nest.

Conditions read arguments a few levels deep at most; a deeper or larger value is refused
before any rule sees it (a deny from `Program.decide`, exit 2 from the CLI), so no recursion
limit is ever reached on the way.
"""
from __future__ import annotations

from collections.abc import Mapping

MAX_DEPTH = 64  # containers inside containers; no tool schema comes near it
MAX_NODES = 100_000  # values in all, containers included
_SCALARS = frozenset({str, int, float, bool, type(None)})


def shape_problem(value, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> str | None:
    """Why `value` is too deep or too large, or None when it is within the limits (iterative walk)."""
    if type(value) is dict and len(value) < max_nodes and _SCALARS.issuperset(map(type, value.values())):
        return None  # the common call: one flat object
    stack = [(value, 1)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            return f"the arguments hold more than {max_nodes} values"
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > max_depth:
            return f"the arguments nest deeper than {max_depth} levels"
        stack.extend((child, depth + 1) for child in children)
    return None
