"""Constructors for frozen slotted dataclasses that set each field through its slot.

A frozen dataclass's `__init__` assigns every field with `object.__setattr__` (its own `__setattr__`
refuses), about three times the cost of a plain class's `__init__`; the parser builds about a dozen
nodes per rule. The instance made is the same — same class, same fields, frozen afterwards: a slot's
descriptor is what `object.__setattr__` ends in.
"""
from __future__ import annotations

from dataclasses import MISSING, fields, is_dataclass


def constructor(cls):
    """A function taking `cls`'s fields in order (defaults as the class declares them) that returns
    an instance, for frozen slotted dataclasses without `__post_init__` or computed fields."""
    params = getattr(cls, "__dataclass_params__", None)
    if not is_dataclass(cls) or not params.frozen or "__slots__" not in vars(cls) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} is not a frozen slotted dataclass without __post_init__")
    env = {"new": object.__new__, "cls": cls}
    arguments, body = [], []
    for item in fields(cls):
        if not item.init or item.default_factory is not MISSING:
            raise TypeError(f"{cls.__name__}.{item.name} is not a plain init field")
        if item.default is MISSING:
            arguments.append(item.name)
        else:
            env[f"default_{item.name}"] = item.default
            arguments.append(f"{item.name}=default_{item.name}")
        env[f"set_{item.name}"] = getattr(cls, item.name).__set__
        body.append(f"    set_{item.name}(node, {item.name})")
    # the source is made of the class's own field names, as dataclasses makes __init__
    exec(f"def make({', '.join(arguments)}):\n    node = new(cls)\n" + "\n".join(body) + "\n    return node\n", env)
    make = env["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    return make
