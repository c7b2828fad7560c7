"""dshc's compiled objects ⇄ plain JSON data, for caches that must never run code when read.

In: a graph of frozen records, dataclasses and pydantic models from dshc.compiler modules, with tuples,
lists, dicts, sets, strings and numbers. Out: JSON text, and back the same graph (shared objects
stay shared). Decoding builds only dshc.compiler classes, through object.__new__ and attribute
stores: no constructor, reducer or import beyond those modules runs, whatever the text says.

A class may name fields most readers never touch (`Deferred`: a program's documents, ~85 % of its
objects, which deciding never reads). Those are written after everything else, as one JSON text
inside the JSON, and decoded when one of them is first read: what was written before them is
all they may refer to, and nothing written before refers into them.

A class may also name dict fields whose values are each decoded on their first read (`__lazy_maps__`: a
program's policies, two thirds of its text, of which a decision reads one chain). Each value is written as
its own JSON text, holding the objects first met in it; a reference to one of those from anywhere else
decodes that text first (a LazyMap in place of the dict).
"""

from __future__ import annotations

import _thread
import gc
import sys

from ..common import json_io
from ._base.frozen import is_record
from .lazy_graph import LazyGraph

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import Any

ALLOWED_PREFIX = "dshc.compiler."
_SKIPPED_SLOTS = frozenset({"__dict__", "__weakref__"})


class Unencodable(TypeError):
    """A value the codec has no data form for (a function, a compiled pattern …): do not cache it."""


_PENDING = "__deferred_fields__"  # in a decoded object's __dict__: field -> (its section, position)


class Deferred:
    """A mixin for a record with `slots=False` whose fields named in `__deferred__` may be left
    undecoded by `loads` until first read (then decoded, all such fields of the text at once)."""

    __slots__ = ()
    __deferred__: tuple[str, ...] = ()  # the field names

    def __getattr__(self, name: str):  # only called for a name the instance does not hold
        pending = None if name.startswith("__") else self.__dict__.get(_PENDING)
        if pending is None or name not in pending:
            raise AttributeError(f"{type(self).__qualname__!r} object has no attribute {name!r}")
        section, position = pending[name]
        value = section.values()[position]
        self.__dict__[name] = value  # a slots=False record's fields live in its __dict__
        return value


class _Section:
    """The deferred fields' values of one text, decoded together on first need."""

    def __init__(self, decoder: "_Decoder", text: str) -> None:
        self._decoder: _Decoder | None = decoder
        self._text: str | None = text
        self._values: list | None = None
        self._lock = _thread.allocate_lock()  # two threads reading first: one decodes, one waits

    def values(self) -> list:
        with self._lock:
            if self._values is None:
                enabled = gc.isenabled()
                gc.disable()
                try:
                    self._values = self._decoder.decode(json_io.loads(self._text))  # type: ignore[union-attr, arg-type]  # set until decoded
                finally:
                    if enabled:
                        gc.enable()
                self._decoder = self._text = None
            return self._values


class _Lazy:
    """A value decoded on first need — a lazy map's (its JSON text) or a graph's parts (a function decoding
    them) — and the range of object indices first met in it."""

    __slots__ = ("start", "end", "text", "value", "busy")

    def __init__(self, start: int, end: int, text) -> None:
        self.start, self.end, self.text, self.value, self.busy = start, end, text, _UNREAD, False


_UNREAD = object()


class LazyMap:
    """A decoded dict (str -> value) whose values are decoded on first read; reads as a dict does."""

    __slots__ = ("_decoder", "_entries")

    def __init__(self, decoder: "_Decoder", entries: dict[str, _Lazy]) -> None:
        self._decoder, self._entries = decoder, entries

    def __getitem__(self, key: str):
        entry = self._entries[key]
        value = entry.value
        return self._decoder.read_lazy(entry) if value is _UNREAD else value

    def get(self, key, default=None):
        return self[key] if key in self._entries else default

    def __contains__(self, key) -> bool:
        return key in self._entries

    def __iter__(self):
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self):
        return self._entries.keys()

    def values(self) -> list:
        return [self[key] for key in self._entries]

    def items(self) -> list:
        return [(key, self[key]) for key in self._entries]

    def __eq__(self, other) -> bool:
        if isinstance(other, LazyMap):
            other = dict(other.items())
        return dict(self.items()) == other if isinstance(other, dict) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a dict stand-in: unhashable as a dict is

    def __repr__(self) -> str:
        return repr(dict(self.items()))


def dumps(value: Any) -> str:
    import json  # writing happens on a cache miss; reading, in every hook, goes without the json package

    encoder = _Encoder()
    main = encoder.encode(value)
    if not encoder.later:
        return json.dumps(main, separators=(",", ":"), ensure_ascii=False)
    later: list = []
    while len(later) < len(encoder.later):  # a deferred value may hold deferred fields of its own
        later.append(encoder.encode(encoder.later[len(later)]))
    return json.dumps(
        {"v": main, "z": json.dumps(later, separators=(",", ":"), ensure_ascii=False)},
        separators=(",", ":"),
        ensure_ascii=False,
    )


def loads(text: str | bytes) -> Any:
    # thousands of new containers and no garbage: the cyclic collector's passes would be pure cost
    enabled = gc.isenabled()
    gc.disable()
    try:
        data = json_io.loads(text)
        decoder = _Decoder()
        if data.__class__ is dict and "z" in data and "v" in data:
            if data["z"].__class__ is not str:
                raise ValueError("deferred fields are not a text")
            decoder.section = _Section(decoder, data["z"])
            data = data["v"]
        return decoder.decode(data)
    finally:
        if enabled:
            gc.enable()


def _slots(cls: type) -> tuple[str, ...]:
    names = []
    for klass in cls.__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in _SKIPPED_SLOTS and name not in names:
                names.append(name)
    return tuple(names)


_SCALARS = frozenset({str, int, float, bool, type(None)})  # JSON's own: they encode and decode as themselves


def _plain_json(value) -> bool:
    """Whether `value` is made of dicts with string keys, lists and JSON scalars only: then JSON
    itself carries it, and json.loads rebuilds it as it was (a catalog's parameter schemas are most
    of a program's containers; walking each one back in Python was most of a hook's decode)."""
    kind = type(value)
    if kind is dict:
        return all(type(k) is str and _plain_json(v) for k, v in value.items())
    if kind is list:
        return all(_plain_json(v) for v in value)
    return kind in _SCALARS


def _is_graph(value) -> bool:
    return type(value).__module__.startswith("networkx.") and hasattr(value, "edges") and hasattr(value, "nodes")


class _Encoder:
    def __init__(self) -> None:
        self._seen: dict[int, int] = {}
        self._alive: list = []  # keeps every memoised object alive, so no id is reused mid-encoding
        self.later: list = []  # deferred fields' values, in the order their positions name

    def encode(self, value):
        kind = type(value)
        if kind in _SCALARS:
            return value
        if kind is LazyMap:  # a program decoded from a cache, written again: its values read
            value, kind = dict(value.items()), dict
        if (kind is dict or kind is list) and _plain_json(value):
            return {"j": value}  # read back by the JSON parser itself, not walked node by node
        if kind is list:
            return [self.encode(v) for v in value]
        if kind is tuple:
            return {"t": [self.encode(v) for v in value]}
        if kind is dict:
            return {"d": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        if kind is frozenset or kind is set:
            # a stable order: the bytes of the cache must not depend on the hash seed
            import json

            items = sorted((self.encode(v) for v in value), key=lambda e: json.dumps(e, sort_keys=True))
            return {"f" if kind is frozenset else "s": items}
        if kind is LazyGraph or _is_graph(value):
            if kind is LazyGraph:
                graph_kind, nodes, edges = value.parts()
            else:
                graph_kind, nodes, edges = kind.__name__, value.nodes(data=True), value.edges(keys=True, data=True)
            if not graph_kind.startswith("Multi"):
                raise Unencodable("only multigraphs carry edge keys")
            start = len(self._seen)
            encoded_nodes = [[self.encode(n), self.encode(a)] for n, a in nodes]
            encoded_edges = [[self.encode(u), self.encode(v), self.encode(k), self.encode(a)] for u, v, k, a in edges]
            # "x": the indices of the objects first met in them, which a reader decoding them later must know
            return {"g": graph_kind, "n": encoded_nodes, "e": encoded_edges, "x": [start, len(self._seen)]}
        if not kind.__module__.startswith(ALLOWED_PREFIX):
            raise Unencodable(f"no data form for {kind.__module__}.{kind.__qualname__}")
        index = self._seen.get(id(value))
        if index is not None:
            return {"r": index}
        index = self._seen[id(value)] = len(self._seen)
        self._alive.append(value)
        deferred = getattr(kind, "__deferred__", ())
        for name in deferred:
            getattr(value, name, None)  # a value decoded from a cache, not read since: read it now
        state = {k: v for k, v in getattr(value, "__dict__", {}).items() if k != _PENDING}
        for name in _slots(kind):
            if hasattr(value, name):
                state[name] = getattr(value, name)
        later = {}
        for name in deferred:
            if name in state:
                later[name] = len(self.later)
                self.later.append(state.pop(name))
        lazy = getattr(kind, "__lazy_maps__", ())
        encoded = {
            "o": f"{kind.__module__}:{kind.__qualname__}",
            "i": index,
            "a": {name: self._lazy_map(v) if name in lazy else self.encode(v) for name, v in state.items()},
        }
        if later:
            encoded["z"] = later
        return encoded

    def _lazy_map(self, value) -> dict:
        """{"L": [[key, first index, index after, the value's JSON text], …]}: each value encoded on its own."""
        import json

        if type(value) is LazyMap:
            value = dict(value.items())
        if type(value) is not dict or any(type(key) is not str for key in value):
            raise Unencodable("a lazy map is a dict with string keys")
        # the values holding fewer objects first: a value another includes (a policy its child extends) holds
        # fewer than it, so each text defines what its own value adds and refers to what it shares
        sizes = {key: _objects_in(item, self._seen) for key, item in value.items()}
        entries = {}
        for key in sorted(value, key=sizes.__getitem__):
            start = len(self._seen)
            text = json.dumps(self.encode(value[key]), separators=(",", ":"), ensure_ascii=False)
            entries[key] = [key, start, len(self._seen), text]
        return {"L": [entries[key] for key in value]}  # read back in the map's own order


_CONTAINERS = (list, tuple, set, frozenset)


def _objects_in(value, written: dict) -> int:
    """How many dshc objects `value` reaches, each once, that are not `written` already: about how many a
    text holding it alone defines (a plain walk; a trial encoding cost as much as writing the program)."""
    seen: set[int] = set()
    slots: dict[type, tuple[str, ...]] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _SCALARS:
            continue
        if kind is dict:
            stack += item.values()
        elif kind in _CONTAINERS:
            stack += item
        elif kind.__module__.startswith(ALLOWED_PREFIX) and id(item) not in seen and id(item) not in written:
            seen.add(id(item))
            names = slots.get(kind)
            if names is None:
                names = slots[kind] = _slots(kind)
            stack += [getattr(item, name) for name in names if hasattr(item, name)]
            state = getattr(item, "__dict__", None)
            if state:
                stack += [v for k, v in state.items() if k != _PENDING]
    return len(seen)


class _Decoder:
    def __init__(self) -> None:
        self._objects: dict[int, Any] = {}
        self._classes: dict[str, tuple[type, tuple[str, ...]]] = {}
        self.section: _Section | None = None  # the text's deferred fields, when it has some
        self._lazy: list[_Lazy] = []  # the lazy maps' values, by the objects first met in each
        self._lock = _thread.RLock()  # a lazy value's decoding may need another's first (a reference into it)

    def decode(self, data):
        # scalars (most of the nodes) are taken inline, without a call each: this runs in every hook
        kind = data.__class__
        if kind is list:
            return [v if v.__class__ in _SCALARS else self.decode(v) for v in data]
        if kind is not dict:
            return data
        if "o" in data:
            return self._object(data)
        if "t" in data:
            return tuple([v if v.__class__ in _SCALARS else self.decode(v) for v in data["t"]])
        if "r" in data:
            found = self._objects.get(data["r"])
            return found if found is not None else self._referenced(data["r"])
        if "j" in data:
            return data["j"]
        if "d" in data:
            return {self.decode(k): self.decode(v) for k, v in data["d"]}
        if "f" in data:
            return frozenset(self.decode(v) for v in data["f"])
        if "s" in data:
            return {self.decode(v) for v in data["s"]}
        if "g" in data:
            return self._graph(data)
        raise ValueError(f"not an encoded value: keys {sorted(data)[:5]}")

    def _object(self, data):
        cls, slots = self._class(data["o"])
        obj = object.__new__(cls)
        self._objects[data["i"]] = obj  # before the attributes: a cycle finds the object it is inside
        lazy = getattr(cls, "__lazy_maps__", ())
        for name, encoded in data["a"].items():
            if name in lazy and encoded.__class__ is dict and "L" in encoded:
                value = self._lazy_map(encoded["L"])
            else:
                value = encoded if encoded.__class__ in _SCALARS else self.decode(encoded)
            if name in slots:
                object.__setattr__(obj, name, value)
            else:
                obj.__dict__[name] = value
        later = data.get("z")
        if later is not None:
            deferred = getattr(cls, "__deferred__", ())
            if (
                self.section is None
                or later.__class__ is not dict
                or any(name not in deferred or position.__class__ is not int for name, position in later.items())
            ):
                raise ValueError(f"`{data['o']}` defers what it may not")
            obj.__dict__[_PENDING] = {name: (self.section, position) for name, position in later.items()}
        return obj

    def _graph(self, data) -> LazyGraph:
        """A graph whose nodes and edges are decoded on its first use (or on a reference into them): their
        attributes refer to objects of lazy values a decision never reads."""
        nodes, edges, span = data["n"], data["e"], data.get("x")
        if data["g"].__class__ is not str or nodes.__class__ is not list or edges.__class__ is not list:
            raise ValueError("not an encoded graph")
        if span.__class__ is not list or len(span) != 2 or not all(bound.__class__ is int for bound in span):
            return LazyGraph(  # written with no index range: decoded now, as it always was
                data["g"],
                [(self.decode(n), self.decode(a)) for n, a in nodes],
                [tuple(self.decode(x) for x in edge) for edge in edges],
            )

        def parts() -> tuple[list, list]:
            return (
                [(self.decode(n), self.decode(a)) for n, a in nodes],
                [tuple(self.decode(x) for x in edge) for edge in edges],
            )

        lazy = _Lazy(span[0], span[1], parts)
        self._lazy.append(lazy)
        return LazyGraph(data["g"], None, None, lambda: self.read_lazy(lazy))

    def _lazy_map(self, entries) -> LazyMap:
        made: dict[str, _Lazy] = {}
        for entry in entries if entries.__class__ is list else ():
            if (
                entry.__class__ is not list
                or len(entry) != 4
                or not all(part.__class__ is kind for part, kind in zip(entry, (str, int, int, str)))
            ):
                raise ValueError("not a lazy map's entry")
            made[entry[0]] = lazy = _Lazy(entry[1], entry[2], entry[3])
            self._lazy.append(lazy)
        return LazyMap(self, made)

    def read_lazy(self, lazy: _Lazy):
        """A lazy map's value, decoded from its text on its first read (once, whichever thread asks)."""
        with self._lock:
            if lazy.value is _UNREAD:
                if lazy.busy:  # only a planted text refers back into a value being decoded
                    raise ValueError("lazy values refer to one another in a cycle")
                lazy.busy = True
                enabled = gc.isenabled()
                gc.disable()
                try:
                    text = lazy.text
                    lazy.value = text() if callable(text) else self.decode(json_io.loads(text))
                finally:
                    lazy.busy = False
                    if enabled:
                        gc.enable()
                lazy.text = None  # read: the value stands for it
            return lazy.value

    def _referenced(self, index):
        """An object first met in a lazy value not read yet: that value is read, then the object found."""
        for lazy in self._lazy:
            if lazy.start <= index < lazy.end and lazy.value is _UNREAD:
                self.read_lazy(lazy)
                break
        found = self._objects.get(index)
        if found is None:
            raise ValueError(f"a reference to object {index}, which the text does not hold")
        return found

    def _class(self, name: str) -> tuple[type, tuple[str, ...]]:
        found = self._classes.get(name)
        if found is not None:
            return found
        module_name, _, qualname = name.partition(":")
        if not module_name.startswith(ALLOWED_PREFIX) or "." in qualname:
            raise ValueError(f"`{name}` is not a dshc.compiler class")
        __import__(module_name)  # importlib.import_module, without importing importlib for it
        cls = getattr(sys.modules[module_name], qualname, None)
        if not isinstance(cls, type) or cls.__module__ != module_name or not _plain_data(cls):
            raise ValueError(f"`{name}` is not a data class of dshc.compiler")
        found = self._classes[name] = (cls, _slots(cls))
        return found


def _plain_data(cls: type) -> bool:
    """A record, a dataclass or a pydantic model: built from its fields alone, no behaviour on construction."""
    if is_record(cls) or hasattr(cls, "__dataclass_fields__"):
        return True
    return any(base.__module__.startswith("pydantic.") and base.__name__ == "BaseModel" for base in cls.__mro__)
