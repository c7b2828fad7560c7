"""A tree-sitter argument node → `_Word`: its text after quote removal, whether an expansion or a pattern makes
it unknown, and its shape as a file pattern; with the word-level helpers every reading shares."""

from __future__ import annotations

import posixpath

from ..file_pattern import ANY, NAME, ONE
from .._base.frozen import record
from ..patterns import Pattern, compiled
from ..shell_data import Knowledge

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import Any


@record(slots=False)
class _Word:
    text: str
    dynamic: bool = False  # holds `$X`: its value is unknown (it may also split)
    unsafe: str = ""  # why the word makes its command opaque (substitution, `${x@P}`, brace …)
    glob: bool = False  # unquoted * ? [ : pathname expansion
    # may expand to a word starting with `-`: it starts with an expansion or a pattern (`"$F"`, `*`, a
    # file named `--checkpoint-action=…`), or an unquoted expansion in it splits into more words
    optionable: bool = False
    # the word as a file pattern (`file_pattern`): literal runs, a glob's `*` and `[…]` NAME, `?` ONE, an
    # expansion ANY; () when not built from the tree (then an unknown word is ANY)
    shape: tuple = ()


_BRACED = "brace expansion changes the words"  # (`braces._brace_words` reads the plain forms)
_PLAIN_EXPANSION_CHILDREN = {"${", "}", "variable_name", "special_variable_name"}
_SUBSTITUTIONS = {"command_substitution", "process_substitution"}
_DQ_ESCAPES = {"$", "`", '"', "\\", "\n"}


_ASSIGNMENT = Pattern(r"[A-Za-z_][A-Za-z0-9_]*=")
_OPEN = "\x00open"  # an unquoted `[` while a word's shape is collected
_ONLY_NUMBERS = Pattern(r"[\s\d+\-*/%()<>=!&|^~?:,;]*|\$\(\([\s\d+\-*/%()<>=!&|^~?:,]*\)\)")


def _bracketed(shape: list) -> tuple:
    """A word's shape with each unquoted `[` that a later `]` closes, and what lies between, as NAME
    (tree-sitter gives `x[ab]` as four parts); a `[` left open is a literal one."""
    items = [char for item in shape for char in ((item,) if item.startswith("\x00") else item)]
    out, i = [], 0
    while i < len(items):
        if items[i] == _OPEN:
            close = next((j for j in range(i + 2, len(items)) if items[j] == "]"), None)
            if close is not None:  # a run, not one character: a `]` may have been quoted
                out.append(NAME)
                i = close + 1
                continue
            out.append("[")
        else:
            out.append(items[i])
        i += 1
    return tuple(out)


def _glob_shape(raw: str) -> list:
    """An unquoted word's text as file-pattern items: `*` NAME, `?` ONE, `[` an open bracket (`_bracketed`
    makes a closed one NAME), the rest (backslash escapes removed) literal."""
    out, i = [], 0
    while i < len(raw):
        char = raw[i]
        if char == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if char == "[":  # a bracket expression when a `]` closes it, maybe in a later part (`_bracketed`)
            out.append(_OPEN)
            i += 1
            continue
        out.append(NAME if char == "*" else ONE if char == "?" else char)
        i += 1
    return out


def _unquote_plain(raw: str, in_double: bool) -> tuple[str, bool]:
    """Backslash removal of unquoted (or double-quoted) text; (value, had unquoted glob char)."""
    out, glob, i = [], False, 0
    while i < len(raw):
        char = raw[i]
        if char == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            if in_double and nxt not in _DQ_ESCAPES:
                out.append(char)
                i += 1
                continue
            if nxt != "\n":
                out.append(nxt)
            i += 2
            continue
        if not in_double and char in "*?[":
            glob = True
        out.append(char)
        i += 1
    return "".join(out), glob


class _WordBuilder:
    """tree-sitter argument node → _Word; collects the substitutions it holds for the walker, and records
    the bytes it read in `seen` (the walk's, when given) but for those substitutions, which the walk reads."""

    def __init__(self, nested: list, seen: list | None = None):
        self.nested = nested
        self.seen = seen

    def build(self, node) -> _Word:
        if self.seen is not None:
            before = len(self.nested)
            word = self._build(node)
            _read(self.seen, node, self.nested[before:])
            return word
        return self._build(node)

    def _build(self, node) -> _Word:
        parts: list[str] = []
        # `lead`: what the word's first character comes from ("" until some part adds one)
        state: dict[str, Any] = {
            "dynamic": False,
            "unsafe": "",
            "glob": False,
            "lead": "",
            "splits": False,
            "shape": [],
        }
        self._collect(node, parts, state, in_double=False)
        text = "".join(parts)
        if not state["unsafe"] and node.type in ("word", "concatenation"):
            raw = node.text.decode("utf-8", "replace")
            if _brace_expansion(raw):
                state["unsafe"] = _BRACED
        optionable = state["lead"] in ("expansion", "pattern") or state["splits"]
        shape = _bracketed(state["shape"]) if _OPEN in state["shape"] else tuple(state["shape"])
        word = _Word(text, state["dynamic"], state["unsafe"], state["glob"], optionable, shape)
        return _directory_tilde(word) if node.type in ("word", "concatenation") and text[:2] in _DIR_TILDES else word

    @staticmethod
    def _leads(state, lead: str, text: str = "x") -> None:
        if not state["lead"] and text:
            state["lead"] = lead

    def _collect(self, node, parts, state, in_double: bool) -> None:
        kind = node.type
        raw = node.text.decode("utf-8", "replace")
        if kind in ("word", "number", "string_content", "heredoc_content"):
            value, glob = _unquote_plain(raw, in_double)
            parts.append(value)
            state["glob"] |= glob and kind == "word"
            state["shape"] += _glob_shape(raw) if glob and kind == "word" else [value]
            pattern = kind == "word" and not in_double and raw[:1] in ("*", "?", "[")
            self._leads(state, "pattern" if pattern else "literal", value)
        elif kind == "raw_string":
            parts.append(raw[1:-1])
            state["shape"].append(raw[1:-1])
            self._leads(state, "literal", raw[1:-1])
        elif kind == "string":
            for child in node.children:
                if child.type == '"':
                    continue
                self._collect(child, parts, state, in_double=True)
        elif kind == "concatenation":
            for child in node.children:
                self._collect(child, parts, state, in_double)
        elif kind == "simple_expansion":
            parts.append(raw)
            state["dynamic"] = True
            self._expanded(state, in_double)
        elif kind == "expansion":
            parts.append(raw)
            state["dynamic"] = True
            self._expanded(state, in_double)
            if any(c.type not in _PLAIN_EXPANSION_CHILDREN for c in node.children):
                state["unsafe"] = state["unsafe"] or "parameter expansion other than `$NAME` or `${NAME}`"
                self.nested_in(node)
        elif kind == "command_substitution":
            # an expansion whose value is not known, as `$X` is; the command it runs is a segment of its own
            parts.append(raw)
            state["dynamic"] = True
            self._expanded(state, in_double)
            self.nested.append(node)
        elif kind in _SUBSTITUTIONS:  # `<(cmd)`: a file name, read or written, that no rule can place
            parts.append(raw)
            state["dynamic"] = True
            self._expanded(state, in_double)
            state["unsafe"] = state["unsafe"] or "process substitution"
            self.nested.append(node)
        elif kind == "ansi_c_string":
            parts.append(raw)
            state["shape"].append(ANY)
            state["unsafe"] = state["unsafe"] or "ANSI-C quoting `$'…'` is not decoded"
        elif kind == "translated_string":
            parts.append(raw)
            state["shape"].append(ANY)
            state["unsafe"] = state["unsafe"] or 'locale quoting `$"…"` is not decoded'
        elif kind == "arithmetic_expansion":
            parts.append(raw)
            state["shape"].append(ANY)
            state["dynamic"] = True
            self._leads(state, "literal")  # a number: `-1` at most, never an option that runs code
            if _ONLY_NUMBERS.fullmatch(raw) is None:  # variables in arithmetic are evaluated as code
                state["unsafe"] = state["unsafe"] or "arithmetic expansion over variables"
            self.nested_in(node)
        elif kind in ("brace_expression",):
            parts.append(raw)
            state["shape"].append(ANY)
            state["unsafe"] = state["unsafe"] or _BRACED
        elif kind in ("$",):
            parts.append(raw)
            state["shape"].append(raw)
        else:
            parts.append(raw)
            state["shape"].append(ANY)
            state["unsafe"] = state["unsafe"] or f"`{kind}` in a word"
            self.nested_in(node)

    def _expanded(self, state, in_double: bool) -> None:
        state["shape"].append(ANY)
        self._leads(state, "expansion")
        state["splits"] |= not in_double

    def nested_in(self, node) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            for child in current.children:
                if child.type in _SUBSTITUTIONS:
                    self.nested.append(child)
                else:
                    stack.append(child)


def _read(seen: list, node, holes) -> None:
    """Records `node`'s bytes in `seen` as read, but for the substitutions in it (`holes`): the walk reads
    those, and records what it reads of them."""
    start = node.start_byte
    for hole in sorted(holes, key=lambda hole: hole.start_byte):
        if hole.start_byte > start:
            seen.append((start, hole.start_byte))
        start = max(start, hole.end_byte)
    if node.end_byte > start:
        seen.append((start, node.end_byte))


_DIR_TILDES = ("~+", "~-") + tuple(f"~{digit}" for digit in "0123456789")
_DIR_TILDE = Pattern(r"~(?:[+-]?[0-9]*)(?=/|$)")


def _directory_tilde(word: _Word) -> _Word:
    """bash's directory tildes (a word written unquoted, `~+` … at its start): `~+` is the working directory,
    `~-` the previous one (`$OLDPWD`) and `~N`, `~+N`, `~-N` the directory stack's: but for `~+` a directory
    that may be any (`cat ~-/.aws/credentials` read the home's credentials)."""
    found = _DIR_TILDE.match(word.text)
    if found is None:
        return word  # `~-x` is a user's home, as `~x` is
    prefix, rest = found.group(0), word.text[found.end() :]
    shape = list(word.shape) or [word.text]
    if isinstance(shape[0], str) and shape[0].startswith(prefix):
        shape[0] = shape[0][len(prefix) :]
    else:
        shape = [ANY]
    if prefix == "~+":
        return _Word(
            "." + rest,
            word.dynamic,
            word.unsafe,
            word.glob,
            word.optionable,
            tuple(["." + shape[0], *shape[1:]] if isinstance(shape[0], str) else shape),
        )
    return _Word(
        word.text,
        True,
        word.unsafe,
        word.glob,
        word.optionable,
        tuple(x for x in (ANY, *shape) if x != ""),
    )


def _brace_expansion(raw: str) -> bool:
    """An unquoted `{a,b}` or `{1..3}` in a word's source text."""
    depth, quote, seen_open, escaped = 0, "", False, False
    for index, char in enumerate(raw):
        if escaped:
            escaped = False
            continue
        if char == "\\" and quote != "'":
            escaped = True
        elif quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "{" and not (index and raw[index - 1] == "$"):
            depth += 1
            seen_open = True
        elif char == "}" and depth:
            depth -= 1
        elif seen_open and depth and (char == "," or raw.startswith("..", index)):
            return True
    return False


def _unknown(word: _Word) -> bool:
    """A word whose text is not what runs: an expansion, a substitution, or a pattern of file names (it
    may be several words, and the words after it move)."""
    return word.dynamic or bool(word.unsafe) or word.glob


def _is_name(text: str) -> bool:
    return bool(text) and (text[0].isalpha() or text[0] == "_") and all(c.isalnum() or c == "_" for c in text)


def _may_be_option(word: _Word) -> str:
    kind = "a pattern of file names" if word.glob and not word.dynamic else "an expansion"
    return f"`{word.text}` is {kind}, which may be an option"


def _filled(words: list[_Word], holes, optionable: bool = True) -> list[_Word]:
    """`words` with each one that holds a replacement string made dynamic: its value comes from input
    (which may start with `-`, unless `optionable` is False)."""
    if not holes:
        return words
    return [
        _Word(w.text, True, w.unsafe, w.glob, optionable or w.optionable) if any(h in w.text for h in holes) else w
        for w in words
    ]


def _names_stdin(path: str) -> bool:
    """Whether a program file named `path` is standard input (or another open descriptor): `/dev/stdin`,
    `/dev/fd/0`, `/proc/self/fd/0`, however spelled (`/dev//stdin`, `../../dev/stdin`)."""
    normal = posixpath.normpath(path)
    return normal.endswith("dev/stdin") or compiled(r"(?:^|/)(?:dev|proc/[^/]+)/fd/\d+").search(normal) is not None


def _program_name(word: str, data: Knowledge) -> tuple[str, bool]:
    """(normalised program name, whether it runs what the name says): `/bin/../bin/rm` → (`rm`, True)."""
    if "/" not in word:
        return word, True
    normal = posixpath.normpath(word)
    directory, base = posixpath.split(normal)
    return base or word, directory in data.trusted_dirs
