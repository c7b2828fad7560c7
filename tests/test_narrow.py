"""`cli.narrow`: observed argument values → conditions pinning all but free text; the free-text heuristic
(schema first, values second) and what the language cannot write."""

from __future__ import annotations

import pytest

from dshc.cli.narrow import free_text, literal, narrow
from dshc.compiler.program import SourceFile, parse_files


@pytest.mark.parametrize(
    "name, schema, values, free",
    [
        ("body", {"type": "string"}, ["hi"], True),  # named like prose
        ("subject", {"type": "string", "description": "Subject of the transaction."}, ["Rent"], True),
        ("q", {"type": "string", "description": "Text to search for."}, ["a"], True),  # described like prose
        (
            "recipient",
            {"type": "string", "description": "The body's recipient."},
            ["GB29"],
            False,
        ),  # an identifier name
        ("message_id", {"type": "string"}, ["m-1"], False),  # identifier words outweigh prose words
        ("channel", {"type": "string", "description": "Channel name."}, ["general"], False),
        ("kind", {"type": "string", "enum": ["a", "b"]}, ["a"], False),
        ("when", {"type": "string", "format": "date"}, ["2024-05-01"], False),
        ("n", {"type": "integer"}, [3], False),
        ("x", {}, ["one two three four"], True),  # no schema hint: four words are prose
        ("x", {}, ["line\nbreak"], True),
        ("x", {}, ["ACC-1234"], False),
        ("x", {}, [["a", "b"]], False),  # a list is never free text
    ],
)
def test_free_text_is_told_by_schema_then_values(name, schema, values, free):
    assert free_text(name, schema, values) is free


@pytest.mark.parametrize(
    "value, text",
    [
        ('a"b', '"a\\"b"'),
        (True, "true"),
        (12, "12"),
        (-1.5, "-1.5"),
        (["a", 1, [False]], '["a", 1, [false]]'),
        ({"a": 1}, None),
        (None, None),
        (1e-7, None),
        (["a", None], None),
    ],
)
def test_literal_writes_what_the_language_can(value, text):
    assert literal(value) == text


def test_calls_are_grouped_by_the_pinned_arguments_they_give():
    schema = {
        "properties": {
            "id": {"type": "integer"},
            "recipient": {"type": "string"},
            "amount": {"type": "number"},
            "note": {"type": "string"},
        }
    }
    found = narrow([{"id": 7, "amount": 5}, {"id": 8, "amount": 5, "note": "why"}, {"id": 9, "recipient": "X"}], schema)
    assert [(n.condition, n.calls) for n in found] == [
        ("args.amount == 5 and args.id in [7, 8] and not has args.recipient", (0, 1)),
        ('not has args.amount and args.id == 9 and args.recipient == "X"', (2,)),
    ]


def test_what_cannot_be_written_is_left_open_with_a_note():
    (found,) = narrow([{"filter": {"a": 1}, "user.name": "x", "to": "y@z"}], {})
    assert found.condition == 'args.to == "y@z"'
    assert any("args.filter left open" in note for note in found.notes)
    assert any("`user.name` left open" in note for note in found.notes)


def test_urls_are_pinned_by_host_and_other_strings_exactly():
    (found,) = narrow([{"url": "https://a.example/x?y=1"}, {"url": "https://b.example:8443/"}], {})
    assert found.condition == 'args.url.host in ["a.example", "b.example"]'
    (mixed,) = narrow([{"url": "https://a.example/"}, {"url": "not a url"}], {})
    assert mixed.condition == 'args.url in ["https://a.example/", "not a url"]'


def test_every_condition_parses():
    found = narrow([{"a": ["x", 1], "b": 'q"uote', "c": 2.5, "d": True}], {})
    text = "".join(f"policy p{i} {{ allow t when {n.condition} }}\n" for i, n in enumerate(found))
    _, diags, _ = parse_files([SourceFile("n.dsh", text.encode())])
    assert not diags


@pytest.mark.parametrize(
    "values, condition",
    [
        ([["a@x.org"], ["b@x.org", "a@x.org"]], 'args.v all in ["a@x.org", "b@x.org"] and length(args.v) <= 2'),
        ([5, 12.5, 7], "args.v >= 5 and args.v <= 12.5"),
        (["2026-01-02", "2026-11-30"], 'args.v matches "????-??-??"'),
        (["INV-0012", "INV-0019"], 'args.v matches "INV-*"'),
        (["ann@corp.example", "bob@corp.example"], 'args.v matches "*@corp.example"'),
        (["userA1", "userB2"], 'args.v matches "user*"'),
        # nothing shared worth saying, a glob character in the shared part, mixed kinds: the values themselves
        (["ab", "cd"], 'args.v in ["ab", "cd"]'),
        (["a*b-1", "a*b-2"], 'args.v in ["a*b-1", "a*b-2"]'),
        ([1, "1"], 'args.v in ["1", 1]'),
        ([True, False], "args.v in [false, true]"),
        # one value: an array and a date by their shape, anything else as it is
        ([7, 7], "args.v == 7"),
        (["INV-1", "INV-1"], 'args.v == "INV-1"'),
        ([["a"]], 'args.v all in ["a"] and length(args.v) <= 1'),
        (["2026-01-02"], 'args.v matches "????-??-??"'),
    ],
)
def test_shape_generalises_each_argument_to_the_class_its_values_share(values, condition):
    (found,) = narrow([{"v": v} for v in values], {}, "shape")
    assert found.condition == condition


def test_shape_keeps_hosts_and_free_text_as_exact_does():
    calls = [{"url": "https://a.example/x", "body": "a long message to send"}, {"url": "https://b.example/"}]
    exact = narrow(calls, {}, "exact")
    assert narrow(calls, {}, "shape") == exact
