"""The parser's fast constructors make exactly the node the record's class makes, and it stays frozen."""

from __future__ import annotations

import dataclasses

import pytest

from dshc.compiler import ast
from dshc.compiler._base.frozen import FrozenInstanceError, constructor, field, fields, record
from dshc.compiler.source import Span
from dshc.compiler.to_ast import new


def _fields(node):
    return tuple(getattr(node, f.name) for f in fields(node))


def test_a_node_is_the_class_made_node_with_every_field_set():
    span = Span("p.dsh", 1, 2, 3, 4)
    fast = new.Rule("deny", (new.Target("tool", new.Name("read", span), span),), None, span)
    slow = ast.Rule("deny", (ast.Target("tool", ast.Name("read", span), span),), None, span)
    assert type(fast) is ast.Rule and fast == slow and hash(fast) == hash(slow)
    assert _fields(fast) == _fields(slow) and fast.span is span  # the span too, which == leaves out


def test_defaults_and_keywords_as_the_class_declares_them():
    assert new.Name("x").span is None and new.Name(text="x", span=None) == ast.Name("x")
    with pytest.raises(TypeError):
        new.Name()  # a field without a default is required, as in the class


def test_the_node_stays_frozen():
    node = new.Fact(("args", "path"))
    with pytest.raises(FrozenInstanceError):
        node.path = ("other",)


def test_only_frozen_slotted_records_without_post_init():
    @dataclasses.dataclass(frozen=True, slots=True)
    class Dataclass:
        a: int

    @record(slots=False)
    class NoSlots:
        a: int

    @record
    class Checked:
        a: int

        def __post_init__(self):
            raise ValueError

    @record
    class Factory:
        a: tuple = field(default_factory=tuple)

    for cls in (Dataclass, NoSlots, Checked, Factory):
        with pytest.raises(TypeError):
            constructor(cls)


def test_every_parser_constructor_makes_its_class_node_and_it_stays_frozen():
    for name, make in vars(new).items():
        cls = getattr(ast, name, None) or Span
        values = tuple(f"value {i}" for i, _ in enumerate(fields(cls)))
        fast, slow = make(*values), cls(*values)
        assert type(fast) is cls and _fields(fast) == _fields(slow) == values, name
        with pytest.raises(FrozenInstanceError):
            setattr(fast, fields(cls)[0].name, "changed")


def test_a_record_with_a_record_base_is_made_through_its_slots():
    @record
    class Base:
        a: int

    @record
    class Derived(Base):
        b: int

    made = constructor(Derived)(1, 2)
    assert type(made) is Derived and (made.a, made.b) == (1, 2) and made == Derived(1, 2)
    assert "twin" not in constructor(Derived).__globals__  # the base's fields have no slot of Derived's own
