"""Where a node of a parse tree lies in its text, read off its first and last token.

The parser keeps every token (`keep_all_tokens`), keywords and punctuation included, so a node's
extent is exactly that of its outermost tokens: a block ends at its `}`, `not (a)` at its `)`.
(`to_ast` builds spans the same way during the parse; a tree is built only to place a limit
diagnostic.) Cheaper than lark's `propagate_positions`, which gives every node of the tree a
position while it is built (about 40 % of the parse, measured).
"""
from __future__ import annotations

from lark import Token, Tree

from .source import Span


def edge_token(tree: Tree, last: bool) -> Token | None:
    """The first (or last) token below `tree`; None for a node with no text at all."""
    node = tree
    while node.children:  # the common case: straight down the outermost children
        child = node.children[-1 if last else 0]
        if isinstance(child, Token):
            return child
        node = child
    return _edge_token_searched(tree, last)  # an empty node on the way (only `start` can be)


def _edge_token_searched(tree: Tree, last: bool) -> Token | None:
    stack: list = [tree]
    while stack:  # iterative: nesting is the author's choice
        node = stack.pop()
        if isinstance(node, Token):
            return node
        stack.extend(node.children if last else reversed(node.children))
    return None


def tree_span(path: str, tree: Tree) -> Span | None:
    first = edge_token(tree, False)
    if first is None:
        return None
    end = edge_token(tree, True)
    return Span(path, first.line, first.column, end.end_line, end.end_column)
