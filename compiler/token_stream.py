"""Feeding lark's LALR parser from one regular expression: the fast path of every parse.

lark's contextual lexer spends most of a parse's time per token (a scanner per parser state, a line
counter object, a callback per keyword). Here the text is cut by one alternation of the grammar's
terminals, in the order lark's own lexer tries them, and each token is fed to lark's interactive
parser. A word is a keyword where the parser's state accepts that keyword, else a NAME — what the
contextual lexer decides. Whenever this could differ from lark's own lexer (a terminal the state
does not accept, a word it cannot take) the stream gives up with `Unsure` and the caller parses with
lark's lexer, which gives the same result or the exact syntax error. So only valid text is read
here, and it yields exactly lark's tokens (tests/test_token_stream.py compares both).
"""
from __future__ import annotations

import re

from lark import Lark, Token


class Unsure(Exception):
    """This text needs lark's own lexer: a syntax error, or a token only it can place."""


class TokenStream:
    def __init__(self, parser: Lark):
        self.parser = parser
        name = re.compile(parser.get_terminal("NAME").pattern.to_regexp())
        # lark's BasicLexer order: the first alternative that matches is the token
        terminals = sorted(parser.terminals, key=lambda t: (-t.priority, -t.pattern.max_width,
                                                            -len(t.pattern.value), t.name))
        self.keywords: dict[str, str] = {}  # "allow" -> "ALLOW": words NAME matches too
        alternatives = []
        for terminal in terminals:
            if terminal.pattern.type == "str" and name.fullmatch(terminal.pattern.value):
                self.keywords[terminal.pattern.value] = terminal.name
            else:
                alternatives.append(f"(?P<{terminal.name}>{terminal.pattern.to_regexp()})")
        self.pattern = re.compile("|".join(alternatives))
        self.ignored = frozenset(parser.lexer_conf.ignore)

    def parse(self, text: str):
        """What `parser.parse(text)` returns, or Unsure / lark's UnexpectedInput."""
        interactive = self.parser.parse_interactive(text)
        choices, feed = interactive.choices, interactive.feed_token
        match, keywords, ignored = self.pattern.match, self.keywords, self.ignored
        pos, line, line_start, size = 0, 1, 0, len(text)
        token = None
        while pos < size:
            found = match(text, pos)
            if found is None:
                raise Unsure
            kind, end = found.lastgroup, found.end()
            if kind in ignored:
                newlines = text.count("\n", pos, end)
                if newlines:
                    line += newlines
                    line_start = text.rindex("\n", pos, end) + 1
                pos = end
                continue
            value = found.group()
            accepted = choices()
            if kind == "NAME":
                keyword = keywords.get(value)
                if keyword is not None and keyword in accepted:
                    kind = keyword
                elif "NAME" not in accepted:
                    raise Unsure
            elif kind not in accepted or "\n" in value:
                raise Unsure
            token = Token(kind, value, pos, line, pos - line_start + 1, line, end - line_start + 1, end)
            feed(token)
            pos = end
        if token is None:
            raise Unsure  # nothing but blanks and comments: lark says what that is
        return interactive.feed_eof(token)
