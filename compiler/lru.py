"""A bounded least-recently-used map: key and a make function in, the remembered or new value out.

Every per-request cache of a Program (compositions, views, deciders, compiled policies) and every
per-request memo of a decider is one of these, so a long-lived process holding many distinct
request contexts keeps its memory bounded. The size comes from the caller, else DSHC_CACHE_SIZE.
"""
from __future__ import annotations

import os

try:  # the C type collections re-exports, without running collections' own module (~7M instructions)
    from _collections import OrderedDict
except ImportError:
    from collections import OrderedDict

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable
    from typing import TypeVar
    V = TypeVar("V")
DEFAULT_SIZE = 1024
MISSING = object()  # what find() returns for an absent key (None can be a remembered value)


def default_size() -> int:
    """DSHC_CACHE_SIZE when it is a positive integer, else DEFAULT_SIZE."""
    text = os.environ.get("DSHC_CACHE_SIZE", "")
    return int(text) if text.isdigit() and int(text) > 0 else DEFAULT_SIZE


class LRU:
    """`LRU[V]` in an annotation: an LRU of V values (generic for readers, plain at run time)."""
    __slots__ = ("size", "_items")

    def __init__(self, size: int | None = None):
        self.size = size if size is not None else default_size()
        if self.size < 1:
            raise ValueError("an LRU cache holds at least one entry")
        self._items: OrderedDict = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value for `key`, made (and remembered, evicting the least recently used) when absent."""
        items = self._items  # find and put, inline: a per-request memo's first read runs this
        found = items.get(key, MISSING)
        if found is not MISSING:
            items.move_to_end(key)
            return found
        found = items[key] = make()  # make() may raise: nothing is remembered
        if len(items) > self.size:
            items.popitem(last=False)
        return found

    def find(self, key: Hashable):
        """The value for `key` (now the most recently used), or MISSING; for hot paths that build no closure."""
        items = self._items
        found = items.get(key, MISSING)
        if found is not MISSING:
            items.move_to_end(key)
        return found

    def put(self, key: Hashable, value: V) -> V:
        items = self._items
        items[key] = value
        if len(items) > self.size:
            items.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items
