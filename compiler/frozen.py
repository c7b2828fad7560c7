"""Frozen slotted records, made and constructed cheaply.

`record`: `@dataclass(frozen=True, …)` for the same instances at a fraction of the cost of making
the class. Python 3.11's dataclasses compile a frozen class's six methods with one `exec` each
(~1.1 ms a class on the reference machine; the 28 AST classes cost ~40 ms of every `dshc` process, a
hook's included). Here dataclasses still collects the fields and makes the (slotted) class, so
`fields()`, `replace()`, `is_dataclass()` and `__match_args__` are its own; `__init__`, `__eq__` and
`__hash__` are compiled in one `exec`, as dataclasses writes them, and `__repr__` and the refusing
`__setattr__`/`__delattr__` are a closure and two shared functions.

`constructor`: a frozen dataclass's `__init__` assigns every field with `object.__setattr__` (its
own `__setattr__` refuses), about three times the cost of a plain class's `__init__`; the parser
builds about a dozen nodes per rule. The instance made is the same — same class, same fields,
frozen afterwards: a slot's descriptor is what `object.__setattr__` ends in.
"""
from __future__ import annotations

import dataclasses
import reprlib
from dataclasses import MISSING, FrozenInstanceError, dataclass, fields, is_dataclass

_FROZEN = "__frozen_record__"  # marks a class `record` made (its __dataclass_params__ say init=eq=frozen=False)


def record(cls=None, *, slots: bool = True, kw_only: bool = False):
    """The class as `@dataclass(frozen=True, slots=slots, kw_only=kw_only)` makes it: `__init__`
    (defaults, default factories, keyword-only fields, a `__post_init__` called last), `__repr__`,
    `__eq__`, `__hash__`, `__setattr__`/`__delattr__` refusing, and with slots pickling through them.
    Field options `compare`/`hash`/`repr` are honoured; what it cannot make exactly (init=False
    fields, InitVar, a class's own `__init__`/`__repr__`/`__eq__`/`__hash__`) is refused."""
    if cls is None:
        return lambda each: record(each, slots=slots, kw_only=kw_only)
    if any(k in vars(cls) for k in ("__init__", "__repr__", "__eq__", "__hash__")):
        raise TypeError(f"{cls.__name__}: record makes __init__, __repr__, __eq__ and __hash__ itself")
    made = dataclass(cls, init=False, repr=False, eq=False, slots=slots, kw_only=kw_only)
    initvar = getattr(dataclasses, "_FIELD_INITVAR", None)
    if any(f._field_type is initvar for f in made.__dataclass_fields__.values()):
        raise TypeError(f"{cls.__name__}: record does not take InitVar fields")
    items = fields(made)
    env: dict = {}
    arguments, body = _setting(made, "self", env, full=True)
    if hasattr(made, "__post_init__"):
        body.append("  self.__post_init__()")
    # __init__ (the class's own signature), __eq__ and __hash__ (called by the million while compiling)
    # are compiled as dataclasses writes them; repr and the refusals are shared or closures
    compared = [f.name for f in items if f.compare]
    hashed = [f.name for f in items if (f.hash is None and f.compare) or f.hash]
    shown = tuple(f.name for f in items if f.repr)

    def row(owner: str, names: list[str]) -> str:
        return "(" + "".join(f"{owner}.{name}," for name in names) + ")"
    exec("\n".join([
        f"def __init__(self, {', '.join(arguments)}):", *(body or ["  pass"]),
        "def __eq__(self, other):",
        "  if other.__class__ is self.__class__:",
        f"    return {row('self', compared)} == {row('other', compared)}",
        "  return NotImplemented",
        "def __hash__(self):",
        f"  return hash({row('self', hashed)})",
    ]) + "\n", env)

    def __repr__(self):
        return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")"
    methods = {"__init__": env["__init__"], "__repr__": reprlib.recursive_repr()(__repr__), "__eq__": env["__eq__"],
               "__hash__": env["__hash__"], "__setattr__": _refuse_setattr, "__delattr__": _refuse_delattr}
    for name, function in methods.items():
        if not function.__qualname__.startswith("_refuse"):  # the shared refusals keep their own
            function.__qualname__ = f"{made.__qualname__}.{name}"
        setattr(made, name, function)
    if slots:  # as dataclasses does for a frozen slotted class: pickle and copy restore through the slots
        made.__getstate__, made.__setstate__ = _getstate, _setstate
    setattr(made, _FROZEN, True)
    return made


def _owner(self) -> type:
    """The record class `self` is an instance of (itself, or the nearest record it derives from)."""
    return next(cls for cls in type(self).__mro__ if vars(cls).get(_FROZEN))


def _refuse_setattr(self, name, value):
    owner = _owner(self)  # as a frozen dataclass: its own fields and anything on the class itself refuse
    if type(self) is owner or name in owner.__dataclass_fields__:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    super(owner, self).__setattr__(name, value)


def _refuse_delattr(self, name):
    owner = _owner(self)
    if type(self) is owner or name in owner.__dataclass_fields__:
        raise FrozenInstanceError(f"cannot delete field {name!r}")
    super(owner, self).__delattr__(name)


def _getstate(self):
    return [getattr(self, item.name) for item in fields(self)]


def _setstate(self, state):
    for item, value in zip(fields(self), state):
        object.__setattr__(self, item.name, value)


def constructor(cls):
    """A function taking `cls`'s fields in order (defaults as the class declares them) that returns
    an instance, for frozen slotted dataclasses without `__post_init__` or computed fields."""
    params = getattr(cls, "__dataclass_params__", None)
    frozen = is_dataclass(cls) and (params.frozen or vars(cls).get(_FROZEN, False))
    if not frozen or "__slots__" not in vars(cls) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} is not a frozen slotted dataclass without __post_init__")
    env = {"new": object.__new__, "cls": cls}
    arguments, body = _setting(cls, "node", env)
    # the source is made of the class's own field names, as dataclasses makes __init__
    exec(f"def make({', '.join(arguments)}):\n  node = new(cls)\n" + "\n".join(body) + "\n  return node\n", env)
    make = env["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    return make


def _setting(cls, target: str, env: dict, full: bool = False) -> tuple[list[str], list[str]]:
    """(the parameters — positional fields in order, then keyword-only ones; defaults as declared —,
    the lines that set each field of `target`); the defaults, factories and setters go into `env`.
    A field is set through its slot, or with `object.__setattr__` in a class without slots. Not
    `full`: plain fields only (no keyword-only field, no default factory)."""
    positional, keyword, body = [], [], []
    env["FACTORY"], env["object_setattr"] = _FACTORY, object.__setattr__
    slotted = "__slots__" in vars(cls)
    for item in fields(cls):
        if not item.init or (not full and (item.kw_only or item.default_factory is not MISSING)):
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
        if slotted:
            env[f"set_{item.name}"] = getattr(cls, item.name).__set__
            body.append(f"  set_{item.name}({target}, {item.name})")
        else:
            body.append(f"  object_setattr({target}, {item.name!r}, {item.name})")
    return positional + (["*", *keyword] if keyword else []), body


_FACTORY = object()  # "no value given": the field's default factory makes one
