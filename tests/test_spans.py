"""Spans are read off a node's outermost tokens: keywords and punctuation count, as they did when lark
propagated positions to every node (the fixtures' diagnostics pin the same columns)."""

from __future__ import annotations

from dshc.compiler.parse import parse_source
from dshc.compiler.source import Source
from dshc.compiler.to_ast import to_document


def _document(text: str):
    decls, diags, comments = parse_source(Source("t.dsh", text))
    assert diags == [] and decls is not None
    return to_document("t.dsh", decls, comments)


def _cols(span):
    return (span.line, span.col, span.end_line, span.end_col)


def test_a_block_spans_from_its_keyword_to_its_closing_brace():
    (policy,) = _document('\n  policy p "T" {\n    default deny ;\n  }\n').decls
    assert _cols(policy.span) == (2, 3, 4, 4)


def test_parentheses_belong_to_what_encloses_them_not_to_the_expression():
    (policy,) = _document("policy p {\n  allow read when not (a and b)\n}\n").decls
    (rule,) = policy.rules
    negation = rule.condition
    assert _cols(rule.span) == (2, 3, 2, 32)  # `allow` … `)`
    assert _cols(negation.span) == (2, 19, 2, 32)  # `not` … `)`
    assert _cols(negation.item.span) == (2, 24, 2, 31)  # `a and b`, without its parentheses


def test_a_node_made_of_keywords_alone_spans_them():
    (host,) = _document("host h {\n  roster\n}\n").decls
    assert _cols(host.roster_span) == (2, 3, 2, 9)


def test_a_target_spans_its_punctuation():
    (policy,) = _document("policy p { deny package(tool-fs), risk( write ) }").decls
    first, second = policy.rules[0].targets
    assert _cols(first.span) == (1, 17, 1, 33)
    assert _cols(second.span) == (1, 35, 1, 48)


def test_every_rule_the_parser_reduces_has_a_builder():
    """A reduction without a builder method would hand lark's default Tree to a parent expecting Built."""
    from dshc.compiler.parse import parser
    from dshc.compiler.to_ast import _RULES

    reduced = {
        rule.alias or rule.origin.name
        for rule in parser().rules
        if not (rule.options.expand1 and len(rule.expansion) == 1)
    }  # `?rule: one` hands its child up
    missing = {name for name in reduced if not name.startswith("_") and name not in _RULES}
    assert missing == set()


def test_the_forms_the_grammar_writes_out_build_the_nodes_and_spans_of_the_general_ones():
    """A rule's effect, targets and condition, `a and b`, `a or b` and `args.x` have alternatives of
    their own (no helper rule): they build what three targets, three operands and a.b.c.d build."""
    text = (
        "policy p {\n"
        "  ask read when a.b and c\n"
        "  deny read, write, package(tool-fs) when a.b.c.d or c or d and e and f\n"
        "  guard g: deny read when x or y\n"
        "  guard h: deny read, write\n"
        "}\n"
    )
    (policy,) = _document(text).decls
    short, long_ = policy.rules
    assert (short.effect, [t.name.text for t in short.targets]) == ("ask", ["read"])
    assert [part.fact.path for part in short.condition.items] == [("a", "b"), ("c",)]
    assert _cols(short.span) == (2, 3, 2, 26)
    assert _cols(short.condition.span) == (2, 17, 2, 26)
    assert _cols(short.condition.items[0].fact.span) == (2, 17, 2, 20)
    assert long_.effect == "deny" and [t.kind for t in long_.targets] == ["tool", "tool", "package"]
    either = long_.condition
    assert type(either).__name__ == "Or" and len(either.items) == 3
    assert either.items[0].fact.path == ("a", "b", "c", "d")
    assert [item.fact.path for item in either.items[2].items] == [("d",), ("e",), ("f",)]
    assert _cols(long_.span) == (3, 3, 3, 72)
    with_condition, bare = policy.guards
    assert (with_condition.name.text, len(with_condition.targets)) == ("g", 1)
    assert type(with_condition.condition).__name__ == "Or"
    assert (bare.condition, [t.name.text for t in bare.targets]) == (None, ["read", "write"])
    assert _cols(bare.span) == (5, 3, 5, 28)


def test_a_keyword_names_a_tool_where_only_a_target_fits():
    """After a rule's effect only a target fits, so `deny approval` denies a tool named `approval`
    (an MCP server's tool may be called anything); the resolver still refuses a tool no package has."""
    (policy,) = _document("policy allow {\n  allow ask when allow\n  deny approval\n}\n").decls
    assert [(r.effect, r.targets[0].name.text) for r in policy.rules] == [("allow", "ask"), ("deny", "approval")]
    assert policy.rules[0].condition.fact.path == ("allow",)
