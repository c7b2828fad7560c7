"""Frozen slotted records, made and constructed cheaply.

`record`: the class `@dataclass(frozen=True, …)` makes — same `__init__`, `__repr__`, `__eq__`,
`__hash__`, refusing `__setattr__`/`__delattr__`, `__match_args__`, slots and pickling — without
importing dataclasses. That import brings `inspect` and its own imports (~20 ms of every `dshc`
process, a hook's included), and dataclasses compiles a frozen class's six methods with one `exec`
each. Here the fields are read off the class body as dataclasses reads them; `__init__`, `__eq__`
and `__hash__` are compiled in one `exec`, as dataclasses writes them, when one of them is first
called often enough to pay for it (until then, interpreted: a process deciding one call makes a
few dozen instances of each of ~20 classes, and compiling them cost ~5 ms of a ~40 ms hook);
`__repr__` and the refusals are a closure and two shared functions. `field`, `fields`,
`replace` and `asdict` are this module's (for a plain dataclass they hand over to dataclasses).

`constructor`: a frozen record's `__init__` assigns every field with `object.__setattr__` (its own
`__setattr__` refuses), about three times the cost of a plain class's `__init__`; the parser builds
about a dozen nodes per rule. The instance made is the same — same class, same fields, frozen
afterwards: a slot's descriptor is what `object.__setattr__` ends in.
"""

from __future__ import annotations

import reprlib
from _thread import allocate_lock  # not `threading`: a hook process loads neither it nor what it imports
from types import MemberDescriptorType

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): dataclass_transform is for type checkers only
if TYPE_CHECKING:
    from typing import Any, TypeVar, dataclass_transform

    R = TypeVar("R")
else:

    def dataclass_transform(**kwargs):
        return lambda function: function


_FROZEN = "__frozen_record__"  # marks a class `record` made
# record class -> [its `init` option, calls of its stand-ins], until its methods are compiled and set on it
_UNCOMPILED: dict = {}
_COMPILING = allocate_lock()  # one thread compiles a class; another calling it meanwhile waits for the methods
COMPILE_AFTER = 64  # calls of a class's interpreted methods before they are compiled
_FIELDS = "__record_fields__"  # name -> Field, inherited fields first, in declaration order


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()  # "no default"


class FrozenInstanceError(AttributeError):
    """An assignment to, or deletion of, a field of a frozen record."""


class Field:
    """A record field: its name and options, as `dataclasses.Field` describes one."""

    __slots__ = ("name", "default", "default_factory", "init", "repr", "hash", "compare", "kw_only")

    def __init__(
        self, default=MISSING, default_factory=MISSING, init=True, repr=True, hash=None, compare=True, kw_only=MISSING
    ):
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = None
        self.default, self.default_factory, self.init, self.repr = default, default_factory, init, repr
        self.hash, self.compare, self.kw_only = hash, compare, kw_only

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, compare={self.compare!r})"


def field(
    *, default=MISSING, default_factory=MISSING, init=True, repr=True, hash=None, compare=True, kw_only=MISSING
) -> Any:
    """A field's options in a record's body, as `dataclasses.field` takes them (a Field, typed as any value:
    a checker reads `x: int = field(...)` as dataclasses.field's overloads make it read)."""
    return Field(default, default_factory, init, repr, hash, compare, kw_only)


# type checkers read a record's constructor, equality and frozenness as a frozen dataclass's
@dataclass_transform(frozen_default=True, eq_default=True, field_specifiers=(field,))
def record(cls=None, *, slots: bool = True, kw_only: bool = False, init: bool = True):
    """The class as `@dataclass(frozen=True, slots=slots, kw_only=kw_only, init=init)` makes it:
    `__init__` (defaults, default factories, keyword-only fields, a `__post_init__` called last;
    with init=False the class's own), `__repr__`, `__eq__`, `__hash__`, `__setattr__`/`__delattr__`
    refusing, `__match_args__`, and with slots pickling through them. Field options
    `compare`/`hash`/`repr` are honoured; what it cannot make exactly (init=False fields,
    ClassVar/InitVar/KW_ONLY annotations, a class's own `__repr__`/`__eq__`/`__hash__`) is refused."""
    if cls is None:
        return lambda each: record(each, slots=slots, kw_only=kw_only, init=init)
    own = ("__init__", "__repr__", "__eq__", "__hash__") if init else ("__repr__", "__eq__", "__hash__")
    if any(k in vars(cls) for k in own):
        raise TypeError(f"{cls.__name__}: record makes {', '.join(own)} itself")
    collected = _collect(cls, kw_only)
    made = _with_slots(cls, collected) if slots else cls
    setattr(made, _FIELDS, collected)
    items = tuple(collected.values())
    shown = tuple(f.name for f in items if f.repr)

    def __repr__(self):
        return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")"

    methods = {
        "__repr__": reprlib.recursive_repr()(__repr__),
        "__setattr__": _refuse_setattr,
        "__delattr__": _refuse_delattr,
    }
    # compiled once used: a process that decides from a cached program builds few of its classes'
    # instances and compares fewer, and compiling is ~3/4 of making a record (~0.2 ms a class)
    for name in ("__init__", "__eq__", "__hash__") if init else ("__eq__", "__hash__"):
        methods[name] = _stand_in(made, name)
    _UNCOMPILED[made] = [init, 0]
    for name, function in methods.items():
        if not function.__qualname__.startswith("_refuse"):  # the shared refusals keep their own
            function.__qualname__ = f"{made.__qualname__}.{name}"
        setattr(made, name, function)
    if "__match_args__" not in vars(made):
        setattr(made, "__match_args__", tuple(f.name for f in items if f.init and not f.kw_only))
    if slots:  # as dataclasses does for a frozen slotted class: pickle and copy restore through the slots
        made.__getstate__, made.__setstate__ = _getstate, _setstate
    setattr(made, _FROZEN, True)
    return made


def compile_all() -> None:
    """Compile the methods of every record made so far, as making a record did before they were
    compiled once used: for a process that is about to build instances of most of them (a
    benchmark's library load, which then times the work alone)."""
    for made in list(_UNCOMPILED):
        _compile_methods(made)


def _stand_in(made, name: str):
    """`made`'s method `name` until the class's methods are compiled: interpreted for its first
    COMPILE_AFTER calls (of any of them), then it compiles them and calls the compiled one."""
    interpreted = _INTERPRETED[name]

    def stand_in(self, *args, **kwargs):
        state = _UNCOMPILED.get(made)
        if state is not None:
            state[1] += 1
            if state[1] <= COMPILE_AFTER:
                return interpreted(made, self, *args, **kwargs)
            _compile_methods(made)
        return vars(made)[name](self, *args, **kwargs)

    return stand_in


def _interpreted_init(made, self, *args, **kwargs):
    """What the compiled `__init__` does: the same signature (positional fields in order, then
    keyword-only ones; defaults and factories as declared), each field set in order, then
    `__post_init__`."""
    items = getattr(made, _FIELDS)
    positional = [item for item in items.values() if not item.kw_only]
    if len(args) > len(positional):
        raise TypeError(
            f"{made.__qualname__}.__init__() takes {len(positional) + 1} positional arguments "
            f"but {len(args) + 1} were given"
        )
    given = dict(zip((item.name for item in positional), args))
    for name, value in kwargs.items():
        if name not in items:
            raise TypeError(f"{made.__qualname__}.__init__() got an unexpected keyword argument {name!r}")
        if name in given:
            raise TypeError(f"{made.__qualname__}.__init__() got multiple values for argument {name!r}")
        given[name] = value
    missing = [name for name, item in items.items() if name not in given and not _has_default(item)]
    if missing:
        raise TypeError(
            f"{made.__qualname__}.__init__() missing {len(missing)} required argument"
            f"{'s' if len(missing) > 1 else ''}: {', '.join(map(repr, missing))}"
        )
    for name, item in items.items():
        if name in given:
            value = given[name]
        elif item.default_factory is not MISSING:
            value = item.default_factory()
        else:
            value = item.default
        object.__setattr__(self, name, value)
    if hasattr(made, "__post_init__"):
        self.__post_init__()


def _interpreted_eq(made, self, other):
    if other.__class__ is self.__class__:
        compared = [name for name, item in getattr(made, _FIELDS).items() if item.compare]
        return tuple(getattr(self, name) for name in compared) == tuple(getattr(other, name) for name in compared)
    return NotImplemented


def _interpreted_hash(made, self):
    return hash(
        tuple(
            getattr(self, name)
            for name, item in getattr(made, _FIELDS).items()
            if (item.hash is None and item.compare) or item.hash
        )
    )


_INTERPRETED = {"__init__": _interpreted_init, "__eq__": _interpreted_eq, "__hash__": _interpreted_hash}


def _compile_methods(made) -> None:
    """`__init__` (the class's own signature, unless it keeps its own), `__eq__` and `__hash__`
    (called by the million while compiling a policy), compiled as dataclasses writes them, in one
    `exec`; once per class (a stand-in called after that finds nothing left to do). The class leaves
    `_UNCOMPILED` only once its compiled methods are set: a stand-in that no longer finds it there
    calls them, never itself again."""
    with _COMPILING:
        state = _UNCOMPILED.get(made)
        if state is not None:
            _set_compiled(made, state[0])
            del _UNCOMPILED[made]


def _set_compiled(made, init: bool) -> None:
    items = tuple(getattr(made, _FIELDS).values())
    env: dict = {}
    if init:
        arguments, body = _setting(made, "self", env, full=True)
        if hasattr(made, "__post_init__"):
            body.append("  self.__post_init__()")
    compared = [f.name for f in items if f.compare]
    hashed = [f.name for f in items if (f.hash is None and f.compare) or f.hash]

    def row(owner: str, names: list[str]) -> str:
        return "(" + "".join(f"{owner}.{name}," for name in names) + ")"

    exec(
        "\n".join(
            [
                *([f"def __init__(self, {', '.join(arguments)}):", *(body or ["  pass"])] if init else []),
                "def __eq__(self, other):",
                "  if other.__class__ is self.__class__:",
                f"    return {row('self', compared)} == {row('other', compared)}",
                "  return NotImplemented",
                "def __hash__(self):",
                f"  return hash({row('self', hashed)})",
            ]
        )
        + "\n",
        env,
    )
    for name in ("__init__", "__eq__", "__hash__") if init else ("__eq__", "__hash__"):
        env[name].__qualname__ = f"{made.__qualname__}.{name}"
        setattr(made, name, env[name])


_PSEUDO_FIELDS = {
    f"{module}{kind}": kind
    for kind in ("ClassVar", "InitVar", "KW_ONLY")
    for module in ("", "typing.", "dataclasses.", "t.")
}
_PSEUDO_PREFIXES = tuple(_PSEUDO_FIELDS)


def _refused_annotation(annotation) -> str | None:
    """Which dataclasses pseudo-field an annotation is (ClassVar, InitVar, KW_ONLY), if any."""
    text = annotation if isinstance(annotation, str) else repr(annotation)
    if not text.startswith(_PSEUDO_PREFIXES):  # one test per field: every record's fields pass here at import
        return None
    return next(kind for prefix, kind in _PSEUDO_FIELDS.items() if text.startswith(prefix))


def _collect(cls, kw_only: bool) -> dict:
    """The fields of `cls`: those of its record bases (in the reverse order of the MRO, as
    dataclasses collects them), then its own annotations in order, with their defaults and options."""
    collected: dict = {}
    for base in reversed(cls.__mro__[1:]):
        collected.update(vars(base).get(_FIELDS, {}))
    for name, annotation in vars(cls).get("__annotations__", {}).items():
        refused = _refused_annotation(annotation)
        if refused:
            raise TypeError(f"{cls.__name__}.{name}: record does not take {refused} annotations")
        value = vars(cls).get(name, MISSING)
        item = value if isinstance(value, Field) else Field(default=value)
        item.name = name
        if item.kw_only is MISSING:
            item.kw_only = kw_only
        if not item.init:
            raise TypeError(f"{cls.__name__}.{name}: record does not take init=False fields")
        if item.default is not MISSING and item.default.__class__.__hash__ is None:
            raise ValueError(
                f"mutable default {type(item.default)} for field {name} is not allowed: use default_factory"
            )
        collected[name] = item
        if isinstance(value, Field):  # a plain default stays on the class, as dataclasses leaves it
            if item.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, item.default)
    positional = [f for f in collected.values() if not f.kw_only]
    for before, after in zip(positional, positional[1:]):
        if _has_default(before) and not _has_default(after):
            raise TypeError(f"non-default argument {after.name!r} follows default argument")
    return collected


def _has_default(item: Field) -> bool:
    return item.default is not MISSING or item.default_factory is not MISSING


def _with_slots(cls, collected: dict):
    """`cls` made again with a slot per field it adds (a class's slots are fixed when it is made)."""
    inherited = {name for base in cls.__mro__[1:] for name in getattr(base, "__slots__", ())}
    body = dict(vars(cls))
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    for name in collected:
        body.pop(name, None)  # a default would hide the slot's descriptor; __init__ holds it
    body["__slots__"] = tuple(name for name in collected if name not in inherited)
    made = type(cls)(cls.__name__, cls.__bases__, body)
    made.__qualname__ = cls.__qualname__
    return made


def is_record(obj) -> bool:
    """Whether `obj` is a record class or an instance of one."""
    cls = obj if isinstance(obj, type) else type(obj)
    return hasattr(cls, _FIELDS)


def fields(obj) -> tuple[Field, ...]:
    """The fields of a record (class or instance) in order; for a plain dataclass, dataclasses'."""
    found = getattr(obj, _FIELDS, None)
    if found is None:
        return _dataclasses().fields(obj)
    return tuple(found.values())


def replace(obj: R, /, **changes: Any) -> R:
    """A copy of the record `obj` with `changes`, made through its `__init__` (checks and
    `__post_init__` run again), as `dataclasses.replace` makes it."""
    found = getattr(type(obj), _FIELDS, None)
    if found is None:
        return _dataclasses().replace(obj, **changes)
    for name in found:
        if name not in changes:
            changes[name] = getattr(obj, name)
    return type(obj)(**changes)


def asdict(obj):
    """A record's fields as a dict, nested records, lists, tuples and dicts copied likewise."""
    if is_record(obj) and not isinstance(obj, type):
        return {name: asdict(getattr(obj, name)) for name in getattr(type(obj), _FIELDS)}
    if hasattr(type(obj), "__dataclass_fields__"):
        return _dataclasses().asdict(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(asdict(v) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((asdict(k), asdict(v)) for k, v in obj.items())
    return obj


def _dataclasses():
    import dataclasses  # a plain dataclass: only its caller pays for the import

    return dataclasses


def _owner(self) -> type:
    """The record class `self` is an instance of (itself, or the nearest record it derives from)."""
    return next(cls for cls in type(self).__mro__ if vars(cls).get(_FROZEN))


def _refuse_setattr(self, name, value):
    owner = _owner(self)  # as a frozen dataclass: its own fields and anything on the class itself refuse
    if type(self) is owner or name in getattr(owner, _FIELDS):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    super(owner, self).__setattr__(name, value)


def _refuse_delattr(self, name):
    owner = _owner(self)
    if type(self) is owner or name in getattr(owner, _FIELDS):
        raise FrozenInstanceError(f"cannot delete field {name!r}")
    super(owner, self).__delattr__(name)


def _getstate(self):
    return [getattr(self, name) for name in getattr(type(self), _FIELDS)]


def _setstate(self, state):
    for name, value in zip(getattr(type(self), _FIELDS), state):
        object.__setattr__(self, name, value)


def constructor(cls):
    """A function taking `cls`'s fields in order (defaults as the class declares them) that returns
    an instance, for frozen slotted records without `__post_init__` or computed fields."""
    if not vars(cls).get(_FROZEN) or "__slots__" not in vars(cls) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} is not a frozen slotted record without __post_init__")
    env = {"new": object.__new__, "cls": cls}
    arguments, body = _setting(cls, "node", env)
    twin = _unfrozen_twin(cls)
    if twin is not None:  # fields stored as plain attributes, then the node becomes a `cls` (calling the
        # twin, which has no __init__, costs less than object.__new__: no argument tuple to make)
        env["twin"] = twin
        body = [
            "  node = twin()",
            *(f"  node.{item.name} = {item.name}" for item in fields(cls)),
            "  node.__class__ = cls",
        ]
    else:
        body = ["  node = new(cls)", *body]
    # the source is made of the class's own field names, as dataclasses makes __init__
    exec(f"def make({', '.join(arguments)}):\n" + "\n".join(body) + "\n  return node\n", env)
    make = env["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    return make


def _unfrozen_twin(cls) -> type | None:
    """A class of `cls`'s very layout (its base, its slots) that lets its fields be assigned, so a
    constructor stores each field with a plain attribute store — the slot's own `__set__` is a call
    through an argument tuple, a third of a Span's making — and then switches the node's class to
    `cls`, which Python allows between classes of one layout. None where `cls` has a record base or a
    field without its own slot, or where Python refuses the switch."""
    if cls.__bases__ != (object,) or any(
        type(vars(cls).get(item.name)) is not MemberDescriptorType for item in fields(cls)
    ):
        return None
    twin = type(f"{cls.__name__}Unfrozen", (object,), {"__slots__": vars(cls)["__slots__"]})
    try:
        object.__new__(twin).__class__ = cls
    except TypeError:
        return None
    return twin


def _setting(cls, target: str, env: dict, full: bool = False) -> tuple[list[str], list[str]]:
    """(the parameters — positional fields in order, then keyword-only ones; defaults as declared —,
    the lines that set each field of `target`); the defaults, factories and setters go into `env`.
    A field is set through its slot, or with `object.__setattr__` where it has none. Not
    `full`: plain fields only (no keyword-only field, no default factory)."""
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    env["FACTORY"], env["object_setattr"] = _FACTORY, object.__setattr__
    for item in fields(cls):
        if not full and (item.kw_only or item.default_factory is not MISSING):
            raise TypeError(f"{cls.__name__}.{item.name} is not a plain init field")
        parameter = item.name
        if item.default_factory is not MISSING:
            env[f"factory_{item.name}"] = item.default_factory
            parameter += "=FACTORY"
            body.append(f"  if {item.name} is FACTORY: {item.name} = factory_{item.name}()")
        elif item.default is not MISSING:
            env[f"default_{item.name}"] = item.default
            parameter += f"=default_{item.name}"
        (keyword if item.kw_only else positional).append(parameter)
        slot = getattr(cls, item.name, None)
        if type(slot) is MemberDescriptorType:  # its own slot or a record base's
            env[f"set_{item.name}"] = slot.__set__
            body.append(f"  set_{item.name}({target}, {item.name})")
        else:
            body.append(f"  object_setattr({target}, {item.name!r}, {item.name})")
    return positional + (["*", *keyword] if keyword else []), body


_FACTORY = object()  # "no value given": the field's default factory makes one
