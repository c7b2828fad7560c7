"""`record` makes the class `@dataclass(frozen=True, slots=True)` makes, without dataclasses: each
pair below is the same body decorated both ways (each with its own `field`), and every behaviour a
caller can see is compared — through `frozen.fields`/`replace`/`asdict` on one side and
dataclasses' on the other."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshc.compiler import ast
from dshc.compiler._base import frozen
from dshc.compiler._base.frozen import FrozenInstanceError, constructor, record

dataclass_frozen = dataclasses.dataclass(frozen=True, slots=True)
MAKERS = ((record, frozen, "Record"), (dataclass_frozen, dataclasses, "Dataclass"))


def _pair(name: str, annotations: dict, defaults: dict):
    """The same class body made by `record` and by dataclasses (module level, so pickle finds them).
    A default is a value, or a function of the maker's module (its `field`) giving one."""
    made = []
    for decorate, module, suffix in MAKERS:
        body = {
            "__annotations__": dict(annotations),
            "__doc__": f"{name}.",
            "__module__": __name__,
            "__qualname__": name + suffix,
            **{k: v(module) if callable(v) else v for k, v in defaults.items()},
            "doubled": property(lambda self: 2),
        }
        cls = decorate(type(name + suffix, (), body))
        globals()[name + suffix] = cls
        made.append(cls)
    return made


PAIRS = [
    _pair("Empty", {}, {}),
    _pair("One", {"a": "object"}, {}),
    _pair("Defaults", {"a": "object", "b": "object"}, {"b": "b"}),
    _pair(
        "Spanned",
        {"a": "object", "span": "object"},
        {"span": lambda m: m.field(default=None, compare=False, hash=False, repr=False)},
    ),
    _pair(
        "Mixed",
        {"a": "object", "note": "object", "weight": "object"},
        {"note": lambda m: m.field(default="", compare=False), "weight": lambda m: m.field(default=0, hash=False)},
    ),
]
values = st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=3), st.tuples(st.integers(0, 2)))


def _build(cls, args, module):
    return cls(*args[: len(module.fields(cls))])


@given(st.sampled_from(PAIRS), st.lists(values, min_size=3, max_size=3), st.lists(values, min_size=3, max_size=3))
def test_instances_behave_as_the_dataclass_instances(pair, first, second):
    _behave_alike(*pair, first, second)


def test_interpreted_methods_behave_as_the_compiled_ones(monkeypatch):
    """Before a class's methods are compiled (its first COMPILE_AFTER calls) they are interpreted:
    the same results, the same errors, for every pair's shape; once compiled, still the same."""
    monkeypatch.setattr(frozen, "COMPILE_AFTER", 10**9)
    fresh = [
        _pair(
            ours.__name__.removesuffix("Record") + "Interpreted",
            dict(theirs.__annotations__),
            {
                f.name: _field_maker(f)
                for f in dataclasses.fields(theirs)
                if f.default is not dataclasses.MISSING or f.compare is False or f.hash is False
            },
        )
        for ours, theirs in PAIRS
    ]
    samples = [[None, 1, "x"], [None, 1, "y"], [(0,), -3, ""], [(0,), -3, ""]]
    for ours, theirs in fresh:
        for first in samples:
            for second in samples:
                _behave_alike(ours, theirs, first, second)
        assert vars(ours)["__init__"].__name__ == "stand_in"  # still interpreted
        for args in (range(len(frozen.fields(ours)) + 1), ()):
            if args == () and not any(f.default is frozen.MISSING for f in frozen.fields(ours)):
                continue
            with pytest.raises(TypeError) as ours_error:
                ours(*args)
            with pytest.raises(TypeError):
                theirs(*args)
            assert ours.__qualname__ in str(ours_error.value)
        monkeypatch.setattr(frozen, "COMPILE_AFTER", 0)
        _behave_alike(ours, theirs, samples[0], samples[2])
        assert vars(ours)["__init__"].__name__ == "__init__"  # compiled by the next call
        monkeypatch.setattr(frozen, "COMPILE_AFTER", 10**9)


def _field_maker(item):
    def make(module):
        default = module.MISSING if item.default is dataclasses.MISSING else item.default
        return module.field(default=default, compare=item.compare, hash=item.hash, repr=item.repr)

    return make


def _behave_alike(ours, theirs, first, second):
    a, b = _build(ours, first, frozen), _build(ours, second, frozen)
    x, y = _build(theirs, first, dataclasses), _build(theirs, second, dataclasses)
    assert (a == b) == (x == y) and (a != b) == (x != y)
    assert (hash(a) == hash(b)) == (hash(x) == hash(y)) and hash(a) == hash(x)
    assert repr(a).replace("Record(", "(") == repr(x).replace("Dataclass(", "(")
    assert (a == x) is False and a.__eq__(x) is NotImplemented  # another class is never equal
    assert pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a and copy.copy(a) == a
    assert frozen.asdict(a) == dataclasses.asdict(x)
    for field in frozen.fields(ours):
        assert getattr(a, field.name) == getattr(x, field.name)
        changed = frozen.replace(a, **{field.name: "changed"})
        assert getattr(changed, field.name) == "changed" and type(changed) is ours
        with pytest.raises(FrozenInstanceError, match="cannot assign to field"):
            setattr(a, field.name, 1)
        with pytest.raises(FrozenInstanceError, match="cannot delete field"):
            delattr(a, field.name)
    with pytest.raises((AttributeError, TypeError)):
        a.unknown = 1  # slots: nothing else can be set either
    assert a.doubled == 2


def _described(module, cls) -> list[tuple]:
    return [
        (
            f.name,
            "no default" if f.default is module.MISSING else f.default,
            f.compare,
            f.hash,
            f.repr,
            f.init,
            f.kw_only,
        )
        for f in module.fields(cls)
    ]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair[0].__name__)
def test_the_class_is_described_as_the_dataclass_is(pair):
    ours, theirs = pair
    assert frozen.is_record(ours) and not dataclasses.is_dataclass(ours) and ours.__slots__ == theirs.__slots__
    assert ours.__match_args__ == theirs.__match_args__ and ours.__doc__ == theirs.__doc__
    assert _described(frozen, ours) == _described(dataclasses, theirs)
    with pytest.raises(TypeError):
        ours(*range(len(frozen.fields(ours)) + 1))  # one argument too many, as with the dataclass


def test_the_parsers_constructors_take_records():
    made = constructor(ast.Rule)("deny", (), None)
    assert made == ast.Rule("deny", (), None) and type(made) is ast.Rule


@pytest.mark.parametrize(
    "body",
    [
        {"__annotations__": {"a": "int"}, "a": frozen.field(default=0, init=False)},
        {"__annotations__": {"a": "int", "b": "dataclasses.InitVar[int]"}},
        {"__annotations__": {"a": "int", "b": "ClassVar[int]"}},
        {"__annotations__": {"a": "int"}, "__eq__": lambda self, other: True},
        {"__annotations__": {"a": "list"}, "a": []},
        {"__annotations__": {"a": "int", "b": "int"}, "a": 0},
    ],
    ids=["not in init", "init var", "class var", "own eq", "mutable default", "default before required"],
)
def test_what_it_cannot_make_exactly_is_refused(body):
    with pytest.raises((TypeError, ValueError)):
        record(type("Odd", (), {"__doc__": "Odd.", "__module__": __name__, **body}))


class _Checked:
    """A base whose __post_init__ normalises a field, as the catalog's records do."""

    def __post_init__(self):
        object.__setattr__(self, "items", tuple(self.items))


def _made_both_ways(slots: bool, base=()):
    body = {
        "__annotations__": {"name": "str", "items": "tuple", "extra": "dict"},
        "__doc__": "K.",
        "__module__": __name__,
    }
    ours = record(type("K", base, dict(body, extra=frozen.field(default_factory=dict, compare=False))), slots=slots)
    theirs = dataclasses.dataclass(frozen=True, slots=slots)(
        type("K", base, dict(body, extra=dataclasses.field(default_factory=dict, compare=False)))
    )
    return ours, theirs


@pytest.mark.parametrize("compile_after", [0, 10**9], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("slots", [True, False])
def test_factories_keyword_only_fields_and_an_inherited_post_init(slots, compile_after, monkeypatch):
    monkeypatch.setattr(frozen, "COMPILE_AFTER", compile_after)
    for base in ((), (_Checked,)):
        ours, theirs = _made_both_ways(slots, base)
        a, x = ours("n", [1, 2]), theirs("n", [1, 2])
        assert a.extra == {} and a.extra is not ours("n", ()).extra  # a new value per instance
        assert repr(a) == repr(x) and a.items == x.items and hash(ours("n", (1,))) == hash(theirs("n", (1,)))
        # a factory leaves no default on the class (a slot, or nothing), as with dataclasses
        assert type(vars(ours).get("extra")) is type(vars(theirs).get("extra"))
        with pytest.raises(FrozenInstanceError):
            a.name = "m"
    keyword = record(
        type(
            "W",
            (),
            {
                "__annotations__": {"a": "int", "b": "int"},
                "__doc__": "W.",
                "__module__": __name__,
                "b": frozen.field(default=1, kw_only=True),
            },
        )
    )
    assert keyword(0, b=2).b == 2 and keyword(0).b == 1 and keyword.__match_args__ == ("a",)
    with pytest.raises(TypeError):
        keyword(0, 2)  # keyword-only, as dataclasses makes it
    everything = record(kw_only=True)(
        type("V", (), {"__annotations__": {"a": "int"}, "__doc__": "V.", "__module__": __name__})
    )
    assert everything(a=1).a == 1 and everything.__match_args__ == ()
    with pytest.raises(TypeError):
        everything(1)


def test_a_derived_record_has_its_bases_fields_first():
    base = record(
        type("Base", (), {"__annotations__": {"a": "int", "b": "int"}, "__doc__": "B.", "__module__": __name__, "b": 2})
    )
    derived = record(
        type(
            "Derived",
            (base,),
            {"__annotations__": {"c": "int", "b": "int"}, "__doc__": "D.", "__module__": __name__, "c": 3, "b": 5},
        )
    )
    made = derived(1)
    assert [f.name for f in frozen.fields(derived)] == ["a", "b", "c"] and (made.a, made.b, made.c) == (1, 5, 3)
    assert made != base(1, 5) and frozen.replace(made, c=4).c == 4 and constructor(derived)(1).b == 5
    with pytest.raises(FrozenInstanceError):
        made.a = 0


def test_a_record_with_its_own_init_keeps_it():
    class Checked:
        """Its own __init__ checks and stores the field, as Request does."""

        a: int = 0

        def __init__(self, *, a: int = 0):
            if a < 0:
                raise ValueError("negative")
            self.__dict__["a"] = a

    made = record(slots=False, init=False)(Checked)
    assert made(a=1) == made(a=1) and made(a=1) != made(a=2) and repr(made(a=1)).endswith("Checked(a=1)")
    assert frozen.replace(made(a=1), a=3).a == 3
    with pytest.raises(ValueError):
        frozen.replace(made(a=1), a=-1)  # through its own __init__ again
    with pytest.raises(TypeError):
        made(1)


def test_a_record_without_slots_keeps_a_dict_for_cached_values():
    plain = record(
        type("Plain", (), {"__annotations__": {"a": "int"}, "__doc__": "P.", "__module__": __name__}), slots=False
    )
    globals()["Plain"] = plain  # pickle finds a class by its module and name
    made = plain(1)
    made.__dict__["cached"] = 2  # what functools.cached_property writes
    assert made.cached == 2 and "__slots__" not in vars(plain) and pickle.loads(pickle.dumps(made)) == made


def test_every_ast_node_is_a_record():
    nodes = [
        cls
        for cls in vars(ast).values()
        if isinstance(cls, type) and cls.__module__ == ast.__name__ and frozen.is_record(cls)
    ]
    assert len(nodes) >= 28 and all(vars(cls).get("__frozen_record__") for cls in nodes)


def test_fields_replace_and_asdict_still_take_plain_dataclasses():
    made = dataclass_frozen(type("P", (), {"__annotations__": {"a": "int"}, "__doc__": "P.", "__module__": __name__}))
    assert [f.name for f in frozen.fields(made)] == ["a"] and frozen.replace(made(1), a=2) == made(2)
    assert frozen.asdict(made(1)) == {"a": 1}


def test_a_decision_process_imports_no_dataclasses():
    """The point of records: the modules a hook loads to decide never import dataclasses (and its inspect)."""
    probe = (
        "import sys\nfrom dshc.compiler import program, program_cache\nfrom dshc.cli import hook, main\n"
        "print(sorted({'dataclasses', 'inspect'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("first", ["eq", "hash", "init"])
def test_methods_compile_once_used_whichever_comes_first(first, monkeypatch):
    """A cached program's nodes are made without __init__ (object.__new__ and slot stores), so a
    record's first call may be __eq__ or __hash__; each then behaves as the dataclass's."""
    monkeypatch.setattr(frozen, "COMPILE_AFTER", 0)  # compiled by the first call
    ours = record(
        type(
            "Lazy",
            (),
            {
                "__annotations__": {"a": "int", "b": "int"},
                "__doc__": "L.",
                "__module__": __name__,
                "b": frozen.field(default=0, compare=False),
            },
        )
    )
    theirs = dataclass_frozen(
        type(
            "Lazy",
            (),
            {
                "__annotations__": {"a": "int", "b": "int"},
                "__doc__": "L.",
                "__module__": __name__,
                "b": dataclasses.field(default=0, compare=False),
            },
        )
    )
    stand_in = vars(ours)["__eq__"]
    decoded = object.__new__(ours)
    object.__setattr__(decoded, "a", 1)
    object.__setattr__(decoded, "b", 2)
    if first == "eq":
        assert decoded == decoded and not decoded == object.__new__(theirs)
    elif first == "hash":
        assert hash(decoded) == hash(theirs(1, 2))
    else:
        assert ours(1, 5) == decoded
    assert vars(ours)["__eq__"] is not stand_in  # compiled once, then called directly
    assert decoded == ours(1) and hash(decoded) == hash(theirs(1, 7)) and decoded != ours(2)


def test_compile_all_compiles_every_record_made_so_far():
    made = record(type("Eager", (), {"__annotations__": {"a": "int"}, "__doc__": "E.", "__module__": __name__}))
    assert vars(made)["__init__"].__name__ == "stand_in"
    frozen.compile_all()
    assert all(vars(made)[name].__name__ == name for name in ("__init__", "__eq__", "__hash__"))
    assert made(1) == made(1) and hash(made(1)) == hash((1,))
