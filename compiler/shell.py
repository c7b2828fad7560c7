"""Split a shell command into the simple commands it would run.

An approval policy such as ``deny bash when args.command matches "rm -rf*"``
is trivially bypassed by a naive matcher: ``cd x && rm -rf /``,
``timeout 5 rm -rf /``, ``echo $(rm -rf ~)``, ``bash -c "rm -rf /"`` ...
This module parses the command with a real shell parser (bashlex) and
returns every simple command ("segment") it would execute, after unwrapping
wrappers such as ``env``, ``timeout``, ``sudo`` or ``xargs`` and splicing in
the program of ``sh -c STRING``.

Callers are expected to deny when ANY segment is denied and to allow only
when EVERY segment is allowed and none is opaque.  Everything that cannot be
understood fails closed: the whole command becomes ``None`` (unparseable) or
the affected segment is marked ``opaque``.

Only the standard library and bashlex are used.  bashlex alone decides the
structure (no regexes, no hand-written splitting of the command text).  Its
per-word quote removal is, however, wrong for some quoting (``'r''m'``), so
each literal word's value is cross-checked against an independent quote
removal of that word's source text and ``shlex``; a word nobody agrees on
makes its segment opaque.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Optional

import bashlex
import bashlex.ast
import bashlex.errors
import bashlex.parser
import bashlex.subst
import bashlex.tokenizer

from .globs import glob_match

__all__ = ["Segment", "command_segments", "command_matches", "MAX_DEPTH"]

#: Maximum nesting of command substitutions / ``sh -c`` strings.
MAX_DEPTH = 16


def _guard_paramexpand() -> None:
    """Turn a bashlex infinite loop into a parse error.

    bashlex 0.18 loops forever on a word holding ``${`` without a later
    ``}`` that its tokenizer let through (e.g. ``echo a'${'``):
    ``_paramexpand`` then returns an index that does not advance.  Wrap it
    so that case raises ParsingError (which becomes ``None`` here).  The
    wrapper changes nothing for input that bashlex can handle.
    """
    original = getattr(bashlex.subst, "_paramexpand", None)
    if original is None or getattr(original, "_dshc_guarded", False):
        return

    def _paramexpand(parserobj, string, sindex):
        node, zindex = original(parserobj, string, sindex)
        if zindex <= sindex:
            raise bashlex.errors.ParsingError(
                "bad substitution", string, min(sindex, len(string)))
        return node, zindex

    _paramexpand._dshc_guarded = True
    bashlex.subst._paramexpand = _paramexpand


_guard_paramexpand()


@dataclass(frozen=True)
class Segment:
    """One simple command that the shell would run."""

    argv: tuple[str, ...]
    opaque: bool = False
    reason: str = ""

    @property
    def text(self) -> str:
        return " ".join(self.argv)


# --------------------------------------------------------------------------
# internal errors
# --------------------------------------------------------------------------


class _Unparseable(Exception):
    """The command (or a nested one) cannot be analysed: result is None."""


class _Opaque(Exception):
    """Raised while unwrapping a segment: the segment becomes opaque."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------
# words
# --------------------------------------------------------------------------

_SUBST_KINDS = ("commandsubstitution", "processsubstitution")

# characters that start an expansion after ``$``
_DOLLAR_EXPANDS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789"
    "{([@*#?$!-")


def _dequote(raw: str):
    """Bash quote removal for ONE word that bashlex already delimited.

    This is not used to split anything: bashlex decides where words start
    and end.  It exists because bashlex's own ``word`` is wrong for some
    quoting (``'r''m'`` -> ``r''m``, ``"r"'m'`` -> ``r'm'``,
    ``"a\n"`` -> ``an``), so its result is cross-checked (see ``_Word``).

    Returns ``(value, unquoted_chars, expands)`` or ``None`` for quoting it
    does not support (``$'...'``, ``$"..."``, unterminated quotes).
    ``expands`` is True when an unescaped ``$name``/``${``/``$(``/backtick
    occurs outside single quotes.
    """
    out: list[str] = []
    unquoted: list[str] = []
    expands = False
    quote = ""
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        nxt = raw[i + 1] if i + 1 < n else ""
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                out.append(c)
            i += 1
            continue
        if c == "\\":
            if quote == '"' and nxt not in ('$', '`', '"', '\\', '\n'):
                out.append(c)  # backslash stays literal inside "..."
                i += 1
                continue
            if not nxt:
                return None
            if nxt != "\n":  # backslash-newline is a line continuation
                out.append(nxt)
            i += 2
            continue
        if c == '"':
            quote = "" if quote == '"' else '"'
            i += 1
            continue
        if c == "'" and not quote:
            quote = "'"
            i += 1
            continue
        if c == "$" and not quote and nxt in ("'", '"'):
            return None  # ANSI-C / locale quoting
        if (c == "$" and nxt and nxt in _DOLLAR_EXPANDS) or c == "`":
            expands = True
        out.append(c)
        if not quote:
            unquoted.append(c)
        i += 1
    if quote:
        return None
    return "".join(out), "".join(unquoted), expands


def _shlex_word(raw: str) -> Optional[str]:
    try:
        parts = shlex.split(raw)
    except ValueError:
        return None
    return parts[0] if len(parts) == 1 else None


@dataclass(frozen=True)
class _Word:
    text: str  # the word after quote removal
    node: object = None  # the bashlex WordNode (None for synthetic words)
    expanded: bool = False  # contains $param, $(...), `...`, <(...)
    tilde: bool = False  # contains a tilde expansion
    doubtful: str = ""  # why the word's value is not trusted
    glob: bool = False  # unquoted * ? [..]: pathname expansion
    brace: bool = False  # unquoted {..,..}: brace expansion

    @property
    def unstable(self) -> bool:
        """The shell may turn this word into something else (or several)."""
        return self.expanded or self.glob or self.brace or bool(self.doubtful)

    @property
    def literal(self) -> bool:
        return not (self.unstable or self.tilde)


def _make_word(node, source: str) -> _Word:
    """Build a _Word from a bashlex WordNode, cross-checking quote removal.

    bashlex's ``word`` is used when it agrees with an independent quote
    removal of the word's source text; when they differ, the independent
    result is used only if ``shlex`` (a third lexer) agrees with it,
    otherwise the word is marked doubtful (its segment becomes opaque).
    """
    b = node.word
    parts = getattr(node, "parts", None) or []
    expanded = tilde = False
    for p in parts:
        kind = getattr(p, "kind", None)
        if kind in _SUBST_KINDS:
            expanded = True
        elif kind == "parameter":
            # bashlex reports ``$'..'``, ``$"..."`` and a lone ``$`` as a
            # parameter without a name; _dequote sorts those out.
            if getattr(p, "value", None):
                expanded = True
        elif kind == "tilde":
            tilde = True
    if expanded:
        return _Word(b, node, expanded=True, tilde=tilde)

    pos = getattr(node, "pos", None)
    raw = source[pos[0]:pos[1]] if pos else ""
    scan = _dequote(raw)
    if scan is None:
        return _Word(b, node, tilde=tilde,
                     doubtful="quoting not understood")
    value, unquoted, expands = scan
    if expands:
        return _Word(b, node, tilde=tilde,
                     doubtful="expansion not understood")
    if value == b:
        text = b
    elif _shlex_word(raw) == value:
        text = value
    else:
        return _Word(b, node, tilde=tilde,
                     doubtful="quoting not understood")
    glob = ("*" in unquoted or "?" in unquoted
            or ("[" in unquoted and "]" in unquoted))
    brace = ("{" in unquoted and "}" in unquoted
             and ("," in unquoted or ".." in unquoted))
    return _Word(text, node, tilde=tilde, glob=glob, brace=brace)


# --------------------------------------------------------------------------
# option parsing for wrappers (getopt-like, over already-parsed words)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _OptSpec:
    flags: str = ""  # short options without a value
    values: str = ""  # short options with a required value
    optional: str = ""  # short options with an optional attached value
    long_flags: frozenset = frozenset()
    long_values: frozenset = frozenset()
    long_optional: frozenset = frozenset()  # --name or --name=value


def _getopt(words: list[_Word], i: int, spec: _OptSpec, what: str):
    """Consume options of a wrapper starting at ``words[i]``.

    Returns ``(index_after_options, [(option, value_or_None), ...])``.
    Raises _Opaque for an unknown option or an option word that is an
    expansion (it could word-split into anything).
    """
    opts: list[tuple[str, Optional[str]]] = []
    n = len(words)
    while i < n:
        w = words[i]
        t = w.text
        if not t.startswith("-") or t == "-":
            break
        if w.unstable:
            raise _Opaque(f"{what} option is an expansion")
        if t == "--":
            i += 1
            break
        if t.startswith("--"):
            name, eq, val = t.partition("=")
            if name in spec.long_values:
                if eq:
                    opts.append((name, val))
                    i += 1
                else:
                    if i + 1 >= n:
                        raise _Opaque(f"{what} option is missing its value")
                    if words[i + 1].unstable:
                        raise _Opaque(f"{what} option is an expansion")
                    opts.append((name, words[i + 1].text))
                    i += 2
                continue
            if name in spec.long_optional:
                opts.append((name, val if eq else None))
                i += 1
                continue
            if name in spec.long_flags and not eq:
                opts.append((name, None))
                i += 1
                continue
            raise _Opaque(f"unrecognized {what} option")
        # cluster of short options
        j = 1
        i += 1
        while j < len(t):
            c = t[j]
            if c in spec.flags:
                opts.append(("-" + c, None))
                j += 1
                continue
            if c in spec.values:
                rest = t[j + 1:]
                if rest:
                    opts.append(("-" + c, rest))
                else:
                    if i >= n:
                        raise _Opaque(f"{what} option is missing its value")
                    if words[i].unstable:
                        raise _Opaque(f"{what} option is an expansion")
                    opts.append(("-" + c, words[i].text))
                    i += 1
                break
            if c in spec.optional:
                opts.append(("-" + c, t[j + 1:] or None))
                break
            raise _Opaque(f"unrecognized {what} option")
    return i, opts


_ENV = _OptSpec(
    flags="i0v",
    values="uCPS",
    long_flags=frozenset({"--ignore-environment", "--null", "--debug",
                          "--list-signal-handling"}),
    long_values=frozenset({"--unset", "--chdir", "--split-string"}),
    long_optional=frozenset({"--block-signal", "--default-signal",
                             "--ignore-signal"}),
)
_ENV_SPLIT = ("-S", "--split-string")

_TIMEOUT = _OptSpec(
    flags="v",
    values="sk",
    long_flags=frozenset({"--preserve-status", "--foreground", "--verbose"}),
    long_values=frozenset({"--signal", "--kill-after"}),
)

_NICE = _OptSpec(values="n", long_values=frozenset({"--adjustment"}))

_NOHUP = _OptSpec()

_TIME = _OptSpec(
    flags="pavq",
    values="fo",
    long_flags=frozenset({"--portability", "--append", "--verbose",
                          "--quiet"}),
    long_values=frozenset({"--format", "--output"}),
)

_COMMAND = _OptSpec(flags="pvV")

_EXEC = _OptSpec(flags="cl", values="a")

_XARGS = _OptSpec(
    flags="0prtxo",
    values="adEILnPs",
    optional="eil",
    long_flags=frozenset({"--null", "--no-run-if-empty", "--interactive",
                          "--verbose", "--exit", "--open-tty",
                          "--show-limits"}),
    long_values=frozenset({"--arg-file", "--delimiter", "--max-args",
                           "--max-procs", "--max-chars",
                           "--process-slot-var"}),
    long_optional=frozenset({"--eof", "--replace", "--max-lines"}),
)

_SUDO = _OptSpec(
    flags="AbEHiKklnPSsVveBN",
    values="ugCDprtTUR",
    long_flags=frozenset({"--askpass", "--background", "--set-home",
                          "--login", "--remove-timestamp",
                          "--reset-timestamp", "--non-interactive",
                          "--preserve-groups", "--stdin", "--shell", "--bell",
                          "--edit", "--list", "--validate", "--version",
                          "--help"}),
    long_values=frozenset({"--user", "--group", "--close-from", "--chdir",
                           "--prompt", "--role", "--type",
                           "--command-timeout", "--other-user", "--chroot"}),
    long_optional=frozenset({"--preserve-env"}),
)
# sudo modes that do not run the command given after the options
_SUDO_NO_RUN = {"-e", "--edit", "-l", "--list", "-v", "--validate", "-V",
                "--version", "--help"}
_SUDO_SHELL = {"-s", "--shell", "-i", "--login"}

_DOAS = _OptSpec(flags="nsL", values="uC")

_STDBUF = _OptSpec(
    values="ioe",
    long_values=frozenset({"--input", "--output", "--error"}),
)

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh",
                     "rbash"})
_OPAQUE_BUILTINS = {
    "eval": "eval runs its arguments as shell code",
    "source": "source runs a script",
    ".": "source runs a script",
}


def _basename(t: str) -> str:
    return t.rsplit("/", 1)[-1]


def _is_env_assignment(t: str) -> bool:
    name, eq, _ = t.partition("=")
    return bool(eq) and name.isidentifier() and name.isascii()


# --------------------------------------------------------------------------
# the walker
# --------------------------------------------------------------------------


class _Walker:
    def __init__(self, source: str) -> None:
        self.source = source
        self.out: list[Segment] = []

    # ---- generic node dispatch ------------------------------------------

    def node(self, n, depth: int) -> None:
        kind = getattr(n, "kind", None)
        if kind == "command":
            self.command(n, depth)
        elif kind in ("list", "pipeline", "if", "for", "while", "until",
                      "function"):
            for child in n.parts:
                self.node(child, depth)
        elif kind == "compound":
            for child in n.list:
                self.node(child, depth)
            for child in getattr(n, "redirects", ()) or ():
                self.node(child, depth)
        elif kind in ("word", "assignment"):
            self.word_parts(n, depth)
        elif kind == "redirect":
            self.redirect(n, depth)
        elif kind in ("operator", "pipe", "reservedword", "tilde"):
            pass
        elif kind == "parameter":
            self.parameter(n)
        elif kind in _SUBST_KINDS:
            if depth + 1 > MAX_DEPTH:
                raise _Unparseable("nesting too deep")
            self.node(n.command, depth + 1)
        else:
            raise _Unparseable(f"unsupported node {kind!r}")

    def word_parts(self, n, depth: int) -> None:
        for p in getattr(n, "parts", ()) or ():
            self.node(p, depth)

    def parameter(self, n) -> None:
        # bashlex does not parse ``${x:-$(cmd)}``; the value is raw text.
        value = getattr(n, "value", None) or ""
        if "$(" in value or "`" in value:
            self.out.append(Segment(
                ("${" + value + "}",), True,
                "parameter expansion contains a command substitution"))

    def redirect(self, n, depth: int) -> None:
        out = getattr(n, "output", None)
        if isinstance(out, bashlex.ast.node):
            self.node(out, depth)
        heredoc = getattr(n, "heredoc", None)
        if heredoc is not None:
            # bashlex keeps the body as raw text; an unquoted here-document
            # performs command substitution that we cannot see.
            body = getattr(heredoc, "value", "") or ""
            if "$(" in body or "`" in body:
                self.out.append(Segment(
                    ("<<",), True,
                    "here-document may run command substitutions"))

    # ---- simple commands ------------------------------------------------

    def command(self, n, depth: int) -> None:
        words: list[_Word] = []
        nested: list = []  # nodes whose substitutions must be walked
        for p in n.parts:
            kind = getattr(p, "kind", None)
            if kind == "word":
                words.append(_make_word(p, self.source))
                nested.append(p)
            elif kind in ("assignment", "redirect"):
                nested.append(p)
            else:
                raise _Unparseable(f"unsupported command part {kind!r}")
        if words:
            self.simple(words, depth)
        for p in nested:
            self.node(p, depth)

    def simple(self, words: list[_Word], depth: int) -> None:
        """Unwrap wrappers and emit the segment(s) for one simple command."""
        try:
            for w in words:
                if w.doubtful:
                    raise _Opaque(w.doubtful)
                if w.brace:
                    raise _Opaque("brace expansion changes the words")
            self._unwrap(words, depth)
        except _Opaque as e:
            self.out.append(Segment(tuple(w.text for w in words), True,
                                    e.reason))

    def _emit(self, words: list[_Word], opaque: bool = False,
              reason: str = "") -> None:
        self.out.append(Segment(tuple(w.text for w in words), opaque, reason))

    def _unwrap(self, words: list[_Word], depth: int) -> None:
        while words:
            head = words[0]
            if head.expanded:
                self._emit(words, True, "command name is an expansion")
                return
            if head.glob:
                self._emit(words, True,
                           "command name is subject to pathname expansion")
                return
            name = _basename(head.text)
            rest = self._strip_wrapper(name, words)
            if rest is None:  # not a wrapper: a real command
                break
            if rest is words:  # a wrapper used without a command
                break
            words = rest
        else:
            return

        name = _basename(words[0].text)
        if name in _OPAQUE_BUILTINS:
            self._emit(words, True, _OPAQUE_BUILTINS[name])
            return
        if name in _SHELLS:
            self._shell(words, depth)
            return
        self._emit(words)

    def _strip_wrapper(self, name: str, words: list[_Word]):
        """Return the words of the wrapped command.

        ``None`` when ``words`` is not a wrapper invocation, ``words`` itself
        when the wrapper has nothing to run (it is then the command).
        """
        n = len(words)
        if name == "env":
            i, opts = _getopt(words, 1, _ENV, "env")
            if any(o in _ENV_SPLIT for o, _ in opts):
                raise _Opaque("env -S splits a string into a command")
            if i < n and words[i].text == "-" and not words[i].unstable:
                i += 1  # ``env -`` is ``env -i``
            while i < n and _is_env_assignment(words[i].text):
                if words[i].unstable:
                    raise _Opaque("env argument is an expansion")
                i += 1
            return words[i:] or words
        if name == "timeout":
            i, _ = _getopt(words, 1, _TIMEOUT, "timeout")
            if i >= n:
                return words
            if words[i].unstable:
                raise _Opaque("timeout duration is an expansion")
            return words[i + 1:] or words
        if name == "nice":
            i = 1
            # historic ``nice -N``
            if (i < n and len(words[i].text) > 1
                    and words[i].text[0] == "-"
                    and words[i].text[1:].isdigit()
                    and not words[i].unstable):
                i += 1
            i, _ = _getopt(words, i, _NICE, "nice")
            return words[i:] or words
        if name == "nohup":
            i, _ = _getopt(words, 1, _NOHUP, "nohup")
            return words[i:] or words
        if name == "time":
            i, _ = _getopt(words, 1, _TIME, "time")
            return words[i:] or words
        if name == "command":
            i, opts = _getopt(words, 1, _COMMAND, "command")
            if any(o in ("-v", "-V") for o, _ in opts):
                return None  # only looks a name up: keep the argv as is
            return words[i:] or words
        if name == "builtin":
            return words[1:] or words
        if name == "exec":
            i, _ = _getopt(words, 1, _EXEC, "exec")
            return words[i:] or words
        if name == "xargs":
            i, _ = _getopt(words, 1, _XARGS, "xargs")
            if i >= n:
                return [_Word("echo", None)]
            return words[i:]
        if name in ("sudo", "doas"):
            spec = _SUDO if name == "sudo" else _DOAS
            i, opts = _getopt(words, 1, spec, name)
            names = {o for o, _ in opts}
            if name == "sudo" and names & _SUDO_NO_RUN:
                return None
            if name == "doas" and "-C" in names:
                return None
            if i >= n:
                if names & (_SUDO_SHELL if name == "sudo" else {"-s"}):
                    raise _Opaque("shell reads its program from stdin")
                return words
            return words[i:]
        if name == "stdbuf":
            i, _ = _getopt(words, 1, _STDBUF, "stdbuf")
            return words[i:] or words
        return None

    def _shell(self, words: list[_Word], depth: int) -> None:
        """``sh``/``bash``/... : splice ``-c STRING`` or mark stdin opaque."""
        n = len(words)
        i = 1
        has_c = False
        reads_stdin = False
        while i < n:
            w = words[i]
            t = w.text
            if w.unstable:
                if has_c:
                    break  # the -c string; checked below
                raise _Opaque("shell argument is an expansion")
            if t in ("--", "-"):
                i += 1
                break
            if t.startswith("--"):
                if t in ("--version", "--help"):
                    self._emit(words)
                    return
                if t in ("--rcfile", "--init-file"):
                    i += 2
                else:
                    i += 1
                continue
            if len(t) > 1 and t[0] in "-+":
                letters = t[1:]
                if t[0] == "-" and "c" in letters:
                    has_c = True
                if t[0] == "-" and "s" in letters:
                    reads_stdin = True
                # -o OPTION / -O SHOPT take the next word
                i += 1 + letters.count("o") + letters.count("O")
                continue
            break
        if i > n:
            raise _Opaque("shell option is missing its value")
        if has_c:
            if i >= n:
                raise _Opaque("shell -c without a command string")
            string = words[i]
            if not string.literal:
                raise _Opaque("shell -c string is not a literal")
            if depth + 1 > MAX_DEPTH:
                raise _Unparseable("nesting too deep")
            self.out.extend(_segments(string.text, depth + 1))
            return
        if reads_stdin or i >= n:
            raise _Opaque("shell reads its program from stdin")
        self._emit(words)  # ``bash script.sh``: an ordinary command


# --------------------------------------------------------------------------
# entry points
# --------------------------------------------------------------------------


def _only_blank(command: str) -> bool:
    """True when bashlex's tokenizer finds nothing but newlines/comments."""
    try:
        toks = list(bashlex.parser._parser(command).tok)
    except Exception:
        return False
    newline = bashlex.tokenizer.tokentype.NEWLINE
    return all(getattr(t, "ttype", None) == newline for t in toks)


def _segments(command: str, depth: int) -> tuple[Segment, ...]:
    if not command.strip(" \t\n"):
        return ()
    try:
        trees = bashlex.parse(command)
    except Exception:
        # bashlex fails on input without any command (e.g. only comments)
        if _only_blank(command):
            return ()
        raise _Unparseable("bashlex could not parse the command")
    walker = _Walker(command)
    for tree in trees:
        walker.node(tree, depth)
    return tuple(walker.out)


def command_segments(command: str) -> tuple[Segment, ...] | None:
    """Return the simple commands ``command`` would run, in text order.

    ``None`` when the text cannot be parsed as a shell command (syntax error,
    construct bashlex does not support, nesting deeper than MAX_DEPTH, or any
    bashlex failure).  Never raises.
    """
    if not isinstance(command, str):
        return None
    try:
        return _segments(command, 0)
    except Exception:  # _Unparseable, bashlex errors, RecursionError, ...
        return None


def command_matches(segment: Segment, pattern: str) -> bool:
    """Glob-match one segment's text against a policy pattern.

    ``*`` matches any run of characters (spaces included), ``?`` exactly one
    character, everything else is literal, matching is case-sensitive.  A
    pattern ending in ``" *"`` also matches the bare command, so ``"git *"``
    matches ``git`` and ``git status`` but not ``gitk``.  Opacity is ignored
    here: callers must refuse to *allow* opaque segments.  The glob meaning is
    the one in `globs.py`, shared with policy matching and verification.
    """
    return glob_match(pattern, segment.text, shell=True)
