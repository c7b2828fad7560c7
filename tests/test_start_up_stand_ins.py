"""The stand-ins a hook uses instead of modules whose import costs it (json, functools, re,
fnmatch) give what those modules give: the same values, the same errors."""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.common import json_io
from dshc.compiler import patterns
from dshc.compiler._base import memo

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)
whitespace = st.text(alphabet=" \t\n\r", max_size=3)


@given(json_values, whitespace, whitespace, st.booleans())
def test_loads_reads_what_json_writes(value, before, after, as_bytes):
    text = before + json.dumps(value, ensure_ascii=False) + after
    data = text.encode("utf-8") if as_bytes else text
    assert json.dumps(json_io.loads(data)) == json.dumps(json.loads(data))


@given(st.text(max_size=30))
def test_loads_answers_any_text_as_json_does(text):
    try:
        expected = json.loads(text)
    except (ValueError, RecursionError) as exc:
        with pytest.raises(type(exc)) as caught:
            json_io.loads(text)
        assert str(caught.value) == str(exc)  # json's own message, line and column
    else:
        assert json.dumps(json_io.loads(text)) == json.dumps(expected)  # NaN is unequal to itself; its text is not


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf{}",
        '{"a": 1}'.encode("utf-16"),
        b'"\xff"',
        "\ufeff{}",
        "[1] [2]",
        "[1] x",
        "",
        "   ",
        "NaN",
        "[Infinity, -Infinity]",
        "[" * 5000 + "]" * 5000,
        '{"a": "\\ud800"}',
        "1e400",
        "-0",
    ],
)
def test_loads_edge_cases_as_json(data):
    try:
        expected = json.loads(data)
    except (ValueError, RecursionError) as exc:
        with pytest.raises(type(exc)):
            json_io.loads(data)
    else:
        got = json_io.loads(data)
        assert json.dumps(got) == json.dumps(expected)  # NaN compares unequal to itself; its text does not


def test_loads_reports_json_errors_in_a_process_that_never_imported_json():
    import subprocess
    import sys

    probe = (
        "import sys\nfrom dshc.common import json_io\nassert 'json' not in sys.modules\n"
        "for text in ('{bad', '[1,', '', '[1] x'):\n"
        "    try:\n        json_io.loads(text)\n    except ValueError as exc:\n"
        "        print(type(exc).__name__, exc.pos)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.split("\n")[:4] == [
        "JSONDecodeError 1",
        "JSONDecodeError 3",
        "JSONDecodeError 0",
        "JSONDecodeError 4",
    ], done.stderr


@given(json_values, st.booleans())
def test_dumps_writes_what_json_writes(value, ensure_ascii):
    assert json_io.dumps(value, ensure_ascii=ensure_ascii) == json.dumps(value, ensure_ascii=ensure_ascii)


def test_dumps_refuses_what_json_refuses():
    for value in ({1, 2}, object(), {"a": b"x"}):
        with pytest.raises(TypeError) as ours:
            json_io.dumps(value)
        with pytest.raises(TypeError) as theirs:
            json.dumps(value)
        assert str(ours.value) == str(theirs.value)
    circular: list = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular reference"):
        json_io.dumps(circular)


def test_cached_property_computes_once_per_instance():
    calls = []

    class Thing:
        @memo.cached_property
        def value(self):
            """The value."""
            calls.append(self)
            return len(calls)

    a, b = Thing(), Thing()
    assert (a.value, a.value, b.value) == (1, 1, 2) and len(calls) == 2
    assert Thing.value.__doc__ == "The value." and isinstance(Thing.value, memo.cached_property)
    del a.value  # dropped from the instance: made again on the next read, as with functools
    assert a.value == 3


def test_once_and_memoised_remember_and_forget_as_lru_cache_does():
    made = []

    @memo.once
    def loaded():
        made.append(1)
        return object()

    assert loaded() is loaded() and len(made) == 1
    loaded.cache_clear()
    loaded()
    assert len(made) == 2 and loaded.__name__ == "loaded"

    @memo.memoised(3)
    def square(n):
        made.append(n)
        return n * n

    reference = functools.lru_cache(maxsize=3)(lambda n: n * n)
    for n in [1, 2, 1, 3, 4, 5, 1, 2, 2]:
        assert square(n) == reference(n)
    assert square.__wrapped__(7) == 49


def test_wraps_names_the_wrapper_as_functools_does():
    def original(x):
        """Doc."""
        return x

    @memo.wraps(original)
    def ours(*args):
        return original(*args)

    @functools.wraps(original)
    def theirs(*args):
        return original(*args)

    for attribute in ("__name__", "__qualname__", "__doc__", "__module__", "__wrapped__"):
        assert getattr(ours, attribute) == getattr(theirs, attribute)


@pytest.mark.parametrize(
    "text, subject",
    [
        (r"(?s)^([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#]*)(.*)$", "HTTPS://Example.COM/a\nb"),
        (r"(?m)^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", "*** Add File: a\n*** Move to: b\n"),
        (r"\s-(?:eq|ne)\s", "[[ 1 -eq 2 ]]"),
    ],
)
def test_a_pattern_compiled_on_first_use_is_the_compiled_expression(text, subject):
    import re

    ours, theirs = patterns.Pattern(text), re.compile(text)
    assert ours.findall(subject) == theirs.findall(subject)
    assert ours.sub("_", subject) == theirs.sub("_", subject)
    for method in ("match", "search", "fullmatch"):
        found, expected = getattr(ours, method)(subject), getattr(theirs, method)(subject)
        assert (found and found.groups()) == (expected and expected.groups())


@pytest.mark.parametrize("name, pattern", [("web_fetch", "web_*"), ("bash", "b?sh"), ("read", "[rw]*"), ("x", "y")])
def test_fnmatchcase_is_fnmatchs(name, pattern):
    import fnmatch

    assert patterns.fnmatchcase(name, pattern) == fnmatch.fnmatchcase(name, pattern)


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=8))
def test_unusable_text_is_what_the_nul_and_surrogate_expression_finds(text):
    import re
    from dshc.compiler.policy.arguments import _usable

    assert _usable(text) == (re.search("[\x00\ud800-\udfff]", text) is None)


canonical_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False)
    | st.text(st.characters(max_codepoint=0x2FFFF, blacklist_categories=("Cs",)), max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=50, deadline=None)
@given(canonical_values)
def test_canonical_is_rfc8785_or_leaves_the_value_to_it(value):
    """The view's fingerprint: the C encoder's form where it is RFC 8785's, else None (rfc8785 writes it)."""
    import rfc8785

    ours = json_io.canonical(value)
    try:
        theirs = rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, ValueError):
        theirs = None  # a value RFC 8785 cannot write: the fast form must not write it either
    assert ours is None or ours == theirs, (ours, theirs)


def test_canonical_writes_the_forms_that_differ_as_rfc8785_does():
    from dshc.compiler.view import canonical
    import rfc8785

    for value in (
        {"b": 1, "a": [True, None, 'x\u0001\n"\\']},
        {"\ue000": 1, "\U0001f600": 2},
        [1.5, 1e21, -0.0, 2**53 - 1],
        {"text": "é中"},
    ):
        assert canonical(value) == rfc8785.dumps(value)
    assert json_io.canonical({"\U0001f600": 2}) is None and json_io.canonical([1.5]) is None
    assert json_io.canonical({"b": 1, "a": "é"}) == rfc8785.dumps({"b": 1, "a": "é"})
