"""Input limits of the declaration language: a lark tree (or raw file bytes) → DSH110 diagnostics.

The AST builder (to_ast) notices while it parses that a text went past a limit, converts no literal
past one, and lets nothing past the parser see that text; its parse tree is then built to place each
problem here. docs/limits.md lists the same numbers.
"""

from __future__ import annotations

from lark import Token, Tree

from .diagnostics import Diagnostic
from .source import Span

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_CONDITION_DEPTH = 64  # nested `not` / `and` / `or` groups (a flat chain is one level)
MAX_LIST_DEPTH = 16  # lists inside lists
MAX_NUMBER_CHARS = 64  # far below Python's 4,300-digit conversion limit
MAX_STRING_CHARS = 65_536
MAX_NAME_CHARS = 1_024

CONDITION_NODES = frozenset({"or_expr", "and_expr", "not_expr"})
TOKEN_LIMITS = {
    "NUMBER": ("number literal", MAX_NUMBER_CHARS),
    "STRING": ("string literal", MAX_STRING_CHARS),
    "NAME": ("name", MAX_NAME_CHARS),
}


def file_size_problem(path: str, size: int) -> Diagnostic | None:
    if size <= MAX_FILE_BYTES:
        return None
    return Diagnostic(
        "DSH110",
        f"file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}",
        Span(path, 1, 1, 1, 1),
        "split the declarations over several files",
    )


def tree_problems(path: str, tree: Tree) -> list[Diagnostic]:
    """Every place in `tree` past a limit; nothing below an offending node is reported again."""
    problems: list[Diagnostic] = []
    stack: list[tuple[Tree, int, int]] = [(tree, 0, 0)]
    token_limits, condition_nodes, token_type = TOKEN_LIMITS, CONDITION_NODES, Token
    while stack:  # iterative: the depth being measured is the attacker's choice
        node, conditions, lists = stack.pop()
        data = node.data
        conditions += data in condition_nodes
        lists += data == "list"
        if conditions > MAX_CONDITION_DEPTH:
            problems.append(
                _too_deep(
                    path,
                    node,
                    "conditions",
                    MAX_CONDITION_DEPTH,
                    "name the parts with separate rules, or flatten `not not`",
                )
            )
            continue
        if lists > MAX_LIST_DEPTH:
            problems.append(_too_deep(path, node, "lists", MAX_LIST_DEPTH, None))
            continue
        for child in node.children:  # leaves are checked here, not pushed: they outnumber the nodes
            if isinstance(child, token_type):
                limit = token_limits.get(child.type)
                if limit is not None and len(child) > limit[1]:
                    problems.append(_too_long(path, child, *limit))
            else:
                stack.append((child, conditions, lists))
    return sorted(problems, key=lambda d: (d.span.line, d.span.col))  # type: ignore[union-attr]  # each made here has one


def _too_long(path: str, token: Token, what: str, limit: int) -> Diagnostic:
    span = Span(path, token.line, token.column, token.end_line, token.end_column)  # type: ignore[arg-type]  # lexed: set
    return Diagnostic("DSH110", f"{what} of {len(token):,} characters; the limit is {limit:,}", span)


def _too_deep(path: str, node: Tree, what: str, limit: int, help_text: str | None) -> Diagnostic:
    return Diagnostic("DSH110", f"{what} nested more than {limit} deep", _span(path, node), help_text)


def _span(path: str, node: Tree) -> Span:
    """From the node's first token to its last: trees keep every token, `}` and `)` included."""
    first, last = _edge(node, 0), _edge(node, -1)
    return Span(path, first.line, first.column, last.end_line, last.end_column)  # type: ignore[arg-type]  # lexed: set


def _edge(node: Tree, side: int) -> Token:
    while not isinstance(node, Token):  # iterative: the depth is the attacker's choice
        node = node.children[side]  # a node past a limit has children: it nests something
    return node
