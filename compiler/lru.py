"""A bounded least-recently-used map: key and a make function in, the remembered or new value out.

Every per-request cache of a Program (compositions, views, deciders, compiled policies) and every
per-request memo of a decider is one of these, so a long-lived process holding many distinct
request contexts keeps its memory bounded. The size comes from the caller, else DSHC_CACHE_SIZE.

Threads may share one. A hit takes no lock: it reads the map and marks its entry used. Stores and
evictions take the lock (never `make`, which runs unlocked; threads making one key meanwhile all
return the first value stored). Recency is kept as "second chance" (CLOCK): when full, the oldest
entry goes unless it was used since it was last passed over, in which case it moves to the newest
end unmarked — least recently used, without reordering the map on every hit.
"""

from __future__ import annotations

import os
from _thread import allocate_lock  # not `threading`: a hook process loads neither it nor what it imports

try:  # the C type collections re-exports, without running collections' own module (~7M instructions)
    from _collections import OrderedDict
except ImportError:
    from collections import OrderedDict

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable
    from typing import Any, Generic, TypeVar

    V = TypeVar("V")
else:  # `Generic[V]` is `object` at run time: the class stays a plain slotted one
    V = None
    Generic = {V: object}
DEFAULT_SIZE = 1024
# what find() returns for an absent key (None can be a remembered value); typed as any value, so that
# find() reads as returning V and a caller's `is MISSING` test needs no cast
MISSING: Any = object()


def default_size() -> int:
    """DSHC_CACHE_SIZE when it is a positive integer, else DEFAULT_SIZE."""
    text = os.environ.get("DSHC_CACHE_SIZE", "")
    return int(text) if text.isdigit() and int(text) > 0 else DEFAULT_SIZE


class LRU(Generic[V]):
    """`LRU[V]` in an annotation: an LRU of V values (generic for type checkers, plain at run time)."""

    __slots__ = ("size", "_items", "_lock")

    def __init__(self, size: int | None = None):
        self.size = size if size is not None else default_size()
        if self.size < 1:
            raise ValueError("an LRU cache holds at least one entry")
        self._items: OrderedDict[Hashable, list] = OrderedDict()  # key -> [value, used since last passed over]
        # a plain lock: the keys' __hash__/__eq__ (requests, records, tuples) never reach an LRU themselves
        self._lock = allocate_lock()

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value for `key`, made (and remembered, evicting the least recently used) when absent."""
        entry = self._items.get(key)  # find, inline: a per-request memo's first read runs this
        if entry is not None:
            entry[1] = True
            return entry[0]
        return self.put(key, make())  # make() may raise: nothing is remembered

    def find(self, key: Hashable) -> V:
        """The value for `key` (now marked used), or MISSING; for hot paths that build no closure."""
        entry = self._items.get(key)
        if entry is None:
            return MISSING
        entry[1] = True
        return entry[0]

    def put(self, key: Hashable, value: V) -> V:
        """Remember `value` for `key`, unless another thread stored one meanwhile: the value kept."""
        items = self._items
        with self._lock:
            entry = items.get(key)
            if entry is not None:
                entry[1] = True
                return entry[0]
            while len(items) >= self.size:  # room first: the new entry is never the one passed over
                oldest, entry = items.popitem(last=False)
                if entry[1]:  # used since last passed over: a second chance, at the newest end
                    entry[1] = False
                    items[oldest] = entry
            items[key] = [value, False]
            return value

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items
