"""The fast token stream yields exactly what lark's contextual lexer would, or gives up.

Giving up (Unsure) is always safe: the caller parses with lark's lexer. What must never happen is
an AST — or a span — that differs from lark's, or a text lark refuses being read as valid.
"""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from lark.exceptions import UnexpectedInput

from dshc.compiler import parse
from dshc.compiler.to_ast import building
from dshc.compiler.token_stream import Unsure

from dsl_strategies import documents


def _full(value):
    """The AST with every field, spans included (they are left out of ==)."""
    if dataclasses.is_dataclass(value):
        return (type(value).__name__,) + tuple(_full(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, (tuple, list)):
        return tuple(_full(item) for item in value)
    return value


def _both(text: str):
    """(fast result or 'unsure' / 'error', lark's result or 'error')."""
    parse._current.text = text
    with building("t.dsh"):
        try:
            fast = _full(parse.token_stream().parse(text).value)
        except Unsure:
            fast = "unsure"
        except UnexpectedInput:
            fast = "error"
    with building("t.dsh"):
        try:
            ours = _full(parse.parser().parse(text).value)
        except (UnexpectedInput, parse.GluedKeyword):
            ours = "error"
    return fast, ours


EDGES = [
    "policy p { approval ask\n default deny }",                 # keywords where only a name fits
    "policy allow { allow allow when allow }",                   # a keyword as every name (refused)
    "scope deny { parent allow ; approval ask }",                # … and where names are taken
    "presetx p { }",                                             # glued keyword: lark's error
    "policy p { allowx read }",
    "preset p { mount tool-fs { a == 1 } }",                     # `==` where only `=` fits
    'preset p { mount tool-fs { n = -5, f = 1.5, s = "a#b\\"c\\u00e9", l = [1, [2]] } }',
    "scope s { only a-b*, ?x, *y ; hide read_* }",
    "policy p {\r\n  deny read\r\n\tallow write  # trailing comment\r\n}\r\n",
    'policy p { deny read when args.file_path matches "é—🙂*" and not (a or b) }',
    "# only a comment\n",
    "policy p { deny read } }",
    'policy p { writable "a\nb" }',                               # a newline inside a string
    "host h { roster default p ; platforms linux, darwin ; flags x }",
]


@pytest.mark.parametrize("text", EDGES)
def test_edge_texts_agree_with_lark(text):
    fast, ours = _both(text)
    if ours == "error":
        assert fast in ("error", "unsure")
    else:
        assert fast in (ours, "unsure")


def test_valid_text_takes_the_fast_path():
    fast, ours = _both("\n".join(EDGES[i] for i in (0, 2, 6, 7, 8, 9, 13)))
    assert ours != "error" and fast == ours


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.integers(0, 6))
def test_generated_documents_agree_and_valid_ones_never_need_lark(text, cut):
    fast, ours = _both(text)
    assert ours != "error" and fast == ours  # the strategies draw valid documents
    broken = text[: len(text) * cut // 6] if cut else text.replace("{", "", 1)
    fast, ours = _both(broken)
    if ours == "error":
        assert fast in ("error", "unsure")
    else:
        assert fast in (ours, "unsure")
