"""`record` makes the class `@dataclass(frozen=True, slots=True)` makes: each pair below is the same
body decorated both ways, and every behaviour a caller can see is compared."""
from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshc.compiler import ast
from dshc.compiler.frozen import constructor, record

frozen = dataclasses.dataclass(frozen=True, slots=True)


def _pair(name: str, annotations: dict, defaults: dict):
    """The same class body made by `record` and by dataclasses (module level, so pickle finds them)."""
    made = []
    for decorate, suffix in ((record, "Record"), (frozen, "Dataclass")):
        body = {"__annotations__": dict(annotations), "__doc__": f"{name}.", "__module__": __name__,
                "__qualname__": name + suffix, **{k: v() if callable(v) else v for k, v in defaults.items()},
                "doubled": property(lambda self: 2)}
        cls = decorate(type(name + suffix, (), body))
        globals()[name + suffix] = cls
        made.append(cls)
    return made


def _hidden():
    return dataclasses.field(default=None, compare=False, hash=False, repr=False)


PAIRS = [
    _pair("Empty", {}, {}),
    _pair("One", {"a": "object"}, {}),
    _pair("Defaults", {"a": "object", "b": "object"}, {"b": "b"}),
    _pair("Spanned", {"a": "object", "span": "object"}, {"span": _hidden}),
    _pair("Mixed", {"a": "object", "note": "object", "weight": "object"},
          {"note": lambda: dataclasses.field(default="", compare=False),
           "weight": lambda: dataclasses.field(default=0, hash=False)}),
]
values = st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=3), st.tuples(st.integers(0, 2)))


def _build(cls, args):
    return cls(*args[:len(dataclasses.fields(cls))])


@given(st.sampled_from(PAIRS), st.lists(values, min_size=3, max_size=3), st.lists(values, min_size=3, max_size=3))
def test_instances_behave_as_the_dataclass_instances(pair, first, second):
    ours, theirs = pair
    a, b = _build(ours, first), _build(ours, second)
    x, y = _build(theirs, first), _build(theirs, second)
    assert (a == b) == (x == y) and (a != b) == (x != y)
    assert (hash(a) == hash(b)) == (hash(x) == hash(y)) and hash(a) == hash(x)
    assert repr(a).replace("Record(", "(") == repr(x).replace("Dataclass(", "(")
    assert (a == x) is False and a.__eq__(x) is NotImplemented  # another class is never equal
    assert pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a and copy.copy(a) == a
    for field in dataclasses.fields(ours):
        assert getattr(a, field.name) == getattr(x, field.name)
        changed = dataclasses.replace(a, **{field.name: "changed"})
        assert getattr(changed, field.name) == "changed" and type(changed) is ours
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field"):
            setattr(a, field.name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field"):
            delattr(a, field.name)
    with pytest.raises((AttributeError, TypeError)):
        a.unknown = 1  # slots: nothing else can be set either
    assert a.doubled == 2


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair[0].__name__)
def test_the_class_is_described_as_the_dataclass_is(pair):
    ours, theirs = pair
    assert dataclasses.is_dataclass(ours) and ours.__slots__ == theirs.__slots__
    assert ours.__match_args__ == theirs.__match_args__ and ours.__doc__ == theirs.__doc__
    described = [(f.name, f.default, f.compare, f.hash, f.repr, f.init) for f in dataclasses.fields(ours)]
    assert described == [(f.name, f.default, f.compare, f.hash, f.repr, f.init) for f in dataclasses.fields(theirs)]
    with pytest.raises(TypeError):
        ours(*range(len(dataclasses.fields(ours)) + 1))  # one argument too many, as with the dataclass


def test_the_parsers_constructors_take_records():
    made = constructor(ast.Rule)("deny", (), None)
    assert made == ast.Rule("deny", (), None) and type(made) is ast.Rule


@pytest.mark.parametrize("body", [
    {"__annotations__": {"a": "int"}, "a": dataclasses.field(default=0, init=False)},
    {"__annotations__": {"a": "int", "b": "dataclasses.InitVar[int]"}},
    {"__annotations__": {"a": "int"}, "__eq__": lambda self, other: True},
], ids=["not in init", "init var", "own eq"])
def test_what_it_cannot_make_exactly_is_refused(body):
    with pytest.raises(TypeError):
        record(type("Odd", (), {"__doc__": "Odd.", "__module__": __name__, **body}))


class _Checked:
    """A base whose __post_init__ normalises a field, as the catalog's records do."""

    def __post_init__(self):
        object.__setattr__(self, "items", tuple(self.items))


def _made_both_ways(slots: bool, base=(), **options):
    body = {"__annotations__": {"name": "str", "items": "tuple", "extra": "dict"}, "__doc__": "K.",
            "__module__": __name__}
    ours = record(type("K", base, dict(body, extra=dataclasses.field(default_factory=dict, compare=False))),
                  slots=slots)
    theirs = dataclasses.dataclass(frozen=True, slots=slots, **options)(
        type("K", base, dict(body, extra=dataclasses.field(default_factory=dict, compare=False))))
    return ours, theirs


@pytest.mark.parametrize("slots", [True, False])
def test_factories_keyword_only_fields_and_an_inherited_post_init(slots):
    for base, options in (((), {}), ((_Checked,), {})):
        ours, theirs = _made_both_ways(slots, base, **options)
        a, x = ours("n", [1, 2]), theirs("n", [1, 2])
        assert a.extra == {} and a.extra is not ours("n", ()).extra  # a new value per instance
        assert repr(a) == repr(x) and a.items == x.items and hash(ours("n", (1,))) == hash(theirs("n", (1,)))
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.name = "m"
    keyword = record(type("W", (), {"__annotations__": {"a": "int", "b": "int"}, "__doc__": "W.",
                                   "__module__": __name__, "b": dataclasses.field(default=1, kw_only=True)}))
    assert keyword(0, b=2).b == 2 and keyword(0).b == 1
    with pytest.raises(TypeError):
        keyword(0, 2)  # keyword-only, as dataclasses makes it


def test_a_record_without_slots_keeps_a_dict_for_cached_values():
    plain = record(type("Plain", (), {"__annotations__": {"a": "int"}, "__doc__": "P.", "__module__": __name__}),
                   slots=False)
    globals()["Plain"] = plain  # pickle finds a class by its module and name
    made = plain(1)
    made.__dict__["cached"] = 2  # what functools.cached_property writes
    assert made.cached == 2 and "__slots__" not in vars(plain) and pickle.loads(pickle.dumps(made)) == made


def test_every_ast_node_is_a_record():
    nodes = [cls for cls in vars(ast).values() if isinstance(cls, type) and cls.__module__ == ast.__name__
             and dataclasses.is_dataclass(cls)]
    assert nodes and all(vars(cls).get("__frozen_record__") for cls in nodes)
