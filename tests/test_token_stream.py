"""The fast token stream gives exactly what lark's own lexer gives: the AST with its spans, or the
same syntax error at the same token. Valid text never needs lark's lexer."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from lark.exceptions import UnexpectedInput

from dshc.compiler import parse, token_stream
from dshc.compiler._base.frozen import fields, is_record
from dshc.compiler.to_ast import building
from dshc.compiler.token_stream import TokenStream

from dsl_strategies import documents

from conftest import examples


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
            return (
                "error",
                type(exc).__name__,
                getattr(exc, "line", None),
                getattr(exc, "column", None),
                getattr(token, "type", None),
                sorted(getattr(exc, "expected", None) or ()),
                sorted(getattr(exc, "accepts", None) or ()),
                [(t.type, t.line, t.column) for t in getattr(exc, "token_history", None) or () if t is not None],
            )


def _both(text: str):
    """(the token stream's outcome, lark's lexer's)."""
    return _outcome(parse.token_stream().parse, text), _outcome(parse.parser().parse, text)


@pytest.fixture
def lark_lexer_never_needed(monkeypatch):
    def refuse(*args):
        raise AssertionError("valid text handed over to lark's lexer")

    monkeypatch.setattr(TokenStream, "_resume", staticmethod(refuse))


EDGES = [
    "policy p { approval ask\n default deny }",  # keywords where only a name fits
    "policy allow { allow allow when allow }",  # a keyword as every name
    "scope deny { parent allow ; approval ask }",  # … and where names are taken
    "presetx p { }",  # glued keyword: lark's error
    "policy p { allowx read }",
    "preset p { mount tool-fs { a == 1 } }",  # `==` where only `=` fits
    'preset p { mount tool-fs { n = -5, f = 1.5, s = "a#b\\"c\\u00e9", l = [1, [2]] } }',
    "scope s { only a-b*, ?x, *y ; hide read_* }",
    "policy p {\r\n  deny read\r\n\tallow write  # trailing comment\r\n}\r\n",
    'policy p { deny read when args.file_path matches "é—🙂*" and not (a or b) }',
    "# only a comment\n",
    "policy p { deny read } }",
    'policy p { writable "a\nb" }',  # a newline inside a string
    "host h { roster default p ; platforms linux, darwin ; flags x }",
    "policy p { allow }",  # refused after a reduction, mid-step
    "policy p { ask ; }",
    "policy p { deny read }   \n\t\n",  # blanks at the end: no token after them
    "policy p {\n\n   @ }",  # blanks, then what no terminal matches
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


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.integers(0, 6))
def test_generated_documents_agree_with_lark(text, cut):
    fast, ours = _both(text)
    assert fast[0] == "ast" and fast == ours  # the strategies draw valid text
    broken = text[: len(text) * cut // 6] if cut else text.replace("{", "", 1)
    assert _both(broken)[0] == _both(broken)[1]


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(documents)
def test_valid_documents_never_need_lark_lexer(lark_lexer_never_needed, text):
    assert _outcome(parse.token_stream().parse, text)[0] == "ast"


# --- reductions specialised to their rule's fixed children (`specialise`), as large texts get them ---
def _specialising_stream(monkeypatch) -> TokenStream:
    """A token stream whose rules switch to their specialised reductions after one use, not 128."""
    monkeypatch.setattr(token_stream, "WARM_REDUCTIONS", 1)
    return TokenStream(parse.parser())


def _outcome_and_limit(parse_text, text: str):
    parse._current.text = text
    with building("t.dsh") as state:
        outcome = _outcome(parse_text, text)
        return outcome, state.over_limit


def _specialised_runs(stream: TokenStream) -> set:
    """The rules whose reduce action now runs a specialised reduction."""
    actions = {id(action): action for row in stream._actions.values() for shift, action in row.values() if not shift}
    return {
        id(action)
        for action in actions.values()
        if action[2] is not None
        and getattr(action[2], "__code__", None) is not None
        and action[2].__code__.co_filename == "<dshc reduce>"
    }


def test_specialised_reductions_build_what_lark_builds(monkeypatch):
    stream = _specialising_stream(monkeypatch)
    texts = EDGES + [
        'policy p { deny read, write when scope == "child" and not plan_mode or args.x matches "a*" ;'
        " guard g: deny package(tool-fs) when has services.db and flag beta ; default ask }",
        'preset p extends q { mount tool-fs as fs { a = [1, "b", true, false, [2.5]], c = -3 }'
        ' when platform in ["linux"] disabled ; present x ; provides a, b }',
        'commands c "t" { "git push" except "git push --dry-run", "x" ; "ls" }',
        'upstream u { command "npx" ; args ["-y", "x"] ; env { K = "v" } ; url "https://x" ; risk r a, b }',
        "scope s extends t { parent p ; own a/b, c ; only x ; hide y }",
    ]
    for _ in range(2):  # the first pass switches each rule it reduces; the second runs the switched ones
        for text in texts:
            assert _outcome_and_limit(stream.parse, text) == _outcome_and_limit(parse.parser().parse, text)
    assert len(_specialised_runs(stream)) >= 40  # the comparison above ran specialised reductions


def test_specialised_reductions_keep_the_input_limits(monkeypatch):
    from dshc.compiler.limits import MAX_CONDITION_DEPTH, MAX_NAME_CHARS, MAX_STRING_CHARS

    stream = _specialising_stream(monkeypatch)
    deep, groups = "not " * (MAX_CONDITION_DEPTH + 2) + "a", "a"
    for _ in range(MAX_CONDITION_DEPTH // 2 + 1):
        groups = f"(a or (b and {groups}))"  # parentheses carry the height; each `and` / `or` adds one
    texts = [
        "policy p { deny read when a }",
        f"policy p {{ deny {'r' * (MAX_NAME_CHARS + 1)} }}",
        f'policy p {{ writable "{"w" * (MAX_STRING_CHARS + 1)}" }}',
        f"policy p {{ deny read when {deep} }}",
        f"policy p {{ deny read when {groups} }}",
        "policy p { deny read when (a or (b and c)) }",
    ]
    for _ in range(2):
        results = [_outcome_and_limit(stream.parse, text) for text in texts]
        assert results == [_outcome_and_limit(parse.parser().parse, text) for text in texts]
        assert [limit for _, limit in results] == [False, True, True, True, True, False]


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(documents, st.integers(0, 6))
def test_generated_documents_agree_with_lark_through_specialised_reductions(monkeypatch, text, cut):
    stream = _specialising_stream(monkeypatch)
    for sample in (text, text[: len(text) * cut // 6] if cut else text.replace("{", "", 1), text):
        assert _outcome_and_limit(stream.parse, sample) == _outcome_and_limit(parse.parser().parse, sample)
