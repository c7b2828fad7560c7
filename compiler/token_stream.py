"""Feeding lark's LALR parser from one regular expression: the fast path of every parse.

lark's contextual lexer spends most of a parse's time per token (a scanner per parser state, a line
counter object, a callback per keyword). Here the text is cut by one alternation of the grammar's
terminals, in the order lark's own lexer tries them (the blanks before a token skipped in the same
match), and each token is fed to lark's parser: the LALR step (shift, or reduce through lark's
callbacks until the token shifts) runs here on the parser's own stacks, as `ParserState.feed_token`
runs it, without a call per token; a rule that has reduced often runs its callback's version written
for its fixed children where the callback offers one (`_reductions`). A word is a keyword where the
parser's state accepts that keyword, else a NAME — what the contextual lexer decides. At the first token where the lexers could
differ (a terminal the state does not accept, a word it cannot take: in practice, a syntax error)
lark's own lexer takes over from that very position and parser state, so whatever follows — the
rest of the AST or the exact syntax error — is lark's. Every token fed before is one lark's lexer
would have made in the same state (tests/test_token_stream.py compares both).
"""

from __future__ import annotations

import re

from lark import Lark, Token
from lark.exceptions import UnexpectedToken
from lark.parse_tree_builder import ExpandSingleChild
from lark.parsers.lalr_analysis import Shift


class TokenStream:
    def __init__(self, parser: Lark):
        self.parser = parser
        name = re.compile(parser.get_terminal("NAME").pattern.to_regexp())
        # lark's BasicLexer order: the first alternative that matches is the token
        terminals = sorted(
            parser.terminals, key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name)
        )
        self.keywords: dict[str, str] = {}  # "allow" -> "ALLOW": words NAME matches too
        alternatives = []
        for terminal in terminals:
            if terminal.pattern.type == "str" and name.fullmatch(terminal.pattern.value):
                self.keywords[terminal.pattern.value] = terminal.name
            else:
                alternatives.append(f"(?P<{terminal.name}>{terminal.pattern.to_regexp()})")
        self.ignored = frozenset(parser.lexer_conf.ignore)
        # the blanks before a token are skipped in the token's own match (no terminal starts with a blank;
        # blanks at the very end still match as WS, the regex giving back what the prefix took)
        blanks = f"(?:{parser.get_terminal('WS').pattern.to_regexp()})?" if "WS" in self.ignored else ""
        self.pattern = re.compile(blanks + "(?:" + "|".join(alternatives) + ")")
        self._actions: dict | None = None
        # the LALR table read now, with the expression: whoever makes a token stream parses, and the
        # grammar's tables are the library's to prepare, not the first parse's
        self._table(parser.parse_interactive("").parser_state.parse_conf)

    def parse(self, text: str):
        """What `parser.parse(text)` returns or raises."""
        interactive = self.parser.parse_interactive(text)
        try:
            return self._feed(interactive, text)
        except UnexpectedToken as exc:
            if exc.interactive_parser is None:  # refused by the parser while we fed it: attached as lark does
                exc.interactive_parser = interactive
            raise

    def _feed(self, interactive, text: str):
        # what the interactive parser's choices() and feed_token() do, without a call per token
        state = interactive.parser_state
        table, feed = self._table(state.parse_conf), state.feed_token
        state_stack, value_stack = state.state_stack, state.value_stack
        new_token = str.__new__
        match, keywords, ignored = self.pattern.match, self.keywords, self.ignored
        pos, line, line_start, size = 0, 1, 0, len(text)
        # the next line end at or after `pos`: a token holds none, so only blanks and comments cross one —
        # one comparison a token instead of counting the line ends in the blanks before it
        line_end = _line_end(text, 0)
        token = None
        while pos < size:
            found = match(text, pos)  # blanks before a token are part of its match
            if found is None:
                return self._resume(interactive, pos, line, line_start, token)
            kind: str = found.lastgroup  # type: ignore[assignment]  # every alternative is a named group
            start, end = found.start(kind), found.end()
            if kind in ignored:
                if end > line_end:
                    line, line_start, line_end = _lines_crossed(text, pos, end, line)
                pos = end
                continue
            value = text[start:end]
            accepted = table[state_stack[-1]]
            if kind == "NAME":
                keyword = keywords.get(value)
                if keyword is not None and keyword in accepted:
                    kind = keyword
                elif "NAME" not in accepted:
                    return self._resume(interactive, pos, line, line_start, token)
            elif kind not in accepted or "\n" in value:
                return self._resume(interactive, pos, line, line_start, token)
            if start > line_end:
                line, line_start, line_end = _lines_crossed(text, pos, start, line)
            token = new_token(Token, value)  # lark's Token with its slots set here: its constructor costs 3x
            token.type, token.start_pos, token.value, token.line, token.end_line = kind, start, value, line, line
            token.column, token.end_column, token.end_pos = start - line_start + 1, end - line_start + 1, end
            shift, target = accepted[kind]
            while True:  # ParserState.feed_token's step, on lark's own stacks: reduce until the token shifts
                if shift:
                    state_stack.append(target)
                    value_stack.append(token)
                    break
                popped, goto, callback = target
                if callback is None:  # one value handed up as it is: only the state changes
                    del state_stack[-1]
                else:
                    if popped is not None:
                        children = value_stack[popped]
                        del state_stack[popped]
                        del value_stack[popped]
                    else:
                        children = []
                    value_stack.append(callback(children))
                following, row = goto[state_stack[-1]]
                state_stack.append(following)
                action = row.get(kind)
                if action is None:  # LALR may reduce before it refuses: lark raises
                    feed(token)
                    break
                shift, target = action
            pos = end
        if token is None:
            return self._resume(interactive, pos, line, line_start, token)  # blanks and comments only
        return interactive.feed_eof(token)

    def _table(self, conf) -> dict:
        """lark's LALR table, read once per parser: state -> symbol -> (True, next state) to shift, or
        (False, the rule's reduce action: [the slice it pops, the goto of the nonterminal it makes:
        state below -> (next state, its row), what it runs (`_reductions`)]) to reduce."""
        if self._actions is None:
            callbacks = conf.callbacks
            if any(isinstance(key, str) for key in callbacks):  # a terminal's callback: lark's step would run it
                raise RuntimeError("the token stream does not run parser callbacks on terminals")
            states = conf.parse_table.states
            gotos: dict[str, dict] = {}  # nonterminal -> state -> the state after it (lark's shift on it)
            for state, row in states.items():
                for symbol, (action, arg) in row.items():
                    if action is Shift:
                        gotos.setdefault(symbol, {})[state] = arg
            reductions = _reductions(callbacks, gotos)
            actions = {
                state: {
                    symbol: (True, arg) if action is Shift else (False, reductions[arg])
                    for symbol, (action, arg) in row.items()
                }
                for state, row in states.items()
            }
            for goto in gotos.values():  # the state after a reduction, with its row: one lookup less a reduction
                for below, following in goto.items():
                    goto[below] = (following, actions[following])
            self._actions = actions  # published whole: a thread parsing meanwhile never reads a goto half made
        return self._actions

    @staticmethod
    def _resume(interactive, pos: int, line: int, line_start: int, last: Token | None):
        """lark's lexer goes on from `pos`: its position, line and last token set to what its own
        scan would have reached, the parser state being the same."""
        lexer_state = interactive.lexer_thread.state
        counter = lexer_state.line_ctr
        counter.char_pos, counter.line, counter.line_start_pos = pos, line, line_start
        counter.column = pos - line_start + 1
        lexer_state.last_token = last
        return interactive.resume_parse()


def _lines_crossed(text: str, pos: int, end: int, line: int) -> tuple[int, int, int]:
    """The blanks from `pos` to `end` hold line ends: (the line at `end`, where it starts, where it ends)."""
    return line + text.count("\n", pos, end), text.rindex("\n", pos, end) + 1, _line_end(text, end)


def _line_end(text: str, pos: int) -> int:
    """Where the line holding `pos` ends: its line end, or the end of the text."""
    found = text.find("\n", pos)
    return found if found >= 0 else len(text)


def _reductions(callbacks: dict, gotos: dict) -> dict:
    """lark rule -> its reduce action here: [the slice of the stacks it pops (None: nothing), its
    nonterminal's goto (state below -> (next state, its row)), what it runs]. It runs None when lark
    hands the one value up as it is, else lark's callback — which, where the callback offers it
    (`specialise(layout)`), gives way after WARM_REDUCTIONS runs to its version for the rule's fixed
    children: each a token of the named terminal, or None for a nonterminal whose value is always
    what such a callback builds (never a token handed up, never lark's own tree).
    Made on use, not ahead: making one costs about as much as a hundred reductions save, and most
    texts are small. One list per rule, shared by every state that reduces it, so the swap is seen
    everywhere."""
    builds = _always_built(callbacks)
    actions = {}
    for rule, callback in callbacks.items():
        length = len(rule.expansion)
        popped = slice(-length, None) if length else None  # made once, not at every reduction
        action = actions[rule] = [popped, gotos.get(rule.origin.name, {}), callback]
        if _passes_through(rule, callback):
            action[2] = None
            continue
        specialise = getattr(callback, "specialise", None)
        if specialise is not None and all(symbol.is_term or symbol.name in builds for symbol in rule.expansion):
            layout = tuple(symbol.name if symbol.is_term else None for symbol in rule.expansion)
            action[2] = _warming(action, callback, specialise, layout)
    return actions


WARM_REDUCTIONS = 128


def _warming(action: list, callback, specialise, layout: tuple):
    """`callback`, until it has run WARM_REDUCTIONS times: then the action runs its specialised version."""
    left = WARM_REDUCTIONS

    def reduce(children):  # threads may race on the count: whichever runs, both build the same values
        nonlocal left
        left -= 1
        if not left:
            action[2] = specialise(layout) or callback
        return callback(children)

    return reduce


def _always_built(callbacks: dict) -> set:
    """The nonterminals whose every rule's value is built by a callback that offers `specialise` (through
    lark's child filters), or handed up unchanged from another such nonterminal."""
    rules: dict[str, list] = {}
    for rule, callback in callbacks.items():
        rules.setdefault(rule.origin.name, []).append((rule, callback))
    built: set = set()
    grown = True
    while grown:  # least fixed point: a chain of hand-ups only counts once its end is known
        grown = False
        for name, alternatives in rules.items():
            if name not in built and all(_builds(rule, callback, built) for rule, callback in alternatives):
                built.add(name)
                grown = True
    return built


def _builds(rule, callback, built: set) -> bool:
    if _passes_through(rule, callback):
        symbol = rule.expansion[0]
        return not symbol.is_term and symbol.name in built
    while callback is not None:
        if getattr(callback, "specialise", None) is not None:
            return True
        if type(callback) is ExpandSingleChild and (
            len(rule.expansion) < 2 or any(symbol.name.startswith("_") for symbol in rule.expansion)
        ):
            return False  # it may hand a single child up as it is
        callback = getattr(callback, "node_builder", None)
    return False


def _passes_through(rule, callback) -> bool:
    """lark reduces `rule` to its one child unchanged (ExpandSingleChild over one symbol)."""
    return len(rule.expansion) == 1 and type(callback) is ExpandSingleChild
