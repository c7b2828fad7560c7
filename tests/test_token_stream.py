"""The fast token stream gives exactly what lark's own lexer gives: the AST with its spans, or the
same syntax error at the same token. Valid text never needs lark's lexer."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from lark.exceptions import UnexpectedInput

from dshc.compiler import parse
from dshc.compiler.frozen import fields, is_record
from dshc.compiler.to_ast import building
from dshc.compiler.token_stream import TokenStream

from dsl_strategies import documents


def _full(value):
    """The AST with every field, spans included (they are left out of ==)."""
    if is_record(value):
        return (type(value).__name__,) + tuple(_full(getattr(value, f.name)) for f in fields(value))
    if isinstance(value, (tuple, list)):
        return tuple(_full(item) for item in value)
    return value


def _outcome(parse_text, text: str):
    """The AST with spans, or what the error says and where."""
    parse._current.text = text
    with building("t.dsh"):
        try:
            return ("ast", _full(parse_text(text)[0]))
        except (UnexpectedInput, parse.GluedKeyword) as exc:
            token = getattr(exc, "token", None)
            return ("error", type(exc).__name__, getattr(exc, "line", None), getattr(exc, "column", None),
                    getattr(token, "type", None), sorted(getattr(exc, "expected", None) or ()),
                    sorted(getattr(exc, "accepts", None) or ()),
                    [(t.type, t.line, t.column) for t in getattr(exc, "token_history", None) or () if t is not None])


def _both(text: str):
    """(the token stream's outcome, lark's lexer's)."""
    return _outcome(parse.token_stream().parse, text), _outcome(parse.parser().parse, text)


@pytest.fixture
def lark_lexer_never_needed(monkeypatch):
    def refuse(*args):
        raise AssertionError("valid text handed over to lark's lexer")
    monkeypatch.setattr(TokenStream, "_resume", staticmethod(refuse))


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
    "policy p { allow }",                                        # refused after a reduction, mid-step
    "policy p { ask ; }",
    "policy p { deny read }   \n\t\n",                          # blanks at the end: no token after them
    "policy p {\n\n   @ }",                                      # blanks, then what no terminal matches
    "\n \t\r\n",
]


@pytest.mark.parametrize("text", EDGES)
def test_edge_texts_agree_with_lark(text):
    fast, ours = _both(text)
    assert fast == ours


def test_valid_text_takes_the_fast_path(lark_lexer_never_needed):
    text = "\n".join(EDGES[i] for i in (0, 2, 6, 7, 8, 13))
    fast = _outcome(parse.token_stream().parse, text)
    assert fast[0] == "ast" and fast == _outcome(parse.parser().parse, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.integers(0, 6))
def test_generated_documents_agree_with_lark(text, cut):
    fast, ours = _both(text)
    assert fast[0] == "ast" and fast == ours  # the strategies draw valid text
    broken = text[: len(text) * cut // 6] if cut else text.replace("{", "", 1)
    assert _both(broken)[0] == _both(broken)[1]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(documents)
def test_valid_documents_never_need_lark_lexer(lark_lexer_never_needed, text):
    assert _outcome(parse.token_stream().parse, text)[0] == "ast"
