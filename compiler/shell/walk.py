"""The walk: the only recursion over a command line's tree (commands, substitutions, `sh -c` strings), with
an explicit stack; each kind of node is read by the mixin that knows it."""

from __future__ import annotations

import posixpath
from _thread import allocate_lock  # not `threading`: a hook process loads neither it nor what it imports

from ..bash_grammar import bash_parser
from .._base.memo import once
from ..shell_data import Knowledge
from .braces import _brace_words
from .directories import _cd_target, _Directories, _head_cd
from .files import _FileEffects
from .interpreters import _Interpreters
from .options import _getopt
from .programs import _Programs
from .records import MAX_DEPTH, MAX_SEGMENTS, Segment, _Opaque, _Unparseable
from .redirections import _own_redirections, _REDIRECT_SCOPES, _redirections, _Redirections
from .runners import _Runners
from .variables import _name_runs_code, _Variables, _variable_name_words
from .words import _BRACED, _program_name, _Word, _WordBuilder

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import Any

_parser = once(bash_parser)  # the process's one Bash parser
# a tree-sitter parser is one parse at a time (its C state is the parse's): threads deciding take turns
_PARSING = allocate_lock()


class _Found:
    """A segment and its place in the command (segments are reported in that order)."""

    __slots__ = ("order", "segment")

    def __init__(self, order: tuple, segment: Segment) -> None:
        self.order, self.segment = order, segment


class _Walker(_Variables, _Redirections, _Programs, _Runners, _Interpreters, _FileEffects, _Directories):
    """Walks the tree with an explicit stack (depth is user-controlled), collecting segments; the mixins
    read the nodes and programs it meets and record on its state (`files`, `trees`, `cd_targets` …)."""

    def __init__(self, data: Knowledge, plain_words):
        self.data = data
        self.plain_words = plain_words  # a line of plain words → (offset, words), read without tree-sitter
        self.found: list[_Found] = []
        # (kind, path, order, file pattern items or () for a name) before anchoring
        self.files: list[tuple] = []
        self.file_reasons: dict[int, str] = {}  # position in `files` -> why that access is any file
        self.trees: set[tuple] = set()  # the entries of `files` that read a whole tree (`FileAccess.tree`)
        self.chdirs = 0  # how many times the line changes directory (`cd`, `pushd`, `git -C`, `env -C` …)
        self.head_cd = None  # DIR when the line is `cd DIR && …`: every later command runs in DIR
        # each change of directory's literal target, in text order ("": back to an earlier one, `popd`; None:
        # not known); `line`: the command's text, read for what stops following them (`_UNFOLLOWED`)
        self.cd_targets: list[str | None] = []
        self.line = b""
        self.seq = 0
        self.runners = 0  # how many runners (`uv run`) the command being read is inside
        self.redirects: tuple[str, ...] = ()  # the redirections of the command being read, as written
        self.around: tuple = ()  # the redirections of the statements around the next command (`walk`)
        self.seen: list[tuple[int, int]] = []  # the byte ranges of the line being walked that its readings read

    def emit(self, order, argv, opaque=False, reason="", hazard="", literal=None, wraps=None, deny_only=False) -> None:
        self.seq += 1
        if len(self.found) >= MAX_SEGMENTS:
            raise _Unparseable("too many segments")
        base = ""
        if argv and "/" in argv[0] and not opaque:  # kept as written: only system programs are renamed
            base = posixpath.basename(posixpath.normpath(argv[0]))
        # a command sorts before what is nested in it (nested keys continue with a byte offset ≥ 0)
        self.found.append(
            _Found(
                (*order, -1, self.seq),
                Segment(
                    tuple(argv),
                    opaque,
                    reason,
                    hazard,
                    literal,
                    wraps,
                    base,
                    deny_only or self.runners > 0,
                    self.redirects,
                ),
            )
        )

    def walk(self, source: bytes, depth: int, base: tuple) -> None:
        plain = self.plain_words(source)
        if plain is not None:  # what tree-sitter makes of it is known: one command of these words
            start, texts = plain
            self.simple_command([_Word(text) for text in texts], depth, (*base, start))
            return
        parser = _parser()
        with _PARSING:
            tree = parser.parse(source)
        if tree.root_node.has_error:
            raise _Unparseable("the command does not parse")
        if _skipped_text(tree.root_node, source):
            raise _Unparseable("the parser skipped part of the command")
        if depth == 0:
            self.head_cd = _head_cd(tree.root_node)
            self.line = source
        self.seen = []  # the byte ranges of this line the readings read (`nested_shell` keeps the outer's)
        # each entry carries the redirections of the statements around it that apply there, nearest first
        # (`_redirections`), gathered on the way down: asking a node's ancestors is quadratic in tree-sitter
        stack: list[tuple[Any, int, tuple, tuple]] = [(tree.root_node, depth, base, ())]
        while stack:
            node, level, order, around = stack.pop()
            here = (*order, node.start_byte)
            kind = node.type
            if kind == "command":
                nested: list = []
                self.around = around
                self.command(node, level, here, nested)
                stack.extend((n, level + 1, (*here, n.start_byte), ()) for n in nested if self._deeper(level))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                nested = []
                self.redirect(node, here, nested)
                stack.extend((n, level + 1, (*here, n.start_byte), ()) for n in nested if self._deeper(level))
            elif kind in ("variable_assignment", "declaration_command", "unset_command"):
                nested = []
                self.assignment(node, here, nested)
                stack.extend((n, level + 1, (*here, n.start_byte), ()) for n in nested if self._deeper(level))
            elif kind == "function_definition":
                name = next((c for c in node.children if c.type == "word"), node.children[0])
                self.emit(
                    here,
                    ["function", name.text.decode("utf-8", "replace")],
                    True,
                    "a function definition changes what a later word runs",
                )
                body = [c for c in node.children if c.is_named and c.start_byte > name.start_byte]
                self.seen += [(c.start_byte, c.end_byte) for c in node.children if c not in body]
                stack.extend((c, level, order, around) for c in reversed(body))
            elif kind in ("test_command", "arithmetic_expansion", "c_style_for_statement") or (
                kind == "compound_statement" and node.children and node.children[0].type == "(("
            ):
                nested = []
                loop_body = node.children[-1] if kind == "c_style_for_statement" else None
                self.expression(node, here, nested, loop_body)
                stack.extend((n, level + 1, (*here, n.start_byte), ()) for n in nested if self._deeper(level))
                if loop_body is not None:
                    stack.append((loop_body, level, order, around))
            elif kind in _STATEMENTS:
                nested = []
                parts = self.statement(node, nested)
                inner = (
                    (_own_redirections(node), *around)
                    if kind == "redirected_statement"
                    else ()
                    if kind in _REDIRECT_SCOPES
                    else around
                )
                stack.extend((n, level + 1, (*here, n.start_byte), ()) for n in nested if self._deeper(level))
                stack.extend((c, level, order, inner) for c in reversed(parts))
            # any other node is read by no case: its text stays unread, which `_unread` reports
        unread = _unread(tree.root_node, self.seen)
        if unread is not None:
            start, end = unread
            excerpt = source[start:end].decode("utf-8", "replace")
            excerpt = excerpt if len(excerpt) <= 60 else excerpt[:60] + "…"
            self.emit((*base, start), [], True, f"text at byte {start} is not analysed: `{excerpt}`")

    def statement(self, node, nested) -> list:
        """The parts of a statement made of others (`_STATEMENTS`) that the walk walks in turn. Its own tokens
        (keywords, operators, parentheses) are read here, and so are the words bash expands in it but does not
        run: a loop's variable and values, a case's subject and patterns (their substitutions go to `nested`)."""
        builder = _WordBuilder(nested, self.seen)
        kind = node.type
        words = kind in ("for_statement", "case_statement", "case_item")  # (until the body or the items)
        parts = []
        for child in node.children:
            if child.type in ("do_group", "compound_statement", "case_item"):
                words = False
            if not child.is_named:
                self.seen.append((child.start_byte, child.end_byte))
                words = words and not (kind == "case_item" and child.type == ")")
            elif child.type == "comment":
                continue
            elif words and child.type == "variable_name":
                self.seen.append((child.start_byte, child.end_byte))
            elif words:
                builder.build(child)
            else:
                parts.append(child)
        return parts

    @staticmethod
    def _deeper(level: int) -> bool:
        if level + 1 > MAX_DEPTH:
            raise _Unparseable("nesting too deep")
        return True

    def command(self, node, depth: int, order, nested) -> None:
        around = self.around  # (read first: a command line in a prefix is walked in turn, setting it anew)
        builder = _WordBuilder(nested, self.seen)
        words: list[_Word] = []
        env_unsafe = env_code = ""
        command_lines = []  # (variable, its value) of prefixes whose value is a command line (`PAGER=…`)
        env_files = []  # (variable, its value) of prefixes whose value names a file written (`GIT_TRACE=/x`)
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                name = child.children[0].text.decode("utf-8", "replace")
                # the name and `=` (a subscript's `$(…)` is not followed: `a[$(cmd)]=1 x` stays unread)
                self.seen += [(c.start_byte, c.end_byte) for c in child.children[:2] if c.type != "subscript"]
                values = [builder.build(value) for value in child.children[2:]]
                if self.data.env_code(name):
                    env_code = (
                        env_code
                        or f"the environment prefix `{name}=` hands the program code or options the rules cannot read"
                    )
                elif self.data.env_hazard(name.split("[")[0]):
                    env_unsafe = env_unsafe or f"the environment prefix `{name}=` changes what runs"
                value = _Word(
                    "".join(v.text for v in values),
                    any(v.dynamic for v in values),
                    next((v.unsafe for v in values if v.unsafe), ""),
                )
                if name in self.data.env_command_names:
                    command_lines.append((name, value))
                if name in self.data.env_written:
                    env_files.append((name, value))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                self.redirect(child, order, nested)
            elif kind == "command_name":
                words += _expanded(builder, child.children[0]) if child.children else [_Word("")]
            elif kind in ("comment",):
                continue
            else:
                words += _expanded(builder, child)
        if words:  # an assignment alone is `assignment`'s
            for variable, value in env_files:
                self.env_file_written(variable, value, order)
            for variable, value in command_lines:
                try:
                    self.command_line_value(variable, value, depth, (*order, 0))
                except _Opaque as exc:
                    self.emit(order, [f"{variable}={value.text}"], True, exc.reason)
        outer, self.redirects = self.redirects, _redirections(node, around)
        try:
            if words and env_code:
                self.emit(order, [w.text for w in words], True, env_code)
                return
            self.simple_command(words, depth, order, env_unsafe)
        finally:
            self.redirects = outer

    def command_line_value(self, variable: str, value: _Word, depth: int, order) -> None:
        """A variable or setting whose value a program runs as a shell command line (`PAGER`, git's
        `core.pager`): the line is read as `sh -c` would read it, so a deny of what it runs decides."""
        if value.dynamic or value.unsafe:
            raise _Opaque(f"`{variable}` is a command line that is an expansion")
        # less runs LESSOPEN's `|cmd %s`, git a credential helper's or alias's `!cmd`
        self.nested_shell(value.text.lstrip("|!"), depth, order)

    def simple_command(self, words: list[_Word], depth: int, order, env_unsafe: str = "") -> None:
        if not words:
            return
        try:
            self.simple(words, depth, order, env_unsafe)
        except _Opaque as exc:
            self.emit(order, [w.text for w in words], True, exc.reason)

    def simple(self, words: list[_Word], depth: int, order, env_hazard: str = "") -> None:
        data = self.data
        for index, word in enumerate(words):
            if word.unsafe:
                raise _Opaque(word.unsafe)
        head = words[0]
        if head.dynamic:
            raise _Opaque("command name is an expansion")
        if head.glob:
            raise _Opaque("command name is subject to pathname expansion")
        name, trusted = _program_name(head.text, data)
        # `/usr/bin/git` is `git`; `.venv/bin/python` stays as written (allows must name it), and
        # its basename still meets denies (`Segment.base`)
        argv = [name if trusted else head.text] + [w.text for w in words[1:]]
        literal = next((i for i, w in enumerate(words) if w.dynamic), None)
        hazard = env_hazard
        if name in data.opaque_builtins:
            raise _Opaque(data.opaque_builtins[name])
        if name in data.assigning_programs and any(data.env_hazard(w.text.partition("=")[0]) for w in words[1:]):
            raise _Opaque(f"`{name}` assigns a variable that changes what later commands run")
        named = data.variable_names.get(name)
        if named is not None:  # `read 'a[$(cmd)]'`, `printf -v "$v"`: a name bash reads may run code
            for word in _variable_name_words(words, named):
                reason = _name_runs_code(word, data, name in data.assigning_programs)
                if reason:
                    raise _Opaque(f"`{name}`: {reason}")
        if name in data.chdir_programs:
            self.changes_directory(_cd_target(name, words))
        wrapper = data.wrappers.get(name)
        if wrapper is not None:
            if self.wrapper(name, wrapper, words, argv, depth, order, hazard, literal):
                return
        if name in data.shells:
            self.shell(words, argv, depth, order, hazard)
            return
        interpreter = data.interpreter(name)
        if interpreter is not None:
            self.interpreter(name, interpreter, words, argv, order, hazard, literal)
            return
        row = data.programs.get(name)
        if (
            row is not None
            and row.remote_command is not None
            and self.remote(name, row, words, argv, depth, order, hazard, literal)
        ):
            return
        if row is not None and row.leading is not None and len(words) > 1 and words[1].text.startswith("-"):
            # `git -C x push` is seen as itself and as `git push`: a deny or ask of either decides, and an
            # allow of the whole line covers it (`git -C x push` is not the `git push` an allow of that names).
            # Given only options that move where it runs or change nothing it does (`transparent_leading`),
            # the allow of `git push` covers it too, and the directory it moves to is read (`git -C ~/.ssh …`)
            at, leading = _getopt(words, 1, row.leading, name)
            if 1 < at < len(words):
                own_hazard = hazard or self.program_hazard(name, words[:at], order, depth)
                transparent = not own_hazard and all(option in row.transparent_leading for option, _ in leading)
                self.emit(order, argv, hazard=own_hazard, literal=literal, wraps=at, deny_only=transparent)
                if transparent:
                    self.files += [("read", value, order, ()) for option, value in leading if option in row.chdir]
                self.runners += not transparent
                try:
                    self.simple([head, *words[at:]], depth, (*order, at), env_hazard)
                finally:
                    self.runners -= not transparent
                return
        hazard = hazard or self.program_hazard(name, words, order, depth)
        self.emit(order, argv, hazard=hazard, literal=literal)

    def nested_shell(self, text: str, depth: int, order) -> None:
        if depth + 1 > MAX_DEPTH:
            raise _Unparseable("nesting too deep")
        outer = self.seen  # the nested line's bytes are its own; the outer line's reading goes on after it
        try:
            self.walk(text.encode("utf-8", "surrogatepass"), depth + 1, order)
        finally:
            self.seen = outer


def _expanded(builder: _WordBuilder, node) -> list[_Word]:
    """The words an argument node becomes: one, or those of its brace expansion (`src/{a,b}.py`)."""
    word = builder.build(node)
    if word.unsafe == _BRACED:
        braced = _brace_words(node.text.decode("utf-8", "replace"))
        if braced is not None:
            return braced
    return [word]


# statements made of others: the walk reads their own tokens and walks their parts (`_Walker.statement`); a node
# of a type neither here nor in a case of the walk is not read, and the line is then unknown (`_unread`)
_STATEMENTS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "compound_statement",
        "redirected_statement",
        "negated_command",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "for_statement",
        "do_group",
        "case_statement",
        "case_item",
        "variable_assignments",
        "command_substitution",
        "process_substitution",
    }
)


def _unread(root, seen: list) -> tuple[int, int] | None:
    """The first run of the tree's tokens (comments aside) that no reading recorded in `seen`, as a byte
    range; None when every token was read. Tokens come in text order, and the read ranges are merged, so one
    pass over both decides."""
    merged: list[list[int]] = []
    for start, end in sorted(seen):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    at, run, stack = 0, None, [root]
    while stack:
        node = stack.pop()
        if node.child_count and node.type != "comment":
            stack.extend(reversed(node.children))
            continue
        if node.type == "comment" or node.start_byte == node.end_byte:
            continue
        while at < len(merged) and merged[at][1] <= node.start_byte:
            at += 1
        if at < len(merged) and merged[at][0] <= node.start_byte and node.end_byte <= merged[at][1]:
            if run is not None:
                return run
        else:
            run = (node.start_byte if run is None else run[0], node.end_byte)
    return run


# where bash keeps a backslash-newline as it is: quotes that take it literally, a comment, a quoted heredoc's body
_KEEPS_CONTINUATIONS = frozenset({"raw_string", "ansi_c_string", "comment"})


def _continuations_joined(source: bytes) -> bytes:
    """`source` with each backslash-newline bash drops dropped: every one but those in single quotes, `$'…'`,
    a comment or the body of a heredoc whose delimiter is quoted (where tree-sitter-bash's reading of
    `source` puts them); an escaped backslash (`\\\\`) is no continuation."""
    with _PARSING:
        root = _parser().parse(source).root_node
    kept, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.type in _KEEPS_CONTINUATIONS:
            kept.append((node.start_byte, node.end_byte))
        elif node.type == "heredoc_redirect":
            start = next((c for c in node.children if c.type == "heredoc_start"), None)
            body = next((c for c in node.children if c.type == "heredoc_body"), None)
            if start is not None and body is not None and any(q in start.text for q in (b"'", b'"', b"\\")):
                kept.append((body.start_byte, body.end_byte))
            stack.extend(node.children)
        else:
            stack.extend(node.children)
    out, index = bytearray(), 0
    while index < len(source):
        pair = source[index : index + 2]
        if pair[:1] != b"\\" or any(start <= index < end for start, end in kept):
            out += source[index : index + 1]
            index += 1
        else:
            out += b"" if pair == b"\\\n" else pair
            index += 2
    return bytes(out)


def _skipped_text(root, source: bytes) -> bool:
    """Whether some byte other than a blank lies outside every token of the tree. tree-sitter-bash
    drops a lone `-` before an assignment without an error: `- D=8 rm -rf /` parses as `D=8 rm -rf /`
    while bash runs the program `-` with the rest as its arguments. What the tree does not hold
    cannot be analysed, so such a line fails closed. A heredoc body counts as one token: its text around an
    expansion (`name: $NAME`) has no token of its own, and is the body's."""
    pos, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.child_count and node.type != "heredoc_body":
            stack.extend(reversed(node.children))
            continue
        if node.start_byte > pos and _not_blank(source[pos : node.start_byte]):
            return True
        pos = max(pos, node.end_byte)
    return _not_blank(source[pos:])


def _not_blank(gap: bytes) -> bool:
    return bool(gap.replace(b"\\\n", b"").strip(b" \t\n"))  # a line continuation is a blank
