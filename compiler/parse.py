"""Text → lark tree, and lark's errors → labelled diagnostics with spans.

Syntax errors speak the DSL's language (lark `match_examples`). After an error the broken
declaration is blanked out and parsing resumes at the next declaration, so one file reports
all its independent syntax errors.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .diagnostics import MAX_REPORTED, Diagnostic
from .source import Source, Span

# label -> snippets that end in the same parser state as the mistake
SYNTAX_EXAMPLES: dict[str, list[str]] = {
    "a mount needs a package name": ["preset p { mount }", "preset p { mount when platform == \"linux\" }"],
    "a rule needs at least one tool, `package(…)` or `risk(…)` target": [
        "policy p { allow }", "policy p { deny when plan_mode }", "policy p { ask ; }"],
    "config entries are written `key = value`": [
        "preset p { mount x { a } }", "preset p { mount x { a = } }", "preset p { mount x { = 1 } }"],
    "a condition needs a fact after `when`": ["preset p { mount x when }", "policy p { deny x when }"],
    "a guard can only deny: write `guard NAME: deny …`": [
        "policy p { guard g: allow x }", "policy p { guard g: ask x }"],
    "a guard needs `:` after its name": ["policy p { guard g deny x }"],
    "a declaration body starts with `{`": [
        "preset p mount", "host h provides", "scope s parent", "policy p allow"],
    "expected a declaration: `preset`, `host`, `scope` or `policy`": [
        "mount x", "allow x", "presets p {}", "x"],
    "expected `mount`, `present`, `provides` or `}` inside a preset": [
        "preset p { mout x }", "preset p { allow x }", "preset p { x }"],
    "expected `provides`, `platforms`, `flags`, `roster`, `rows`, `present`, `policy` or `}` inside a host": [
        "host h { mount x }", "host h { x }"],
    "expected `parent`, `approval`, `only`, `hide`, `own`, `present` or `}` inside a scope": [
        "scope s { mount x }", "scope s { x }", "scope s { allow x }"],
    "expected a rule (`allow`, `ask`, `deny`), `guard`, `sandbox`, `approval`, `default` or `}` inside a policy": [
        "policy p { mount x }", "policy p { x }", "policy p { alow x }"],
    "a comparison needs a value: a string, number, `true`, `false` or a list": [
        "preset p { mount x when platform == }", "preset p { mount x when platform == linux }"],
}

DECL_START = re.compile(r"^(preset|host|scope|policy)\b", re.M)


@lru_cache(maxsize=1)
def parser() -> Lark:
    grammar = resources.files("dshc.compiler").joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def decode(path: str, data: bytes) -> tuple[Source | None, list[Diagnostic]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        span = Span(path, line, col, line, col + 1)
        return None, [Diagnostic("DSH105", f"byte 0x{data[exc.start]:02x} is not valid UTF-8", span,
                                 "save the file as UTF-8")]
    return Source(path, text), []


def parse_source(source: Source) -> tuple[Tree | None, list[Diagnostic], list[tuple[int, str]]]:
    """Parse one source; returns (tree or None, diagnostics, comments as (line, text))."""
    comments: list[tuple[int, str]] = []
    for number, line in enumerate(source.text.splitlines(), start=1):
        # comments are found by the lexer too; here we only keep them for `fmt`
        comments.extend(_line_comments(number, line))
    if not source.text.strip() or not _has_code(source.text):
        span = Span(source.path, 1, 1, 1, 1)
        return None, [Diagnostic("DSH106", "file declares nothing", span,
                                 "add a `preset`, `host`, `scope` or `policy` declaration")], comments
    text = source.text
    diags: list[Diagnostic] = []
    while True:
        try:
            tree = parser().parse(text)
            return (tree if not diags else None), diags, comments
        except UnexpectedInput as exc:
            diags.append(_syntax_diagnostic(source, text, exc))
            if len(diags) > MAX_REPORTED:
                return None, diags, comments
            blanked = _blank_broken_declaration(text, exc)
            if blanked is None:
                return None, diags, comments
            text = blanked


def _has_code(text: str) -> bool:
    return any(line.split("#", 1)[0].strip() for line in text.splitlines())


def _line_comments(number: int, line: str) -> list[tuple[int, str]]:
    # a `#` inside a string is not a comment
    in_string = escaped = False
    for index, char in enumerate(line):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "#":
            return [(number, line[index:].rstrip())]
    return []


def _position(text: str, exc: UnexpectedInput) -> tuple[int, int]:
    line = getattr(exc, "line", None)
    col = getattr(exc, "column", None)
    if isinstance(line, int) and line > 0 and isinstance(col, int) and col > 0:
        return line, col
    lines = text.splitlines() or [""]
    return len(lines), len(lines[-1]) + 1


def _syntax_diagnostic(source: Source, text: str, exc: UnexpectedInput) -> Diagnostic:
    line, col = _position(text, exc)
    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""
        span = Span(source.path, line, col, line, col + 1)
        if char == '"':
            return Diagnostic("DSH103", "unterminated string", span, "close the string with `\"` on the same line")
        return Diagnostic("DSH102", f"unexpected character `{char}`", span, None)
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        span = Span(source.path, line, col, line, col)
        return Diagnostic("DSH104", "unexpected end of file", span, "a block is not closed: add the missing `}`")
    token = exc.token if isinstance(exc, UnexpectedToken) else None
    width = len(str(token)) if token is not None else 1
    span = Span(source.path, line, col, line, col + max(width, 1))
    label = None
    try:
        label = exc.match_examples(parser().parse, SYNTAX_EXAMPLES, use_accepts=True)
    except Exception:  # noqa: BLE001 - labelling is best effort; the raw error still reports
        label = None
    shown = f"`{token}`" if token is not None else "input"
    message = f"unexpected {shown}" + (f": {label}" if label else "")
    expected = sorted(getattr(exc, "expected", None) or getattr(exc, "accepts", None) or ())
    help_text = None
    if not label and expected:
        help_text = "expected one of: " + ", ".join(_terminal_name(t) for t in expected[:8])
    return Diagnostic("DSH101", message, span, help_text)


def _terminal_name(terminal: str) -> str:
    try:
        pattern = parser().get_terminal(terminal).pattern
    except KeyError:
        return terminal
    if pattern.type == "str":
        return f"`{pattern.value}`"
    return terminal.lower()


def _blank_broken_declaration(text: str, exc: UnexpectedInput) -> str | None:
    """Replace the declaration holding the error with spaces (newlines kept) so parsing resumes."""
    pos = getattr(exc, "pos_in_stream", None)
    if pos is None and isinstance(exc, UnexpectedToken):
        pos = exc.token.start_pos
    if pos is None or pos >= len(text):
        return None
    starts = [m.start() for m in DECL_START.finditer(text)]
    begin = max((s for s in starts if s <= pos), default=0)
    end = min((s for s in starts if s > pos), default=None)
    if end is None:
        return None
    if not text[begin:end].strip():
        return None
    return text[:begin] + re.sub(r"[^\n]", " ", text[begin:end]) + text[end:]


def token_span(path: str, token: Token) -> Span:
    return Span(path, token.line, token.column, token.end_line, token.end_column)
