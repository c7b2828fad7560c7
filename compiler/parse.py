"""Text → lark tree, and lark's errors → labelled diagnostics with spans.

Syntax errors speak the DSL's language (lark `match_examples`). After an error the broken
declaration is blanked out and parsing resumes at the next declaration, so one file reports
all its independent syntax errors.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .diagnostics import MAX_REPORTED, Diagnostic, did_you_mean
from .limits import file_size_problem, tree_problems
from .package_data import package_dir
from .parser_cache import load_parser
from .source import Source, Span
from .to_ast import Reductions, building
from .token_stream import TokenStream

TYPE_CHECKING = False  # typing's names are for annotations only
if TYPE_CHECKING:
    from typing import Protocol

    class _Lexed(Protocol):
        """A token the lexer made: lark's `Token` types its positions optional, the lexer sets them."""

        start_pos: int
        line: int
        column: int


# label -> snippets that end in the same parser state as the mistake
SYNTAX_EXAMPLES: dict[str, list[str]] = {
    "a mount needs a package name": ["preset p { mount }"],
    "a rule needs at least one tool, `package(…)` or `risk(…)` target": [
        "policy p { allow }",
        "policy p { deny when plan_mode }",
        "policy p { ask ; }",
    ],
    "config entries are written `key = value`": [
        "preset p { mount x { a } }",
        "preset p { mount x { a = } }",
        "preset p { mount x { = 1 } }",
    ],
    "a condition needs a fact after `when`": ["preset p { mount x when }", "policy p { deny x when }"],
    "a guard can only deny: write `guard NAME: deny …`": [
        "policy p { guard g: allow x }",
        "policy p { guard g: ask x }",
        "policy p { default ask guard g: allow x }",
    ],
    "a guard needs `:` after its name": ["policy p { guard g deny x }"],
    "a declaration body starts with `{`": ["preset p mount", "host h provides", "scope s parent", "policy p allow"],
    "expected a declaration: `preset`, `host`, `scope` or `policy`": ["mount x", "allow x", "x"],
    "expected `mount`, `present`, `provides` or `}` inside a preset": [
        "preset p { mout x }",
        "preset p { allow x }",
        "preset p { x }",
    ],
    "expected `provides`, `platforms`, `flags`, `roster`, `rows`, `present`, `policy` or `}` inside a host": [
        "host h { mount x }",
        "host h { x }",
    ],
    "expected `parent`, `approval`, `only`, `hide`, `own`, `present` or `}` inside a scope": [
        "scope s { mount x }",
        "scope s { x }",
        "scope s { allow x }",
    ],
    "expected a rule (`allow`, `ask`, `deny`), `guard`, `sandbox`, `approval`, `default` or `}` inside a policy": [
        "policy p { mount x }",
        "policy p { x }",
        "policy p { alow x }",
    ],
    "a comparison needs a value: a string, number, `true`, `false` or a list": [
        "preset p { mount x when platform == }",
        "preset p { mount x when platform == linux }",
    ],
}

BLOCK_LABELS: dict[str | None, str] = {  # (looked up with None too: no block)
    kind: next(label for label in SYNTAX_EXAMPLES if label.endswith(f"inside a {kind}"))
    for kind in ("preset", "host", "scope", "policy")
}

BLOCK_KEYWORDS = {
    None: ("preset", "host", "scope", "policy"),
    "preset": ("mount", "present", "provides"),
    "host": ("provides", "platforms", "flags", "roster", "rows", "present", "policy"),
    "scope": ("parent", "approval", "only", "hide", "own", "present"),
    "policy": ("allow", "ask", "deny", "guard", "sandbox", "approval", "default"),
}
TOP_LEVEL_LABEL = "expected a declaration: `preset`, `host`, `scope` or `policy`"
NAME_WORD = re.compile(r"[A-Za-z0-9_\-*?]+")

DECL_START = re.compile(r"^(preset|host|scope|policy)\b", re.M)


NAME_CHAR = re.compile(r"[A-Za-z0-9_\-*?]")
_current = threading.local()  # the text being lexed, for the keyword check below


class GluedKeyword(Exception):
    """A keyword run straight into more name characters (`presetx`): one unknown word, not two tokens."""

    token: _Lexed

    def __init__(self, token: Token):
        super().__init__(str(token))
        self.token = token  # type: ignore[assignment]  # a lexed token: its positions are set


def _keyword_check(token: Token) -> Token:
    text = getattr(_current, "text", "")
    end = token.end_pos
    if end is not None and end < len(text) and NAME_CHAR.match(text[end]):
        raise GluedKeyword(token)
    return token


@lru_cache(maxsize=1)
def parser() -> Lark:
    """The parser that builds the AST as it parses (to_ast's reductions run at each LALR reduction)."""
    return _parser(transformer=Reductions())


@lru_cache(maxsize=1)
def tree_parser() -> Lark:
    """The same grammar building a parse tree: only to place the diagnostics of an input past a limit."""
    return _parser()


def _parser(**build_options) -> Lark:
    grammar = package_dir("dshc.compiler").joinpath("grammar.lark").read_text(encoding="utf-8")
    # The contextual lexer lets keywords double as names where only a name fits (`approval ask`),
    # but would also split `presetx` into `preset` + `x`; every keyword token is checked for that.
    keywords = {word.upper() for word in re.findall(r'"([a-z]+)"', grammar)}
    # Every token is kept, keywords and punctuation too: a span is read off a node's outermost tokens
    # only where the AST needs one, instead of lark propagating positions to every node.
    runtime_options = {"lexer_callbacks": {name: _keyword_check for name in keywords}, **build_options}
    return load_parser(
        grammar,
        lambda: Lark(
            grammar,
            parser="lalr",
            lexer="contextual",
            maybe_placeholders=False,
            keep_all_tokens=True,
            **runtime_options,
        ),
        runtime_options,
        variant="keep_all_tokens",
    )


@lru_cache(maxsize=1)
def token_stream() -> TokenStream:
    return TokenStream(parser())


def _parse_text(text: str, path: str = "") -> tuple[tuple, bool]:
    """(the declarations' AST, whether the text went past an input limit somewhere)."""
    _current.text = text
    with building(path) as state:
        return token_stream().parse(text)[0], state.over_limit


_EXAMPLE_ERRORS: dict[str, UnexpectedInput] = {}


def _parse_example(text: str) -> tuple:
    """`_parse_text` for the fixed SYNTAX_EXAMPLES: each one's error is computed once per process, not per mistake."""
    found = _EXAMPLE_ERRORS.get(text)
    if found is None:
        try:
            return _parse_text(text)
        except UnexpectedInput as exc:
            found = _EXAMPLE_ERRORS[text] = exc
    raise found.with_traceback(None)


def decode(path: str, data: bytes) -> tuple[Source | None, list[Diagnostic]]:
    too_big = file_size_problem(path, len(data))
    if too_big is not None:
        return None, [too_big]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1  # characters, like every column
        span = Span(path, line, col, line, col + 1)
        return None, [
            Diagnostic("DSH105", f"byte 0x{data[exc.start]:02x} is not valid UTF-8", span, "save the file as UTF-8")
        ]
    # a byte-order mark is an editor's habit, not content
    return Source(path, text.removeprefix("\ufeff")), []


def parse_source(source: Source) -> tuple[tuple | None, list[Diagnostic], list[tuple[int, str]]]:
    """Parse one source; returns (its declarations' AST or None, diagnostics, comments as (line, text))."""
    comments: list[tuple[int, str]] = []
    for number, line in enumerate(source.text.splitlines(), start=1):
        # comments are found by the lexer too; here we only keep them for `fmt`
        if "#" in line:
            comments.extend(_line_comments(number, line))
    if not source.text.strip() or not _has_code(source.text):
        span = Span(source.path, 1, 1, 1, 1)
        return (
            None,
            [
                Diagnostic(
                    "DSH106", "file declares nothing", span, "add a `preset`, `host`, `scope` or `policy` declaration"
                )
            ],
            comments,
        )
    text = source.text
    diags: list[Diagnostic] = []
    while True:
        try:
            decls, over_limit = _parse_text(text, source.path)
            if over_limit and not diags:  # rare: a parse tree places each problem exactly
                diags = tree_problems(source.path, tree_parser().parse(text)) or [
                    Diagnostic("DSH110", "input past a limit", Span(source.path, 1, 1, 1, 1))
                ]
            return (decls if not diags else None), diags, comments
        except (UnexpectedInput, GluedKeyword) as exc:
            diags.append(_syntax_diagnostic(source, text, exc))
            if len(diags) > MAX_REPORTED:
                return None, diags, comments
            rest = _after_broken_declaration(text, exc)
            if rest is None:
                return None, diags, comments
            text = rest


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


def _syntax_diagnostic(source: Source, text: str, exc) -> Diagnostic:
    if isinstance(exc, GluedKeyword):
        start = exc.token.start_pos
        word = NAME_WORD.match(text, start).group(0)  # type: ignore[union-attr]  # the token is name characters
        line, col = exc.token.line, exc.token.column
        block = _enclosing_block(text, start)
        label = BLOCK_LABELS.get(block) or (TOP_LEVEL_LABEL if block is None and _depth(text, start) == 0 else None)
        return Diagnostic(
            "DSH101",
            f"unexpected `{word}`" + (f": {label}" if label else ""),
            Span(source.path, line, col, line, col + len(word)),
            _keyword_hint(word, block),
        )
    line, col = _position(text, exc)
    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""  # type: ignore[index, operator]  # lark sets it: the lexer's position
        span = Span(source.path, line, col, line, col + 1)
        if char == '"':
            return Diagnostic("DSH103", "unterminated string", span, 'close the string with `"` on the same line')
        return Diagnostic("DSH102", f"unexpected character `{char}`", span, None)
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        line, col = text.count("\n") + 1, len(text.rsplit("\n", 1)[-1]) + 1  # the end of the file itself
        span = Span(source.path, line, col, line, col)
        return Diagnostic("DSH104", "unexpected end of file", span, "a block is not closed: add the missing `}`")
    token = exc.token if isinstance(exc, UnexpectedToken) else None
    width = len(str(token)) if token is not None else 1
    span = Span(source.path, line, col, line, col + max(width, 1))
    meant = _probable_mistake(text, token) if token is not None and token.start_pos is not None else None
    if meant is not None:
        return Diagnostic("DSH101", f"unexpected `{token}`: {meant[0]}", span, meant[1])
    label = None
    try:
        label = exc.match_examples(_parse_example, SYNTAX_EXAMPLES, use_accepts=True)
    except Exception:  # noqa: BLE001 - labelling is best effort; the raw error still reports
        label = None
    block = _enclosing_block(text, token.start_pos) if token is not None and token.start_pos is not None else None
    if block in BLOCK_LABELS and (label is None or label in BLOCK_LABELS.values()):
        label = BLOCK_LABELS[block]  # parser states are shared between blocks; the text says which one we are in
    elif label is None and token is not None and token.start_pos is not None and _depth(text, token.start_pos) == 0:
        label = TOP_LEVEL_LABEL
    shown = (
        "input" if token is None else f"`{token}`" if len(token) <= 60 else f"`{token[:60]}…` ({len(token)} characters)"
    )
    message = f"unexpected {shown}" + (f": {label}" if label else "")
    expected = sorted(getattr(exc, "expected", None) or getattr(exc, "accepts", None) or ())
    help_text = _keyword_hint(str(token), block) if token is not None and token.type == "NAME" else None
    if not label and not help_text and expected:
        help_text = "expected one of: " + ", ".join(_terminal_name(t) for t in expected[:8])
    return Diagnostic("DSH101", message, span, help_text)


_FACT_BEFORE = re.compile(r"([A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)*)\s+$")
_TEST_WORDS = ("matches", "in", "all", "any", "contains", "inside", "outside", "is", "==", "!=")
_LOOK_BACK = 512  # characters around an unexpected token read for what was probably meant


def _probable_mistake(text: str, token: Token) -> tuple[str, str] | None:
    """(label, help) for condition mistakes whose parser state alone points elsewhere: the text
    before the unexpected token says what was probably meant."""
    # the few words before it (a fact, a test word): searching the whole text before the token from every
    # start is quadratic in a long word (a 32,000-character comment cost a `check` minutes)
    before = text[max(0, token.start_pos - _LOOK_BACK) : token.start_pos]  # type: ignore[operator]  # the caller checks it
    after = (
        text[token.end_pos : token.end_pos + _LOOK_BACK].split("\n", 1)[0].split("#", 1)[0].strip()
        if token.end_pos is not None
        else ""
    )
    word = before.rstrip().rsplit(None, 1)[-1] if before.strip() else ""
    fact = _FACT_BEFORE.search(before)
    if token.type == "STRING" and word in ("inside", "outside"):
        found = _FACT_BEFORE.search(before[: len(before.rstrip()) - len(word)])
        subject = found.group(1) if found else "args.file_path"
        pattern = token[1:-1].rstrip("/") + "/*"
        negation = "not " if word == "outside" else ""
        return (
            f"`{word}` takes a place (`workspace`), not a path",
            f'to test a folder, write `{negation}{subject} matches "{pattern}"`',
        )
    is_not = re.search(r"([A-Za-z_][\w\-]*(?:\.[A-Za-z_][\w\-]*)*)\s+is\s+not\s+$", before)
    if is_not is not None and token.type == "NAME":  # `is not` lexes `not` as the class name
        return ("`not` goes before the whole test", f"write `not {is_not.group(1)} is {token}`")
    if token.type == "NOT" and fact is not None and after.split(None, 1)[:1] and after.split(None, 1)[0] in _TEST_WORDS:
        return ("`not` goes before the whole test", f"write `not {fact.group(1)} {after}`")
    if token.type == "NAME" and word == "matches":
        return ("`matches` takes a quoted pattern", f'write `matches "{token}"`')
    if word == "length" and token != "(":
        subject = token + (after.split(None, 1)[0] if after.startswith(".") else "")
        return ("`length` takes the argument in parentheses", f"write `length({subject}) <= N`")
    if word in ("all", "any") and token != "in":
        return (f"`{word}` is followed by `in` and a list", f"write `{word} in [{token}]`")
    if token.type == "STRING" and word == "in":
        return ("`in` takes a list", f"write `in [{token}]`, or `== {token}` for one value")
    return None


def _depth(text: str, pos: int) -> int:
    return _scan(text, pos)[0]


def _enclosing_block(text: str, pos: int) -> str | None:
    """The kind of the declaration whose body holds `pos` (None at top level or inside a config)."""
    depth, kind = _scan(text, pos)
    return kind if depth == 1 else None


def _scan(text: str, pos: int) -> tuple[int, str | None]:
    depth, kind, in_string, comment = 0, None, False, False
    for index, char in enumerate(text[:pos]):
        if comment:
            comment = char != "\n"
        elif in_string:
            in_string = char != '"' or text[index - 1] == "\\"
        elif char == "#":
            comment = True
        elif char == '"':
            in_string = True
        elif char == "{":
            if depth == 0:
                found = list(DECL_START.finditer(text, 0, index))
                kind = found[-1].group(1) if found else None
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
    return depth, kind


def _keyword_hint(word: str, block: str | None) -> str | None:
    return did_you_mean(word, BLOCK_KEYWORDS.get(block, ()))


def _terminal_name(terminal: str) -> str:
    try:
        pattern = parser().get_terminal(terminal).pattern
    except KeyError:
        return terminal
    if pattern.type == "str":
        return f"`{pattern.value}`"
    return terminal.lower()


def _after_broken_declaration(text: str, exc) -> str | None:
    """The text to parse next: everything up to the end of the declaration holding the error becomes
    the same number of newlines, so parsing resumes after it with lines and columns unchanged. The part
    before it parsed cleanly, and the whitespace is one token: each retry parses only what is left,
    not the whole file again (a large file with errors near its end costs about one parse)."""
    pos = exc.token.start_pos if isinstance(exc, GluedKeyword) else getattr(exc, "pos_in_stream", None)
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
    return "\n" * text.count("\n", 0, end) + text[end:]
