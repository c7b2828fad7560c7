"""A shell command line → the simple commands it would run (argv, program normalised, wrappers and
`sh -c` unwrapped) and the files it redirects; what the text cannot tell makes a segment opaque.
"""
from __future__ import annotations

import posixpath
from _thread import allocate_lock  # not `threading`: a hook process loads neither it nor what it imports

from .bash_grammar import bash_parser
from .file_pattern import ANY, DEEP, NAME, ONE, display
from .frozen import record, replace
from .globs import glob_accepts_any_continuation, glob_match, glob_prefix_viable
from .memo import memoised, once
from .patterns import Pattern, compiled
from .shell_data import Interpreter, Knowledge, OptionSpec, Program, knowledge

__all__ = ["Segment", "FileAccess", "Analysis", "analyse", "command_segments", "command_matches", "with_redirections",
           "with_options", "segment_matches", "MAX_DEPTH", "MAX_COMMAND_CHARS", "MAX_SEGMENTS"]

MAX_DEPTH = 16  # nesting of command substitutions and `sh -c` strings
MAX_COMMAND_CHARS = 100_000  # beyond: the whole command is opaque
MAX_SEGMENTS = 1_000  # beyond: the whole command is opaque


@record(slots=False)
class Segment:
    """One simple command the shell would run.

    `opaque`: what runs is not known (any deny may match, no allow covers it). `hazard`: the argv
    is known, but the command runs code or changes files in ways no pattern can see, so no allow
    covers it. Words from `literal` on are expansions (`$X`) whose value is unknown. For a
    wrapper (`sudo …`) `wraps` is where the wrapped command starts; the wrapped one is its own
    segment too. `deny_only`: a command a runner runs (`uv run …`): its denies and asks apply, and
    an allow of the runner's line covers it.
    """

    argv: tuple[str, ...]
    opaque: bool = False
    reason: str = ""
    hazard: str = ""
    literal: int | None = None
    wraps: int | None = None
    base: str = ""  # a program run by a path outside the system directories: its basename, for denies
    deny_only: bool = False
    redirects: tuple[str, ...] = ()  # the command's redirections as written (`>>`, `.claude/f`; `3<.env`)
    # the command read by its program's option grammar (`shell_options`), on the deny-only part that adds
    # that reading: a deny or ask pattern written with options also meets the same options spelled otherwise
    options: object = None

    @property
    def text(self) -> str:
        return " ".join(self.argv)

    @property
    def literal_words(self) -> int:
        return len(self.argv) if self.literal is None else self.literal

    @property
    def allowable(self) -> bool:
        return not self.opaque and not self.hazard

    @property
    def plain(self) -> bool:
        """Literal words run by name, nothing hidden: every glob reads it as its text, on either side
        (`segment_matches` is then `glob_match(pattern, text, shell=True)`)."""
        return self.allowable and self.literal_words == len(self.argv) and not self.base and self.options is None


@record(slots=False)
class FileAccess:
    """A redirection or a file-writing option: decided like a `read`/`write` of `path`."""

    kind: str  # "read" | "write"
    path: str
    pattern: tuple = ()  # a file the line cannot name, as `file_pattern` items (`path` shows it)
    why: str = ""  # why the access may be to any file, when no word of the line names it (a branch switch)
    # every file below a directory, read because it is there (`grep -r x src`, `git diff`), or any file a branch
    # switch rewrites, not named: the rule layer may leave to the sandbox what it enforces (`policy.deferral`)
    tree: bool = False


@record(slots=False)
class Analysis:
    segments: tuple[Segment, ...]
    files: tuple[FileAccess, ...] = ()


class _Unparseable(Exception):
    pass


class _Opaque(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


_parser = once(bash_parser)  # the process's one Bash parser
# a tree-sitter parser is one parse at a time (its C state is the parse's): threads deciding take turns
_PARSING = allocate_lock()


# ------------------------------------------------------------------------------------- words

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
    # its one unsafety is a command substitution inside double quotes (`"$(cat <<'EOF' …)"`): one word whose
    # text is unknown, harmless where it is an option's inert value (`git commit -m`: `_Walker.inert_value`)
    quoted_substitution: bool = False


_PLAIN_EXPANSION_CHILDREN = {"${", "}", "variable_name", "special_variable_name"}
_SUBSTITUTIONS = {"command_substitution", "process_substitution"}
_DQ_ESCAPES = {"$", "`", '"', "\\", "\n"}


_ASSIGNMENT = Pattern(r"[A-Za-z_][A-Za-z0-9_]*=")
_OPEN = "\x00open"  # an unquoted `[` while a word's shape is collected


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
    """tree-sitter argument node → _Word; collects the substitutions it holds for the walker."""

    def __init__(self, nested: list):
        self.nested = nested

    def build(self, node) -> _Word:
        parts: list[str] = []
        # `lead`: what the word's first character comes from ("" until some part adds one)
        state = {"dynamic": False, "unsafe": "", "glob": False, "lead": "", "splits": False, "shape": [],
                 "quoted_substitution": False}
        self._collect(node, parts, state, in_double=False)
        text = "".join(parts)
        if not state["unsafe"] and node.type in ("word", "concatenation"):
            raw = node.text.decode("utf-8", "replace")
            if _brace_expansion(raw):
                state["unsafe"] = "brace expansion changes the words"
        optionable = state["lead"] in ("expansion", "pattern") or state["splits"]
        shape = _bracketed(state["shape"]) if _OPEN in state["shape"] else tuple(state["shape"])
        quoted = state["quoted_substitution"] and state["unsafe"] == "command substitution" and not state["splits"]
        word = _Word(text, state["dynamic"], state["unsafe"], state["glob"], optionable, shape, quoted)
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
        elif kind in _SUBSTITUTIONS:
            parts.append(raw)
            state["dynamic"] = True
            self._expanded(state, in_double)
            state["quoted_substitution"] = in_double and kind == "command_substitution" and not state["unsafe"]
            state["unsafe"] = state["unsafe"] or "command substitution"
            self.nested.append(node)
        elif kind == "ansi_c_string":
            parts.append(raw)
            state["shape"].append(ANY)
            state["unsafe"] = state["unsafe"] or "ANSI-C quoting `$'…'` is not decoded"
        elif kind == "translated_string":
            parts.append(raw)
            state["shape"].append(ANY)
            state["unsafe"] = state["unsafe"] or "locale quoting `$\"…\"` is not decoded"
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
            state["unsafe"] = state["unsafe"] or "brace expansion changes the words"
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


_DIR_TILDES = ("~+", "~-") + tuple(f"~{digit}" for digit in "0123456789")
_DIR_TILDE = Pattern(r"~(?:[+-]?[0-9]*)(?=/|$)")


def _directory_tilde(word: _Word) -> _Word:
    """bash's directory tildes (a word written unquoted, `~+` … at its start): `~+` is the working directory,
    `~-` the previous one (`$OLDPWD`) and `~N`, `~+N`, `~-N` the directory stack's: but for `~+` a directory
    that may be any (`cat ~-/.aws/credentials` read the home's credentials)."""
    found = _DIR_TILDE.match(word.text)
    if found is None:
        return word  # `~-x` is a user's home, as `~x` is
    prefix, rest = found.group(0), word.text[found.end():]
    shape = list(word.shape) or [word.text]
    if isinstance(shape[0], str) and shape[0].startswith(prefix):
        shape[0] = shape[0][len(prefix):]
    else:
        shape = [ANY]
    if prefix == "~+":
        return _Word("." + rest, word.dynamic, word.unsafe, word.glob, word.optionable, tuple(["." + shape[0], *shape[1:]]
                     if isinstance(shape[0], str) else shape), word.quoted_substitution)
    return _Word(word.text, True, word.unsafe, word.glob, word.optionable, tuple(x for x in (ANY, *shape) if x != ""),
                 word.quoted_substitution)


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


# ---------------------------------------------------------------------------- option parsing

def _getopt(words: list[_Word], i: int, spec: OptionSpec, what: str, stop: frozenset = frozenset(),
            any_attached_long: bool = False, single_dash_long: bool = False):
    """Consume options from `words[i]`: (index after them, [(option, value or None)]). `stop`: options
    after which the rest are operands (`python -m MODULE ARGS`); `any_attached_long`: an unknown
    `--name=value` is an option too (its value is attached, so it cannot take the next word);
    `single_dash_long`: `-name` is the long option `--name` (sqlite3's `-cmd`)."""
    opts: list[tuple[str, str | None]] = []
    n = len(words)
    while i < n:
        if opts and opts[-1][0] in stop:
            break
        word = words[i]
        text = word.text
        if not text.startswith("-") or text == "-":
            break
        if word.dynamic or word.unsafe:
            raise _Opaque(f"{what} option is an expansion")
        if text == "--":
            i += 1
            break
        if single_dash_long and len(text) > 2 and text[1] != "-":
            text = "-" + text
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            if name in spec.long_values:
                if eq:
                    opts.append((name, value))
                    i += 1
                else:
                    if i + 1 >= n or _unknown(words[i + 1]):
                        raise _Opaque(f"{what} option value is missing or an expansion")
                    opts.append((name, words[i + 1].text))
                    i += 2
                continue
            if name in spec.long_optional or (name in spec.long_flags and not eq) or (eq and any_attached_long):
                opts.append((name, value if eq else None))
                i += 1
                continue
            raise _Opaque(f"unrecognized {what} option `{name}`")
        i += 1
        j = 1
        while j < len(text):
            char = text[j]
            if char in spec.values:
                rest = text[j + 1:]
                if rest:
                    opts.append(("-" + char, rest))
                else:
                    if i >= n or _unknown(words[i]):
                        raise _Opaque(f"{what} option value is missing or an expansion")
                    opts.append(("-" + char, words[i].text))
                    i += 1
                break
            if char in spec.optional:
                opts.append(("-" + char, text[j + 1:] or None))
                break
            if char in spec.flags:
                opts.append(("-" + char, None))
                j += 1
                continue
            raise _Opaque(f"unrecognized {what} option `-{char}`")
    return i, opts


_SUBSCRIPTED = Pattern(r"[A-Za-z_][A-Za-z0-9_]*\[(.*)\]")
_SUBSCRIPT_RUNS_CODE = ("an array subscript is evaluated as arithmetic, which runs code hidden in variables "
                        "(`a[$(cmd)]`, or `a[i]` where i holds one)")


def _arithmetic_runs_code(expression: str) -> bool:
    """Whether evaluating `expression` as bash arithmetic may run code: anything but numbers and operators
    (a variable's value is itself evaluated, and a subscript in it runs its `$(…)`)."""
    return _ONLY_NUMBERS.fullmatch(expression) is None


def _name_runs_code(word: _Word, data: Knowledge, assigns: bool) -> str:
    """Why `word`, read by bash as a variable name (`read NAME`, `declare NAME=V`), may run code or change
    what runs (`assigns`: the command sets it); "" when it cannot. A subscript is evaluated as arithmetic,
    `$(…)` in it run."""
    if _unknown(word):
        return (f"the variable name `{word.text}` is an expansion or a pattern: it may name an array element, "
                "whose subscript bash evaluates as arithmetic, or a variable that changes what runs")
    subscripted = _SUBSCRIPTED.match(word.text)  # greedy: `a[1]=$(x)]` reads all of `1]=$(x)`
    if subscripted is not None and _arithmetic_runs_code(subscripted[1]):
        return _SUBSCRIPT_RUNS_CODE
    name = word.text.partition("=")[0].partition("[")[0]
    if assigns and data.env_hazard(name):
        return f"assigning `{name}` changes what later commands run"
    return ""


def _variable_name_words(words: list[_Word], options: frozenset) -> list[_Word]:
    """The words of a builtin's command bash reads as variable names: with `*`, every argument that is
    not an option; else the values of `options` (`printf -v NAME`)."""
    if "*" in options:
        return [word for word in words[1:] if word.dynamic or not word.text.startswith("-")]
    found = []
    for index in range(1, len(words)):
        found += [value for _, value in _option_words(words[index].text, options, words, index)[0] if value]
    return found


def _rewrites_tree(row: Program, own: list[_Word], forced: bool, kept: bool, dashes: bool) -> bool:
    """Whether a `tree` command may rewrite its repository's files, by its row's mode (`Program.tree`);
    `own`: its operands after the subcommand, `dashes`: a `--` was given."""
    if kept or own and not own[0].dynamic and own[0].text in row.tree_keeping:
        return False
    if forced or row.tree == "always":
        return True
    if row.tree == "operand":
        return bool(own)
    return row.tree == "lone_operand" and len(own) == 1 and not dashes


def _clone_name(url: _Word) -> _Word:
    """The directory `git clone URL` makes: the URL's last name, `.git` (or `.bundle`) dropped (`host:a/b.git`
    -> `b`, `/srv/r/.git` -> `r`). One not known (an expansion) is the word itself: a file pattern."""
    if _unknown(url):
        return url
    text = url.text.rstrip("/")
    if text.endswith("/.git"):
        text = text[:-len("/.git")].rstrip("/")
    name = text.replace(":", "/").rsplit("/", 1)[-1]
    for suffix in (".git", ".bundle"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[:-len(suffix)]
    return _Word(name)


def _read_operands(row: Program, operands: list[_Word], pattern_given: bool, into: bool) -> list[_Word]:
    """The operands a program reads, by its row's `read` (`cp a b`: its sources; `dd if=f`: f)."""
    read = [_Word(word.text.partition("=")[2], word.dynamic, word.unsafe, word.glob) for word in operands
            if word.text.partition("=")[0] in row.read_assignments and "=" in word.text]
    if row.read == "all" or row.read == "after_first" and pattern_given:
        read += operands
    elif row.read == "after_first":
        read += operands[1:]
    elif row.read == "first":
        read += operands[:1]
    elif row.read == "sources":  # `cp a b DIR`, `cp -t DIR a b`
        read += operands if into else operands[:-1]
    elif row.read == "revisions":  # `git show HEAD:.env`: the path in a revision; any other operand as a path
        read += [_Word(word.text.partition(":")[2] or ".", word.dynamic, word.unsafe, word.glob)
                 if ":" in word.text else word for word in operands]
    return read


def _local_repository(source: str) -> bool:
    """Whether `git clone SOURCE` names a repository on this machine: a path, or a `file://` URL; not another
    URL nor git's `[user@]host:path`, which have a colon before any slash."""
    if source.startswith("file://"):
        return True
    colon, slash = source.find(":"), source.find("/")
    return colon < 0 or 0 <= slash < colon


def _patch_option(text: str, row: Program) -> bool:
    """Whether the word is one of `history_patch`; in a cluster of short flags only before a flag that takes
    a value (`-pS x` is `-p`; in `-Spassword` the letters are `-S`'s value). A flag not known to take one
    is read as a flag: the cluster then may print more, never less."""
    if text.startswith("--") or not row.clusters:
        return _uses(text, row.history_patch, row.clusters)
    for letter in text[1:]:
        if "-" + letter in row.history_patch:
            return True
        if "-" + letter in row.values:
            return False
    return False


def _history_reads(row: Program, patch_given: bool, quiet_given: bool, operands: list[_Word],
                   dashes_at: int | None) -> list[_Word] | None:
    """The paths whose every file a git subcommand prints from the repository's history (`Program.history`;
    `operands`: the subcommand's, itself first): its `-- PATH…`, else its operands' paths when all are
    `REV:PATH` (a path may name a folder, or a tree), else [] (every file below the working directory: an
    operand before `--` may be a revision, `git show HEAD`, `git diff main`); None when it prints none."""
    own = operands[1:]
    if not (patch_given or row.history == "always" and not quiet_given):
        return None
    if row.history_verbs and (not own or not _unknown(own[0]) and own[0].text not in row.history_verbs):
        return None  # `git worktree list`: only `add` checks the files out
    if dashes_at is not None and len(operands) > dashes_at:
        return operands[dashes_at:]
    if own and all(":" in word.text and not _unknown(word) for word in own):
        if row.history_lists_trees:  # `git show HEAD:src` lists a tree's names: a blob's path is read as a path
            return None
        return [_Word(word.text.partition(":")[2] or ".", word.dynamic, word.unsafe, word.glob) for word in own]
    return []


def _name_globs(values: list) -> tuple:
    """The base-name globs a program reads below a directory (`--include='*.py'`), as file-pattern items;
    () when any is unknown or names a path, or none is given: then every file below is read. A negated
    one (`rg -g '!*.md'`) only excludes, so it restricts nothing."""
    globs = []
    for value in values:
        if value is None or _unknown(value) or "/" in value.text:
            return ()
        if not value.text.startswith("!"):
            globs.append(tuple(_bracketed(_glob_shape(value.text))))
    return tuple(globs)


def _below(word: _Word) -> tuple:
    """The file pattern of every file below a path (`src/**`)."""
    return (*(_file_shape(word) if _unknown(word) else (word.text.rstrip("/") or "/",)), "/", DEEP)


def _file_shape(word: _Word) -> tuple:
    """A written word that is not one known name, as file-pattern items: its shape, or ANY when it has
    none or cannot be read whole (a substitution, a brace, `$'…'`)."""
    if word.unsafe or not word.shape:
        return (ANY,)
    return word.shape


def _base_name(source: _Word | None) -> tuple:
    """The items of the name a source keeps in a directory: its last component; NAME when it is not
    known (no source, or an expansion in it, whose value may hold `/`)."""
    if source is None:
        return (NAME,)
    if not _unknown(source):
        return (posixpath.basename(source.text.rstrip("/")) or NAME,)
    items = [char for item in _file_shape(source) for char in ((item,) if item in (NAME, ONE, ANY) else item)]
    while items and items[-1] == "/":
        items.pop()
    last = max((i for i, item in enumerate(items) if item == "/"), default=-1)
    name = items[last + 1:]
    return (NAME,) if not name or ANY in name else tuple(name)


def _unknown(word: _Word) -> bool:
    """A word whose text is not what runs: an expansion, a substitution, or a pattern of file names (it
    may be several words, and the words after it move)."""
    return word.dynamic or bool(word.unsafe) or word.glob


def option_hit(word: str, option: str, clusters: bool = True) -> str | None:
    """Whether `word` uses `option` (exact, `--long=v`, `-ov` attached or in a flag cluster, or a long
    option abbreviated: getopt_long takes any unambiguous prefix, `--outp=F` for `--output=F`; which
    prefixes are unambiguous depends on the program's whole option set, so any prefix counts). Without
    `clusters` (a program whose options are whole words, `gcc -fno-omit-frame-pointer`) a one-letter
    option is only the word's start (`-ofile`, `-B/dir`).

    Returns the attached value ("" when none is attached), or None when it is not that option.
    """
    if word == option:
        return ""
    if option.startswith("--"):
        name, _, value = word.partition("=")
        return value if len(name) > 2 and option.startswith(name) else None
    if not clusters and len(option) == 2:
        return word[2:] if word.startswith(option) else None
    if len(option) == 2 and word.startswith("-") and not word.startswith("--") and len(word) > 2:
        at = word.find(option[1], 1)
        return word[at + 1:] if at > 0 else None
    return word[len(option):] if len(option) > 2 and word.startswith(option + "=") else None


# ---------------------------------------------------------------------------------- walking

class _Found:
    """A segment and its place in the command (segments are reported in that order)."""
    __slots__ = ("order", "segment")

    def __init__(self, order: tuple, segment: Segment) -> None:
        self.order, self.segment = order, segment


class _Walker:
    """Walks the tree with an explicit stack (depth is user-controlled), collecting segments."""

    def __init__(self, data: Knowledge):
        self.data = data
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

    def emit(self, order, argv, opaque=False, reason="", hazard="", literal=None, wraps=None,
             deny_only=False) -> None:
        self.seq += 1
        if len(self.found) >= MAX_SEGMENTS:
            raise _Unparseable("too many segments")
        base = ""
        if argv and "/" in argv[0] and not opaque:  # kept as written: only system programs are renamed
            base = posixpath.basename(posixpath.normpath(argv[0]))
        # a command sorts before what is nested in it (nested keys continue with a byte offset ≥ 0)
        self.found.append(_Found((*order, -1, self.seq),
                                 Segment(tuple(argv), opaque, reason, hazard, literal, wraps, base,
                                         deny_only or self.runners > 0, self.redirects)))

    def walk(self, source: bytes, depth: int, base: tuple) -> None:
        plain = _plain_words(source)
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
        # each entry carries the redirections of the statements around it that apply there, nearest first
        # (`_redirections`), gathered on the way down: asking a node's ancestors is quadratic in tree-sitter
        stack = [(tree.root_node, depth, base, ())]
        while stack:
            node, level, order, around = stack.pop()
            here = (*order, node.start_byte)
            kind = node.type
            if kind == "command":
                nested: list = []
                self.around = around
                self.command(node, level, here, nested)
                stack.extend((n, level + 1, (*here, n.start_byte), ()) for n in nested if self._deeper(level))
            elif kind in _SUBSTITUTIONS:
                stack.extend((c, level, order, ()) for c in reversed(node.children))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                nested = []
                self.redirect(node, here, nested)
                stack.extend((n, level + 1, (*here, n.start_byte), ()) for n in nested if self._deeper(level))
            elif kind in ("variable_assignment", "declaration_command", "unset_command"):
                nested = []
                self.assignment(node, here, nested)
                stack.extend((n, level + 1, (*here, n.start_byte), ()) for n in nested if self._deeper(level))
            elif kind == "function_definition":
                self.emit(here, ["function", node.children[0].text.decode("utf-8", "replace")], True,
                          "a function definition changes what a later word runs")
                stack.extend((c, level, order, around) for c in reversed(node.children[1:]))
            elif kind in ("test_command", "arithmetic_expansion", "c_style_for_statement") or (
                    kind == "compound_statement" and node.children and node.children[0].type == "(("):
                nested = []
                self.expression(node, here, nested)
                stack.extend((n, level + 1, (*here, n.start_byte), ()) for n in nested if self._deeper(level))
            else:
                inner = ((_own_redirections(node), *around) if kind == "redirected_statement" else
                         () if kind in _REDIRECT_SCOPES else around)
                stack.extend((c, level, order, inner) for c in reversed(node.children))

    @staticmethod
    def _deeper(level: int) -> bool:
        if level + 1 > MAX_DEPTH:
            raise _Unparseable("nesting too deep")
        return True

    # -- pieces that are not simple commands

    def redirect(self, node, order, nested) -> None:
        builder = _WordBuilder(nested)
        operator, target, fd_dup = "", None, False
        for child in node.children:
            if child.type in ("file_descriptor",):
                continue
            if child.type in (">", ">>", "<", "&>", "&>>", ">|", "<>", ">&", "<&", ">&-", "<&-"):
                operator = child.type
            elif child.type == "heredoc_body":
                builder.nested_in(child)
            elif child.type in ("heredoc_start", "heredoc_end", "<<", "<<-", "<<<", "heredoc_content"):
                continue
            elif node.type == "heredoc_redirect":
                # tree-sitter-bash hangs the rest of the line (`&& rm x`, `| sh`, `> ~/.bashrc`) under the
                # heredoc node (tree-sitter-bash #305, #334): it is the rest of the command list, walked as such
                nested.append(child)
            elif target is None and node.type == "file_redirect":
                target = child
            elif node.type == "herestring_redirect":
                builder.build(child)
        if node.type != "file_redirect" or target is None:
            return
        word = builder.build(target)
        if operator in (">&", "<&") and (target.type == "number" or word.text == "-"):
            fd_dup = True
        if fd_dup or operator in (">&-", "<&-"):
            return
        if _unknown(word):
            self.emit(order, [operator + word.text], True, "redirection target is not a literal path")
            return
        kinds = {"<": ("read",), "<>": ("read", "write"), "<&": ("read",)}.get(operator, ("write",))
        for kind in kinds:
            self.files.append((kind, word.text, order, ()))

    def assignment(self, node, order, nested) -> None:
        builder = _WordBuilder(nested)
        if node.type == "declaration_command":
            for child in node.children:
                flag = child.text.decode("utf-8", "replace") if child.type == "word" else ""
                if flag.startswith(("-", "+")) and set(flag[1:]) & set("nif"):
                    self.emit(order, [node.text.decode("utf-8", "replace")], True,
                              "a name reference, integer or function attribute changes what later words run")
                    break
        if node.type in ("declaration_command", "unset_command"):
            # `declare 'a[$(cmd)]=1'`, `declare "$x"`: a quoted or expanded name is read by bash all the same
            for child in node.children[1:]:
                if child.type in ("variable_assignment", "variable_name"):
                    continue
                word = _WordBuilder([]).build(child)  # its substitutions are collected below, once
                reason = "" if word.text.startswith(("-", "+")) and not word.dynamic else \
                    _name_runs_code(word, self.data, node.type == "declaration_command")
                if reason:
                    self.emit(order, [node.text.decode("utf-8", "replace")], True, reason)
                    break
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "variable_assignment":
                target = current.children[0]
                name = target.text.decode("utf-8", "replace")
                if self.data.env_hazard(name.split("[")[0]):
                    self.emit(order, [current.text.decode("utf-8", "replace")], True,
                              f"assigning `{name}` changes what later commands run")
                if target.type == "subscript" and _arithmetic_runs_code(name[name.index("[") + 1:-1]):
                    self.emit(order, [current.text.decode("utf-8", "replace")], True, _SUBSCRIPT_RUNS_CODE)
                for child in current.children[2:]:
                    builder.build(child)
            elif current.type in _SUBSTITUTIONS:
                nested.append(current)
            else:
                stack.extend(current.children)

    def expression(self, node, order, nested) -> None:
        """`[[ … ]]`, `(( … ))`: arithmetic evaluates variables' values as code (`a[$(cmd)]`)."""
        builder = _WordBuilder(nested)
        builder.nested_in(node)
        text = node.text.decode("utf-8", "replace")
        if node.type == "test_command":
            if not _ARITHMETIC_TEST.search(text):
                return
            text_operands = _ARITHMETIC_TEST.sub(" ", text).replace("[[", " ").replace("]]", " ")
        else:
            text_operands = text
        if _ONLY_NUMBERS.fullmatch(text_operands) is None:
            self.emit(order, [text], True, "arithmetic evaluation runs code hidden in variables")

    # -- simple commands

    def command(self, node, depth: int, order, nested) -> None:
        around = self.around  # (read first: a command line in a prefix is walked in turn, setting it anew)
        builder = _WordBuilder(nested)
        words: list[_Word] = []
        env_unsafe = env_code = ""
        command_lines = []  # (variable, its value) of prefixes whose value is a command line (`PAGER=…`)
        env_files = []  # (variable, its value) of prefixes whose value names a file written (`GIT_TRACE=/x`)
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                name = child.children[0].text.decode("utf-8", "replace")
                values = [builder.build(value) for value in child.children[2:]]
                if self.data.env_code(name):
                    env_code = env_code or f"the environment prefix `{name}=` hands the program code or options " \
                                           "the rules cannot read"
                elif self.data.env_hazard(name.split("[")[0]):
                    env_unsafe = env_unsafe or f"the environment prefix `{name}=` changes what runs"
                value = _Word("".join(v.text for v in values), any(v.dynamic for v in values),
                              next((v.unsafe for v in values if v.unsafe), ""))
                if name in self.data.env_command_names:
                    command_lines.append((name, value))
                if name in self.data.env_written:
                    env_files.append((name, value))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                self.redirect(child, order, nested)
            elif kind == "command_name":
                words.append(builder.build(child.children[0]) if child.children else _Word(""))
            elif kind in ("comment",):
                continue
            else:
                words.append(builder.build(child))
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
                if not (word.quoted_substitution and self.inert_value(words, index)):
                    raise _Opaque(word.unsafe)
                # the option takes it whole: text no rule can read, which runs nothing and names no file
                words = [*words[:index], _Word(word.text, True, shape=(ANY,)), *words[index + 1:]]
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
        if row is not None and row.remote_command is not None and self.remote(name, row, words, argv, depth, order,
                                                                              hazard, literal):
            return
        if row is not None and row.leading is not None and len(words) > 1 and words[1].text.startswith("-"):
            # `git -C x push` is seen as itself and as `git push`: a deny or ask of either decides, and an
            # allow of the whole line covers it (`git -C x push` is not the `git push` an allow of that names)
            at, _ = _getopt(words, 1, row.leading, name)
            if 1 < at < len(words):
                own_hazard = hazard or self.program_hazard(name, words[:at], order, depth)
                self.emit(order, argv, hazard=own_hazard, literal=literal, wraps=at)
                self.runners += 1
                try:
                    self.simple([head, *words[at:]], depth, (*order, at), env_hazard)
                finally:
                    self.runners -= 1
                return
        hazard = hazard or self.program_hazard(name, words, order, depth)
        self.emit(order, argv, hazard=hazard, literal=literal)

    def remote(self, name: str, row: Program, words: list[_Word], argv, depth: int, order, hazard: str,
               literal) -> bool:
        """`ssh [options] HOST CMD…`: the words after the host are joined into a command line the remote
        user's shell runs (this machine's, for localhost), read as `sh -c` reads it. False: no command."""
        at, _ = _getopt(words, 1, row.remote_command, name)
        if at + 1 >= len(words):
            return False
        command = words[at + 1:]
        if any(map(_unknown, command)):  # expanded here, run there: any text
            raise _Opaque(f"`{name}` runs a remote command line that holds an expansion or a pattern")
        hazard = hazard or self.program_hazard(name, words[:at + 1], order, depth)  # `-o ProxyCommand=…`
        self.emit(order, argv, hazard=hazard, literal=literal, wraps=at + 1)
        self.nested_shell(" ".join(w.text for w in command), depth, (*order, at + 1))
        return True

    def program_hazard(self, name: str, words: list[_Word], order, depth: int) -> str:
        """Options that run code or write files, read from the program's data row."""
        row = self.data.programs.get(name)
        if row is None:
            return ""
        if row.hazard_always:
            return row.hazard_always
        hazard = ""
        operands_seen = False
        verb = False  # the first operand named the subcommand (`git show`): no file it reads
        # after `--` every word is an operand (a script, a file written); one that looks like an option is
        # read as one too: find's `-exec` and `-delete` follow its `--` and still run, and an option read
        # where the program meant a name can only add a hazard (refuse an allow), never hide one
        options_done = False
        script_given = False
        scripts: list[str] = []
        operands: list[_Word] = []  # its operands but a script (`sed SCRIPT FILE`): for the files it writes
        into: list[_Word] = []  # directories an option names for it to write into (`cp -t DIR`)
        written_with = False  # one of `written_with` is given (`sed -i`)
        pattern_given = False  # one of `read_patterns` is given (`grep -e P`): the first operand is a file too
        archived = {"creates": False, "extracts": "*" in row.extracts, "lists": False, "anywhere": False}
        archives: list[_Word] = []  # `tar -f A`
        member_dir: _Word | None = _Word(".")  # where members land and operands are read (`tar -C DIR`)
        if row.bundled_first and len(words) > 1 and not words[1].text.startswith("-") and not _unknown(words[1]):
            words = [words[0], _Word("-" + words[1].text), *words[2:]]  # `tar xzf a.tgz` is `tar -xzf a.tgz`
        recursive = "*" in row.recursive  # a directory operand is read with every file below it (`grep -r`)
        names_read: list[_Word | None] = []  # `grep --include=GLOB`: the base names read below a directory
        starts: list[_Word] = []  # the operands before its first option (find's starting points)
        option_seen = removing = False  # `removing`: a `removes_below` option is given (`find -delete`)
        first_row = row  # the row before a subcommand's (whose first operand is the subcommand)
        tree_forced = tree_kept = False  # a `tree_options` / `tree_keeping` option is given
        patch_given = quiet_given = False  # a `history_patch` / `history_quiet` option is given
        dashes_at: int | None = None  # how many operands came before `--`
        index = 1
        while index < len(words):
            word = words[index]
            text = word.text
            if word.dynamic and (options_done or not text.startswith("-")):
                operands_seen = True
            if text == "--" and not options_done and not row.options_after_dashes:
                options_done = True
                dashes_at = len(operands)
                index += 1
                continue
            if word.optionable and not options_done and not text.startswith("-") and row.options_matter:
                # `tar cf x.tar *` with a file named `--checkpoint-action=exec=sh x`: the word may be an option
                remedy = "" if row.options_after_dashes else f"; `./{text}` or `-- {text}` cannot be"
                if row.runs_commands_after(row.global_only if operands_seen else frozenset()):
                    raise _Opaque(f"`{name}` argument {_may_be_option(word)}, and some of its options run "
                                  f"commands{remedy}")
                if row.writes:  # as a redirection to an expansion: a write no rule can place
                    raise _Opaque(f"`{name}` argument {_may_be_option(word)}, and some of its options write a "
                                  f"file{remedy}")
                hazard = hazard or f"`{name}` argument {_may_be_option(word)}{remedy}"
            if options_done or not text.startswith("-") or text == "-":
                if not operands_seen and not options_done and not word.dynamic and row.subcommands:
                    # `git clone -u CMD`: the subcommand's own options; an unknown one (an alias) keeps all
                    row, verb = row.subcommands.get(text, row), True
                    recursive = recursive or "*" in row.recursive  # `git grep`: every file below, always
                    if row.settings:  # `git config KEY VALUE`: a setting later git commands run
                        self.settings_written(name, row, text, words[index + 1:], depth, (*order, index + 1))
                elif row.runs_rest_after and text == row.runs_rest_after and not word.dynamic:
                    if row.runs_rest_as_argv:  # `git bisect run CMD ARG…`: run as given
                        if index + 1 < len(words):
                            self.simple(words[index + 1:], depth, (*order, index + 1))
                    else:
                        self.rest_command_line(f"{name} {text}", words[index + 1:], depth, (*order, index + 1))
                    if row.tree:  # `git bisect run CMD`: each commit tested is checked out
                        self.tree_rewritten(words, order)
                    return hazard or f"`{name} {text}` runs a command"
                if row.first_operand_script and not operands_seen and not script_given:
                    scripts.append(text)
                    script_given = True
                elif row.command_operands and word.dynamic and (":" not in text or "$" in text.partition(":")[0]):
                    # `socat - "$ADDR"`: an address whose type is not written may be `EXEC:`
                    raise _Opaque(f"`{name}` operand is an expansion that may be a command address")
                elif row.command_operands and text.lower().startswith(row.command_operands):
                    # `socat - EXEC:"rm x",pty`: the line up to the address's own options
                    kind, _, line = text.partition(":")
                    self.command_line_value(f"{name} {kind}:", _Word(line.split(",", 1)[0], word.dynamic,
                                                                     word.unsafe), depth, (*order, index))
                    hazard = hazard or f"`{name} {kind}:` runs a command"
                else:
                    operands.append(word)
                    if not option_seen:
                        starts.append(word)
                operands_seen = True
                if not (options_done and text.startswith("-") and text != "-" and not word.dynamic):
                    index += 1
                    continue
            option_seen = True
            removing = removing or _uses(text, row.removes_below, row.clusters)
            tree_forced = tree_forced or _uses(text, row.tree_options, row.clusters)
            tree_kept = tree_kept or _uses(text, row.tree_keeping, row.clusters)
            if row.history:  # a quiet option counts as the whole word only: `-Ssecret` is no `-s`
                patch_given = patch_given or _patch_option(text, row)
                quiet_given = quiet_given or text.partition("=")[0] in row.history_quiet
            if word.dynamic:
                if row.runs_commands:  # `--to-command="$C"` runs what $C holds
                    raise _Opaque(f"`{name}` option is an expansion, and some of its options run commands")
                # it may be any option, and change which operands are files (`cp -"$X" a b` with X=t writes
                # a/b): a program that reads or writes files may then read or write any
                for kind in ("read",) * row.reads_files + ("write",) * row.writes_files:
                    self.files.append((kind, display((ANY,)), order, (ANY,)))
                return "an option is an expansion"
            for option in row.exec:
                if text == option:
                    rest = []
                    index += 1
                    while index < len(words) and words[index].text not in (";", "+"):
                        rest.append(words[index])
                        index += 1
                    if rest:  # `{}` is each file found: a word holding it is unknown (`-exec sh -c 'cat {}'`)
                        # each path found starts with a starting point, read above: never an option
                        self.simple(_filled(rest, ("{}",), optionable=False), depth, (*order, index))
                    hazard = hazard or f"`{name} {option}` runs a command"
                    break
            for option in row.opaque:
                if option_hit(text, option, row.clusters) is not None:
                    raise _Opaque(f"`{name} {option}` runs code the rules cannot read")
            skip = row.global_only if operands_seen else frozenset()
            # a word may read as several options (`--exec` is also `--exec-cmd` abbreviated): each takes
            # the same value word, and the index moves past it once, below
            commands, command_value = _option_words(text, row.commands - skip, words, index, row.clusters)
            for option, line in commands:
                self.command_line_value(f"{name} {option}", line or _Word(""), depth, (*order, index))
                hazard = hazard or f"`{name} {option}` runs a command"
            for option, value in _option_words(text, row.program_files, words, index, row.clusters)[0]:
                if value is not None and (value.text == "-" or _names_stdin(value.text)):
                    raise _Opaque(f"`{name} {option}` reads its program from stdin")
            settings, setting_value = _option_words(text, row.config - skip, words, index, row.clusters)
            for option, value in settings:
                # an expansion names no harmless key: opaque
                self.config_setting(name, row, option, value.text if value else "", depth, (*order, index))
            for option in row.hazard - skip:
                if option_hit(text, option, row.clusters) is not None:
                    hazard = hazard or f"`{name} {option}` runs code or changes files"
            written_with = written_with or _uses(text, row.written_with, row.clusters)
            pattern_given = pattern_given or _uses(text, row.read_patterns, row.clusters)
            for key, options in (("creates", row.creates), ("extracts", row.extracts), ("lists", row.lists),
                                 ("anywhere", row.members_anywhere)):
                archived[key] = archived[key] or _uses(text, options, row.clusters)
            recursive = recursive or _uses(text, row.recursive, row.clusters)
            names_read += [value for _, value in
                           _option_words(text, row.read_only_names, words, index, row.clusters)[0]]
            written, written_value = _option_words(text, (row.writes | row.chdir | row.into | row.archive) - skip,
                                                   words, index, row.clusters)
            for option, value in written:
                if option in row.into:
                    into.append(value or _Word(""))
                elif option in row.archive:
                    archives.append(value or _Word(""))
                elif option in row.chdir and (row.creates or row.extracts):  # its own, not the shell's
                    member_dir = value if value is not None and not _unknown(value) else None
                elif option in row.chdir:
                    self.changes_directory()
                elif value is not None and value.text:  # `-o "$f"`: a write of a file pattern
                    self.files.append(("write", value.text, order, _file_shape(value) if _unknown(value) else ()))
                else:
                    hazard = hazard or f"`{name} {option}` writes a file that is not known"
            read_options, read_value = _option_words(text, row.reads - skip, words, index, row.clusters)
            for option, value in read_options:  # `grep -f .env x`, `du --files0-from=.env`
                if value is not None and value.text:
                    self.files.append(("read", value.text, order, _file_shape(value) if _unknown(value) else ()))
                else:
                    hazard = hazard or f"`{name} {option}` reads a file that is not known"
            value_at = max(command_value, written_value, setting_value, read_value)  # `git -c K=V`: V is no operand
            if value_at > index:
                index = value_at
            for option in row.script:
                value = option_hit(text, option, row.clusters)
                if value is not None:
                    if not value and index + 1 < len(words):
                        index += 1
                        value = words[index].text
                    scripts.append(value or "")
                    script_given = True
            if any(option_hit(text, option, row.clusters) == "" for option in row.values):
                index += 1  # the option's value is the next word, not an operand (`sed -l 5 SCRIPT`)
            index += 1
        if row.tree and _rewrites_tree(row, operands if row is first_row else operands[1:], tree_forced, tree_kept,
                                       options_done):
            self.tree_rewritten(words, order)
        if row.written or row.written_assignments or into:
            unknown = self.written_files(name, row, operands, into, written_with, order, recursive)
            hazard = hazard or unknown
        if removing:  # `find DIR -delete`: every starting point (`.` when none) and every file below it
            for start in starts or [_Word(".")]:
                self.written_below(start, order)
        if row.creates or row.extracts:
            if row.archive_first:  # `7z a ARCHIVE FILES…`: the archive, then what goes in it
                archives, operands = [*archives, *operands[:1]], operands[1:]
            self.archive_files(row, archived, archives, operands, member_dir, order)
        if row.read or row.read_assignments:
            self.read_files(_read_operands(row, operands[verb:], pattern_given, bool(into)), recursive, order,
                            _name_globs(names_read), tree=True)
        if row.read == "clone_source" and len(operands) > 1 and (_unknown(operands[1]) or
                                                                  _local_repository(operands[1].text)):
            source = operands[1]  # `git clone . /tmp/c`: every file of it is copied
            if source.text.startswith("file://") and not _unknown(source):
                source = _Word(source.text[len("file://"):])
            self.read_files([source], True, order)
        history = _history_reads(row, patch_given, quiet_given, operands, dashes_at) if verb else None
        if history is not None:  # every file below each, as the repository's history holds them
            start = len(self.files)
            # what the work tree, the index and HEAD hold (`git diff`, no revision named) is all the sandbox
            # must hide (`gitstore`); any other history may print a file deleted long ago
            revisions = operands[1:dashes_at] if dashes_at is not None else operands[1:]
            self.read_files(history, True, order, tree=row.history_worktree and not revisions)
            read = set(self.files[:start])  # what its operands' reads named already is not a second part
            self.files[start:] = [access for access in self.files[start:] if access not in read]
        if row.safe_script:
            for script in scripts:
                if not row.safe(script):
                    if row.opaque_script and compiled(row.opaque_script).search(script):
                        raise _Opaque(f"`{name}` script may run a command")
                    hazard = hazard or f"`{name}` script may write or read files"
        return hazard

    def written_files(self, name: str, row: Program, operands: list[_Word], into: list[_Word], written_with: bool,
                      order, recursive: bool = False) -> str:
        """The files a file program writes, decided as `write` calls of them (`cp x .claude/s`, `sed -i … f`,
        `dd of=f`). One it cannot name (an expansion, a pattern, a source's name in a directory) is a write
        of a file pattern (`file_pattern`): a deny whose glob may meet it applies, an allow only one that
        surely covers it. Copying `recursive`ly (`cp -r SRC DIR`), DIR is written with every file below it:
        `SRC/.` copies SRC's contents into DIR, and a DIR that does not exist becomes the copy itself."""
        targets: list[_Word] = []
        sources: list[_Word] = []
        if row.written_assignments:  # `dd if=a of=b`
            for word in operands:
                variable, equals, value = word.text.partition("=")
                if equals and variable in row.written_assignments:
                    targets.append(_Word(value, word.dynamic, word.unsafe, word.glob))
        elif row.written == "all":
            targets = operands
        elif row.written == "first":
            targets = operands[:1]
        elif row.written == "second":  # `uniq IN OUT`, `xxd IN OUT`
            targets = operands[1:2]
        elif row.written in ("rest", "rest_or_here"):  # `git restore PATH…`: all but the subcommand
            targets = operands[1:] or ([_Word(".")] if row.written == "rest_or_here" else [])  # `git clean`
        elif row.written == "after_verb":  # `git worktree add PATH`: all but the subcommand and its verb
            targets = operands[2:]
        elif row.written == "clone":  # `git clone URL [DIR]`: DIR, else the name git gives it
            targets = operands[2:3] or [_clone_name(word) for word in operands[1:2]]
        elif row.written == "prefix":  # `split FILE PREFIX`: PREFIXaa, PREFIXab … (`xaa` … with no PREFIX)
            prefix = operands[1] if len(operands) > 1 else _Word("x")
            items = (*(_file_shape(prefix) if _unknown(prefix) else (prefix.text,)), NAME)
            self.files.append(("write", display(items), order, items))
        elif row.written == "destination":
            if into:  # `cp -t DIR SRC…`: each source, into DIR
                sources = operands
            elif len(operands) > 1:
                targets, sources = operands[-1:], operands[:-1]
                into = targets  # `cp a b DIR`: DIR may be a directory, each source keeps its name in it
        if row.written_with and not written_with:
            return ""
        if row.moves:
            targets = targets + sources
        if row.written_recursive:  # `git rm -r PATH`: each with every file below it
            for target in targets:
                self.written_below(target, order)
            targets = []
        written = [(target.text, _file_shape(target) if _unknown(target) else ()) for target in targets]
        for directory in into:  # each source keeps its name there (`cp -t DIR`, `cp a b DIR`)
            for source in sources or [None]:
                kept = _base_name(source)
                if _unknown(directory) or NAME in kept or ONE in kept:
                    home = _file_shape(directory) if _unknown(directory) else (directory.text.rstrip("/") or "/",)
                    items = (*home, "/", *kept)
                    written.append((display(items), items))
                else:
                    written.append((posixpath.join(directory.text, "".join(kept)), ()))
        if recursive and row.written == "destination":
            for directory in into:
                self.written_below(directory, order)
        hazard = ""
        for path, items in written:
            if not path:
                hazard = hazard or f"`{name}` writes a file with an empty name"
            else:
                self.files.append(("write", path, order, items))
        return hazard

    def archive_files(self, row: Program, archived: dict, archives: list[_Word], operands: list[_Word],
                      member_dir: _Word | None, order) -> None:
        """An archiver's files: `tar -c` writes its archive and reads each operand with every file below it
        (relative to `-C DIR`); `tar -x`, `unzip`, `patch` write every member below the directory they
        extract into (`DIR/**`), or anywhere (`tar -P`, a directory not known). The archive of `tar -x` is
        read."""
        def placed(word: _Word) -> _Word:
            if member_dir is None:
                return _Word(word.text, True)  # below a directory not known: any file
            if member_dir.text == "." or posixpath.isabs(word.text):
                return word
            return _Word(posixpath.join(member_dir.text, word.text), word.dynamic, word.unsafe, word.glob, False,
                         (member_dir.text, "/", *word.shape) if word.shape else ())
        if archived["creates"]:
            for archive in archives:
                if archive.text and archive.text != "-":
                    self.files.append(("write", archive.text, order, _file_shape(archive) if _unknown(archive) else ()))
            self.read_files([placed(word) for word in operands], True, order, tree=True)
        # both, where one word may read as either (`7z x a.7z -aoa`: `-aoa` is an overwrite mode, not `a`)
        if archived["extracts"] and not archived["lists"] and not (row.written and operands):
            # (`patch FILE < x.diff` writes FILE, its `written` operand; with none, the files its diff names)
            self.read_files([archive for archive in archives if archive.text], False, order)
            if archived["anywhere"] or member_dir is None or _unknown(member_dir):
                items: tuple = (ANY,)
            else:
                items = (member_dir.text.rstrip("/") or "/", "/", DEEP)
            self.files.append(("write", display(items), order, items))

    def writing_wrapper(self, name: str, wrapper, words: list[_Word], i: int, strings: list, argv, depth: int,
                        order, hazard: str, literal) -> bool:
        """`script [-c CMD] [FILE]`: each operand (options may follow them) is a file it writes; it runs its
        `-c` command line, else a shell that reads its commands from stdin, which no rule can read."""
        while i < len(words):
            if words[i].text.startswith("-") and words[i].text != "-":
                i, late = _getopt(words, i, wrapper.options, name)
                strings += [value for option, value in late if option in wrapper.string]
                for option, value in late:
                    if option in wrapper.writes and value:
                        self.files.append(("write", value, order, ()))
                continue
            word = words[i]
            self.files.append(("write", word.text, order, _file_shape(word) if _unknown(word) else ()))
            i += 1
        if not strings:
            raise _Opaque(f"`{name}` without a command runs a shell that reads its commands from stdin")
        self.emit(order, argv, hazard=hazard, literal=literal, wraps=len(argv))
        for string in strings:
            self.nested_shell(string, depth, (*order, len(argv)))
        return True

    def read_files(self, operands: list[_Word], recursive: bool, order, names: tuple = (), tree: bool = False) -> None:
        """The files a program reads, decided as `read` calls of them (`cat .env`, `grep KEY .env`); one it
        cannot name is a read of a file pattern. Read recursively, a directory is itself and every file
        below it (`src/**`), or each file below it whose base name one of `names` matches (`src/**.py`,
        `grep -r --include='*.py'`); with no operand, the working directory's. `tree`: the files below are read
        because they are there, not named (`FileAccess.tree`)."""
        if recursive and not operands:
            operands = [_Word(".")]
        for word in operands:
            if word.text == "-" and not _unknown(word):
                continue  # stdin
            items = _file_shape(word) if _unknown(word) else ()
            if word.text:
                self.files.append(("read", word.text, order, items))
            if recursive:
                for name in names or ((),):  # `DEEP` may end in `/`: `src/` + `**` + `*.py` is any depth
                    below = (*_below(word), *name)
                    self.files.append(("read", display(below), order, below))
                    if tree:
                        self.trees.add(self.files[-1])

    def tree_rewritten(self, words: list[_Word], order) -> None:
        """A command that may rewrite any file of its repository (`git checkout BRANCH`, `git merge`): a write
        of any file, as the repository's root may be any directory above the working one."""
        self.written_anywhere(f"`{' '.join(w.text for w in words)}` may rewrite any file of its repository", order)
        self.trees.add(self.files[-1])  # whichever files differ, none named: the sandbox keeps what it protects

    def env_file_written(self, variable: str, value: _Word, order) -> None:
        """`GIT_TRACE=/x git status`: the program appends to the file the variable names (for git's traces only
        an absolute path is a file: `1`, `true`, `2` mean stderr or a descriptor)."""
        if _unknown(value):
            self.written_anywhere(f"`{variable}=` names a file the program writes, which the rules cannot read", order)
        elif value.text and (self.data.env_written[variable] == "any" or value.text.startswith("/")):
            self.files.append(("write", value.text, order, ()))

    def written_anywhere(self, why: str, order) -> None:
        """A write of any file, for the reason `why` (no word of the line names the file)."""
        self.file_reasons[len(self.files)] = why
        self.files.append(("write", display((ANY,)), order, (ANY,)))

    def written_below(self, word: _Word, order) -> None:
        """A path written with every file below it (`find DIR -delete`, `git restore DIR`)."""
        if word.text:
            self.files.append(("write", word.text, order, _file_shape(word) if _unknown(word) else ()))
        below = _below(word)
        self.files.append(("write", display(below), order, below))

    def settings_written(self, name: str, row: Program, subcommand: str, words: list[_Word], depth: int,
                         order) -> None:
        """`git config [--global] KEY VALUE`: a setting every later git command reads, checked as `git -c
        KEY=VALUE` is (a command line is read as one, a key not known to be harmless is opaque). Reading,
        listing or removing one writes nothing that runs."""
        settings, operands, index = row.settings, [], 0
        while index < len(words):
            word = words[index]
            if word.text in settings.get("opaque", ()) or word.text.split("=")[0] in settings.get("opaque", ()):
                raise _Opaque(f"`{name} {subcommand} {word.text}` may change what runs")
            if not word.dynamic and (word.text in settings.get("reads", ())
                                     or word.text.split("=")[0] in settings.get("reads", ())):
                return
            if word.text.startswith("-") and not word.dynamic:
                index += 2 if word.text in settings.get("values", ()) else 1
                continue
            operands.append(word)
            index += 1
        if operands and operands[0].text in settings.get("verbs", ()):
            operands = operands[1:]  # `git config set KEY VALUE` (git 2.46)
        if len(operands) < 2:
            return  # `git config KEY`: reads it
        key, value = operands[0], operands[1]
        if _unknown(key):
            raise _Opaque(f"`{name} {subcommand}` sets a key that is an expansion")
        self.config_setting(name, row, subcommand, f"{key.text}={value.text}", depth, order)

    def rest_command_line(self, what: str, words: list[_Word], depth: int, order) -> None:
        """`git submodule foreach [--recursive] CMD…`: after its options, the words are one command line."""
        while words and words[0].text.startswith("-") and not words[0].dynamic:
            words = words[1:]
        if any(map(_unknown, words)):
            raise _Opaque(f"`{what}` runs a command line that holds an expansion or a pattern")
        self.command_line_value(what, _Word(" ".join(w.text for w in words)), depth, order)

    def config_setting(self, name: str, row: Program, option: str, setting: str, depth: int, order) -> None:
        """`git -c KEY=VALUE`, `ssh -o KEY=VALUE`: a key whose value is a command line is read as one; a key
        not known to be harmless may run anything (an alias renames a subcommand, a hook path runs its
        files): opaque."""
        split = compiled(r"\s*=\s*|\s+").search(setting)  # `KEY=VALUE`, or ssh's `KEY VALUE` too
        key, value = (setting[:split.start()], setting[split.end():]) if split else (setting, "")
        key = key.lower()  # git's and ssh's key names are case-insensitive
        if option in row.config_from_env:  # `--config-env=KEY=VAR`: the value is not in the command
            value = None
        if any(glob_match(glob, key) for glob in row.config_commands):
            if value is None:
                raise _Opaque(f"`{name} {option}` sets `{key}` from the environment: a command line not in the text")
            self.command_line_value(key, _Word(value), depth, order)
        elif not any(glob_match(glob, key) for glob in row.config_harmless):
            raise _Opaque(f"`{name} {option} {key}=…` may change what runs")

    def interpreter(self, name: str, row: Interpreter, words, argv, order, hazard: str, literal) -> None:
        """python, node, perl, awk, …: code written in the command (`-c CODE`, an awk program) or read
        from stdin may run any program and the rules cannot read it: the command is opaque, as
        `bash -c "$X"` is. A program file it runs is its own code, as any program's is."""
        i, opts = _getopt(words, 1, row.options, name, row.ends, row.attached_long, row.single_dash_long)
        rest = words[i:]
        if row.permutes:  # `psql DB -c SQL`: options may follow operands
            rest = []
            while i < len(words):
                word = words[i]
                if word.dynamic or word.unsafe or word.optionable:
                    raise _Opaque(f"`{name}` argument {_may_be_option(word)}")
                if word.text == "--":
                    rest += words[i + 1:]
                    break
                if word.text.startswith("-") and word.text != "-":
                    i, more = _getopt(words, i, row.options, name, row.ends, row.attached_long, row.single_dash_long)
                    opts += more
                else:
                    rest.append(word)
                    i += 1
        names = {option for option, _ in opts}
        letters = {option[1] for option in row.code if len(option) == 2}
        codes = []
        for option, value in opts:
            if option in row.code:
                codes.append((option, value or ""))
            elif row.unclear_optional and value and len(option) == 2 and option[1] in row.options.optional \
                    and letters & set(value):
                # `perl -0e CODE`: where the attached value ends is the program's to say
                raise _Opaque(f"`{name} {option}{value}` may hold a code option")
        files = [value for option, value in opts if option in row.program]
        given = bool(codes) or bool(files) or bool(names & row.ends)
        if row.code_operands_from is not None:  # `sqlite3 DB SQL…`: operands from there on are code
            for word in rest[row.code_operands_from:]:
                if word.dynamic or word.unsafe:
                    raise _Opaque(f"`{name}` code is an expansion")
                codes.append(("an operand", word.text))
                given = True
        if rest and (rest[0].dynamic or rest[0].unsafe or rest[0].optionable) \
                and not (given and row.code_operands_from is None):
            raise _Opaque(f"`{name}` argument {_may_be_option(rest[0])}")  # it may be `-c`
        if not given and rest and row.code_operands_from is None and not row.operands_not_program:
            if row.code_operand:
                codes.append(("program", rest[0].text))
                given = True
                rest = rest[1:]  # the operands after the program
            else:
                files.append(rest[0].text)
        if any(value and (value == "-" or _names_stdin(value)) for value in files):
            raise _Opaque(f"`{name}` reads its {row.language} program from stdin")
        for option, code in codes:
            if not row.unsafe_code or compiled(row.unsafe_code).search(code):
                raise _Opaque(f"`{name}` runs {row.language} code written in the command (`{option}`), "
                              "which the rules cannot read")
            if row.writing_code and compiled(row.writing_code).search(code):
                hazard = hazard or f"`{name}` program may write a file"
                # (`print > "f"`): a file the program names, which the rules do not read: any file
                self.written_anywhere(f"the `{name}` program may write a file it names", order)
        reading = names & row.stdin
        if reading:
            raise _Opaque(f"`{name} {min(reading)}` reads {row.language} code from stdin")
        if not given and not names & row.info:
            if rest and rest[0].text in row.code_subcommands:
                raise _Opaque(f"`{name} {rest[0].text}` runs code the rules cannot read")
            if row.operands_not_program:  # `psql DB`, `sqlite3 DB`: no code given, so it reads stdin
                raise _Opaque(f"`{name}` reads {row.language} commands from its terminal or stdin "
                              "(none are given here)")
            if rest and rest[0].text in row.stdin_subcommands and any(w.text == "-" for w in rest[1:]):
                raise _Opaque(f"`{name} {rest[0].text} -` reads its {row.language} program from stdin")
            if rest[:1] and rest[0].text == "-" or not rest and row.bare_reads_stdin:
                raise _Opaque(f"`{name}` reads its {row.language} program from stdin")
        for option in sorted(names & row.hazard):
            hazard = hazard or f"`{name} {option}` writes files or loads code"
        if files:  # the program file is read (a syntax error prints its lines): `python3 .env`
            self.read_files([_Word(text) for text in files], False, order)
        if row.reads_operands:  # `awk PROGRAM FILE…`; `x=1` is an assignment
            self.read_files([word for word in rest if word.dynamic or not _ASSIGNMENT.match(word.text)], False, order)
        self.emit(order, argv, hazard=hazard, literal=literal)

    def wrapper(self, name, wrapper, words, argv, depth, order, hazard, literal) -> bool:
        """Emit the wrapper's own segment and analyse the wrapped command; False: it runs nothing (or, for
        a wrapper only through a subcommand, `uv run`, it is another subcommand: an ordinary program)."""
        start, before = 1, []
        if wrapper.subcommands:
            if not any(w.text in wrapper.subcommands for w in words[1:]):
                return False
            if words[1].text in wrapper.subcommands:  # `cmake -E CMD…`: a subcommand that looks like an option
                start, before = 1, []
            else:
                start, before = _getopt(words, 1, wrapper.options, name)  # the program's own options first
            if start >= len(words) or words[start].text not in wrapper.subcommands:
                return False
            start += 1
        if wrapper.opaque_always:
            raise _Opaque(wrapper.opaque_always)
        if wrapper.user_shell:
            self.user_shell(name, wrapper, words, argv, depth, order, hazard, literal)
            return True
        if wrapper.harmless_subcommands:
            at, _ = _getopt(words, 1, wrapper.options, name)
            if at < len(words) and words[at].text in wrapper.harmless_subcommands \
                    and not any(w.dynamic or w.text.endswith(";") for w in words[at:]):
                return False  # `tmux ls`: an ordinary program
            raise _Opaque(f"`{name}` runs commands or types into a shell through its commands (only "
                          f"{', '.join(sorted(wrapper.harmless_subcommands))} are read)")
        if wrapper.coproc:
            rest = words[1:]
            if any(w.text in ("{", "}", "(", ")") for w in rest):
                raise _Opaque("coproc with a compound command is not understood")
            if not rest:
                return False
            self.emit(order, argv, hazard=hazard, literal=literal, wraps=1)
            self.simple(rest, depth, (*order, 1))
            return True
        i = start
        if wrapper.numeric_option and i < len(words) and words[i].text[:1] == "-" and words[i].text[1:].isdigit():
            i += 1
        i, opts = _getopt(words, i, wrapper.options, name)
        opts = before + opts
        names = {o for o, _ in opts}
        if names & wrapper.no_run:
            return False
        if names & wrapper.opaque:
            raise _Opaque(f"`{name}` option hides what runs")
        for option, value in opts:
            if option in wrapper.writes and value:
                self.files.append(("write", value, order, ()))
            if option in wrapper.chdir:
                self.changes_directory()
        strings = [value for option, value in opts if option in wrapper.string]
        if wrapper.operands_written:
            return self.writing_wrapper(name, wrapper, words, i, strings, argv, depth, order, hazard, literal)
        if wrapper.dash_is_flag and i < len(words) and words[i].text == "-":
            i += 1
        assigned = False
        if wrapper.assignments:
            while i < len(words) and "=" in words[i].text and _is_name(words[i].text.partition("=")[0]):
                assigned = True
                if words[i].dynamic:
                    raise _Opaque(f"`{name}` assignment is an expansion")
                variable, _, value = words[i].text.partition("=")
                if self.data.env_code(variable):
                    raise _Opaque(f"`{name}` sets `{variable}`, which hands the program code or options the rules "
                                  "cannot read")
                if self.data.env_hazard(variable):
                    hazard = hazard or f"`{name}` sets `{variable}`, which changes what runs"
                if variable in self.data.env_command_names:
                    self.command_line_value(variable, _Word(value), depth, (*order, i))
                i += 1
        for _ in range(wrapper.positional):
            if i >= len(words):
                return False
            if _unknown(words[i]):  # a pattern may be several words: the command moves
                raise _Opaque(f"`{name}` argument `{words[i].text}` is an expansion or a pattern of file names")
            i += 1
        if wrapper.positional and i < len(words) and words[i].text == "--":
            i += 1  # `aws-vault exec PROFILE -- CMD`: read as the command it ends the options of
        if wrapper.positional and (wrapper.permutes or wrapper.string and not strings):
            # `flock FILE -c CMD`, `kubectl exec POD -c CONTAINER -- CMD`: options may follow the positional
            i, late = _getopt(words, i, wrapper.options, name)
            late_names = {o for o, _ in late}
            if late_names & wrapper.no_run:
                return False
            if late_names & wrapper.opaque:
                raise _Opaque(f"`{name}` option hides what runs")
            strings += [value for option, value in late if option in wrapper.string]
            names |= late_names
        rest = words[i:]
        if wrapper.stop_at:
            cut = next((k for k, w in enumerate(rest) if w.text in wrapper.stop_at), len(rest))
            rest = rest[:cut]
        # `xargs -I{} sh -c '{}'`: what replaces the string comes from input, so a word holding it is unknown
        holes = [*wrapper.placeholders, *((value or "{}") for option, value in opts if option in wrapper.replaces)]
        filled = _filled(rest, holes)
        if wrapper.appends and not names & wrapper.replaces and filled == rest and rest \
                and self._runs_its_arguments(rest):
            # no replacement string: input is appended as arguments, which may be options (`-exec rm x ;`)
            raise _Opaque(f"`{name}` appends input to `{rest[0].text}`, whose arguments can make it run commands")
        if wrapper.appends and not wrapper.joins and not names & wrapper.replaces and rest:
            # its input is appended as arguments: one more word no rule can read (`xargs cp x` copies x over
            # whatever file the input names; `find . | xargs cat` reads every file found). (`parallel`
            # joins its arguments, listed after `:::`, into a command line, read as one.)
            filled = [*filled, _Word("<input>", dynamic=True, optionable=True)]
        rest = filled
        if wrapper.each_string:  # `hyperfine 'make' 'ls'`: each word is a command line
            if any(w.dynamic or w.unsafe for w in rest):
                raise _Opaque(f"`{name}` runs a command line that is an expansion")
            strings += [w.text for w in rest]
            if not strings:
                return False
        if strings:
            self.emit(order, argv, hazard=hazard, literal=literal, wraps=len(argv))
            for string in strings:
                self.nested_shell(string, depth, (*order, len(argv)))
            return True
        if not rest:
            if wrapper.stdin_shell_always or names & wrapper.stdin_shell:
                raise _Opaque("the shell reads its program from stdin")
            if not wrapper.default:
                return False
            rest = [_Word(wrapper.default)]
        transparent = wrapper.transparent and not hazard and not assigned and (
            wrapper.transparent_options is None or names <= wrapper.transparent_options)
        self.emit(order, argv, hazard=hazard, literal=literal, wraps=i, deny_only=transparent)
        self.runners += wrapper.runner
        try:
            if wrapper.joins and not names & wrapper.no_join:
                if any(w.dynamic for w in rest):
                    raise _Opaque(f"`{name}` joins an expansion into a shell command")
                self.nested_shell(" ".join(w.text for w in rest), depth, (*order, i))
            else:
                self.simple(rest, depth, (*order, i))
        finally:
            self.runners -= wrapper.runner
        return True

    def user_shell(self, name, wrapper, words, argv, depth, order, hazard, literal) -> None:
        """`su [options] [-] [USER [ARG…]]`: options anywhere before `--`, the first other word is the user,
        the rest are arguments to the user's shell (`su root -c CMD`, `su root -- -c CMD`); with one of
        `command_options` (`runuser -u USER CMD…`) the rest are a command run directly."""
        strings, rest, user, i, n = [], [], False, 1, len(words)
        names: set = set()
        while i < n:
            word = words[i]
            if _unknown(word):
                raise _Opaque(f"`{name}` argument `{word.text}` is an expansion or a pattern of file names")
            if word.text == "-":
                i += 1
            elif word.text.startswith("-") and not (names & wrapper.command_options and user):
                i, opts = _getopt(words, i, wrapper.options, name)
                names |= {option for option, _ in opts}
                strings += [value for option, value in opts if option in wrapper.string]
                if words[i - 1].text == "--":
                    rest = words[i:]
                    break
            elif names & wrapper.command_options or user:
                rest = words[i:]
                break
            else:
                user, i = True, i + 1
        if names & wrapper.no_run:
            self.emit(order, argv, hazard=hazard, literal=literal)
            return
        if names & wrapper.command_options:  # `runuser -u USER [--] CMD…`: run directly
            if not rest:
                raise _Opaque(f"`{name}` runs a shell reading its program from stdin")
            self.emit(order, argv, hazard=hazard, literal=literal, wraps=len(argv) - len(rest))
            self.simple(rest, depth, (*order, len(argv) - len(rest)))
            return
        if not user and rest:  # `su -- root …`
            rest = rest[1:]
        self.emit(order, argv, hazard=hazard, literal=literal, wraps=len(argv))
        for string in strings:
            self.nested_shell(string, depth, (*order, len(argv)))
        if not strings:  # the shell gets the arguments: `su root -- -c CMD`, `su root script`
            self.shell([_Word("sh"), *rest], ["sh", *(w.text for w in rest)], depth, (*order, len(argv)), "")

    def _runs_its_arguments(self, command: list[_Word]) -> bool:
        """Whether arguments appended to `command` can make the program it names run a command or write a file
        no rule can place: a shell, an interpreter, a wrapper, or a program with options that run code or
        write (after a known subcommand, that subcommand's: `xargs git add`). An expansion may be any of them."""
        head = command[0]
        if head.dynamic or head.unsafe:
            return True
        data = self.data
        name = _program_name(head.text, data)[0]
        row = data.programs.get(name)
        if row is not None and len(command) > 1 and not command[1].dynamic and command[1].text in row.subcommands:
            own = row.subcommands[command[1].text]
            return own.runs_commands_after(row.global_only) or bool(own.writes)
        return (name in data.shells or name in data.wrappers or name in data.opaque_builtins
                or data.interpreter(name) is not None
                or row is not None and (row.runs_commands or bool(row.writes) or row.leading is not None))

    def inert_value(self, words: list[_Word], index: int) -> bool:
        """Whether word `index` is the value of an option whose value is only text (`Program.text_values`: `git
        commit -m "$(…)"`); never an option whose value's form decides what it does (`curl -d @FILE`)."""
        if index < 2 or words[0].dynamic or words[0].unsafe:
            return False
        row = self.data.programs.get(_program_name(words[0].text, self.data)[0])
        if row is None:
            return False
        if not words[1].dynamic and words[1].text in row.subcommands:
            row = row.subcommands[words[1].text]
        option = words[index - 1]
        return not (option.dynamic or option.unsafe) and option.text in row.text_values

    def shell(self, words, argv, depth, order, hazard) -> None:
        """`sh`/`bash`/…: splice `-c STRING`; reading the program from stdin is opaque."""
        n, i, has_c, reads_stdin = len(words), 1, False, False
        plain = True  # only `-c` and transparent one-letter options so far
        while i < n:
            word = words[i]
            text = word.text
            if word.dynamic or word.optionable:
                if has_c:
                    break
                raise _Opaque(f"shell argument {_may_be_option(word)} or the script")
            if text in ("--", "-"):
                i += 1
                plain = False
                break
            if text.startswith("--"):
                plain = False
                if text in ("--version", "--help"):
                    self.emit(order, argv, hazard=hazard)
                    return
                i += 2 if text in ("--rcfile", "--init-file") else 1
                if text in ("--rcfile", "--init-file"):
                    raise _Opaque("an rc file runs code")
                continue
            if len(text) > 1 and text[0] in "-+":
                letters = text[1:]
                plain = plain and text[0] == "-" and set(letters) <= self.data.transparent_shell_flags
                has_c |= text[0] == "-" and "c" in letters
                reads_stdin |= text[0] == "-" and "s" in letters
                i += 1 + letters.count("o") + letters.count("O")
                continue
            break
        if has_c:
            if i >= n:
                raise _Opaque("shell -c without a command string")
            string = words[i]
            if string.dynamic or string.unsafe:
                raise _Opaque("shell -c string is not a literal")
            # `bash -c 'ls'` runs what `ls` runs: the allow of `ls` covers it, a deny of `bash *` still applies
            self.emit(order, argv, hazard=hazard, wraps=len(argv), deny_only=plain and not hazard)
            self.nested_shell(string.text, depth, (*order, i))
            return
        if reads_stdin or i >= n or _names_stdin(words[i].text):
            raise _Opaque("the shell reads its program from stdin")
        self.read_files([words[i]], False, order)  # the script is read (`sh -x .env` echoes its lines)
        self.emit(order, argv, hazard=hazard or "a shell runs a script file")

    def nested_shell(self, text: str, depth: int, order) -> None:
        if depth + 1 > MAX_DEPTH:
            raise _Unparseable("nesting too deep")
        self.walk(text.encode("utf-8", "surrogatepass"), depth + 1, order)

    def changes_directory(self, target: str | None = None) -> None:
        self.chdirs += 1
        self.cd_targets.append(target)

    def candidate_dirs(self) -> list[str] | None:
        """Every directory a relative file may be in after the line's changes of directory, each a join of
        some of their targets in text order (a cd may fail, run in a subshell, or follow the file); None
        when one is not known, the line may repeat one, or there are more than MAX_CDS."""
        targets = self.cd_targets
        if None in targets or len(targets) > MAX_CDS:
            return None
        if _UNFOLLOWED.search(self.line.decode("utf-8", "replace")) is not None:  # a loop, a function, `CDPATH`
            return None
        found: dict[str, None] = {".": None}
        for chosen in range(1, 1 << len(targets)):
            path = "."
            for bit, target in enumerate(targets):
                if chosen >> bit & 1 and target:
                    path = posixpath.join(path, target) if path != "." else target
            found[path] = None
        return list(found)

    def result(self) -> Analysis:
        ordered = [f.segment for f in sorted(self.found, key=lambda f: f.order)]
        files: list[FileAccess] = []
        # `cd DIR && …` and no other change of directory: a relative file is DIR's
        base = self.head_cd if self.chdirs == 1 else None
        dirs = self.candidate_dirs() if self.chdirs and base is None else None
        for position, access in enumerate(self.files):
            kind, path, order, items = access
            if not items and path in self.data.harmless_files:
                continue
            why = self.file_reasons.get(position, "")
            tree = access in self.trees
            relative = not (items[0] if items else path).startswith(("/", "~"))
            if base is not None and relative:
                if items:
                    items = (base, "/", *items)
                else:
                    path = posixpath.join(base, path)
            elif self.chdirs and relative:
                if dirs is not None:  # `cd build; cp a b`: b or build/b
                    for directory in dirs:
                        moved = (directory, "/", *items) if items and directory != "." else items
                        named = path if items or directory == "." else posixpath.join(directory, path)
                        files.append(FileAccess(kind, display(moved) if moved else named, tuple(moved), why, tree))
                    continue
                # a change of directory the line does not follow: the file of that name in any directory
                if items[:1] != (ANY,):  # (any file is any file wherever the line is)
                    items = (ANY, *(items or (path,)))
            files.append(FileAccess(kind, display(items) if items else path, tuple(items), why, tree))
        return Analysis(tuple(ordered), tuple(files))


_ARITHMETIC_TEST = Pattern(r"\s-(?:eq|ne|lt|le|gt|ge|v|R)\s")
_ONLY_NUMBERS = Pattern(r"[\s\d+\-*/%()<>=!&|^~?:,;]*|\$\(\([\s\d+\-*/%()<>=!&|^~?:,]*\)\)")


# A line of these characters alone, split by spaces and tabs, is one simple command whose words are
# its pieces as written: no quote, escape, expansion, glob, brace, tilde, comment, operator,
# redirection or newline can occur in it. Such lines (`git status`, `pytest -x tests/`) are most of
# an agent's commands, and are analysed without loading tree-sitter (~32M instructions, a fifth of
# a hook, with the `re` its binding imports). tree-sitter-bash reads some plain text its own way
# (`==`, `+:`, `@` or `%` in a command name, a leading `-`, `NAME=` before the name), so those
# lines are left to it; the test suite holds the two to the same analysis on generated lines.
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,=")
_PLAIN_LINE = _PLAIN | {" ", "\t"}
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./")
# a first word that makes the line something else than a simple command (bash's reserved words,
# and the builtins tree-sitter-bash parses as declarations)
_NOT_A_COMMAND_NAME = frozenset({"!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function",
                                 "if", "in", "select", "then", "time", "until", "while", "declare", "typeset",
                                 "export", "readonly", "local", "unset", "unsetenv"})


MAX_CDS = 3  # changes of directory followed in one line (2**3 candidate directories)
# a line whose changes of directory are not followed: it may repeat one (a loop, a function) or a cd may go
# elsewhere than its text says (`CDPATH`)
_UNFOLLOWED = Pattern(r"\b(?:for|while|until|select|function|CDPATH)\b|\(\s*\)")


_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
# where a redirection written around a statement stops applying: a substitution's commands write elsewhere,
# and what tree-sitter hangs under a heredoc is the rest of the list, not redirected
_REDIRECT_SCOPES = frozenset({"command_substitution", "process_substitution", "command", "program", "heredoc_redirect"})


def _redirections(command, around: tuple = ()) -> tuple[str, ...]:
    """The words of the redirections that apply to a command node, as written: its own, and those of every
    statement around it (`{ a; b; } > f`, and `cd a && b > f`, which tree-sitter hangs on the chain), up to
    a substitution or a command holding it: `around`, each such statement's own, nearest first (the walk
    gathers them on its way down). A heredoc counts as its operator and delimiter, not its body."""
    return tuple(word for words in (_own_redirections(command), *around) for word in words)


def _own_redirections(node) -> tuple[str, ...]:
    """The words of the redirections a node holds as its children."""
    words: list[str] = []
    for child in node.children:
        if child.type == "heredoc_redirect":  # (a redirection after `<<EOF` on its line hangs under it)
            for part in child.children:
                if part.type in ("<<", "<<-", "heredoc_start"):
                    words.append(part.text.decode("utf-8", "replace"))
                elif part.type in _REDIRECTS:
                    words.extend(part.text.decode("utf-8", "replace").split())
        elif child.type in _REDIRECTS:
            words.extend(child.text.decode("utf-8", "replace").split())
    return tuple(words)


def with_redirections(segment: Segment) -> Segment:
    """The segment read with its redirections, as its author sees it (`echo x >> .claude/f`): a deny or ask
    on the command's text applies to that too; an allow of the command alone does not need it."""
    return Segment((*segment.argv, *segment.redirects), segment.opaque, segment.reason, segment.hazard,
                   segment.literal, segment.wraps, segment.base, True)


def _cd_target(name: str, words: list[_Word]) -> str | None:
    """Where `cd`/`pushd` goes, as written ("~" for a bare `cd`), "" for `popd` (back to an earlier
    directory); None when not known: an expansion or a pattern, `cd -`, a bare `pushd` (a swap)."""
    if name == "popd":
        return ""
    operands = [word for word in words[1:] if not (word.text.startswith("-") and word.text != "-")]
    if not operands:
        return "~" if name == "cd" else None
    target = operands[0]
    if _unknown(target) or target.text in ("-", "") or target.text.startswith("+"):
        return None
    return target.text


def _head_cd(root) -> str | None:
    """DIR when the line is one `&&` chain headed by a plain `cd DIR` (no redirection, quote or expansion in
    it): every command after it runs only once cd succeeded, in DIR. None for anything else (`cd a; b`
    runs b where cd failed too, `cd a || b`, a pipeline, a background job)."""
    statements = [child for child in root.children if child.type != "comment"]
    if len(statements) != 1:
        return None
    node = statements[0]
    if node.type == "redirected_statement":  # tree-sitter puts `cd a && b > f`'s redirection on the chain
        node = node.children[0]
    if node.type != "list":
        return None
    while node.type == "list":
        if any(child.type != "&&" for child in node.children if not child.is_named):
            return None
        node = node.children[0]
    if node.type != "command" or len(node.children) != 2 or node.children[0].text != b"cd" \
            or node.children[1].type != "word":
        return None
    target = node.children[1].text.decode("utf-8", "replace")
    if not target or target.startswith(("-", "~")) or any(char in target for char in "$`*?[]{}\\'\""):
        return None
    return target


def _skipped_text(root, source: bytes) -> bool:
    """Whether some byte other than a blank lies outside every token of the tree. tree-sitter-bash
    drops a lone `-` before an assignment without an error: `- D=8 rm -rf /` parses as `D=8 rm -rf /`
    while bash runs the program `-` with the rest as its arguments. What the tree does not hold
    cannot be analysed, so such a line fails closed."""
    pos, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.child_count:
            stack.extend(reversed(node.children))
            continue
        if node.start_byte > pos and _not_blank(source[pos:node.start_byte]):
            return True
        pos = max(pos, node.end_byte)
    return _not_blank(source[pos:])


def _not_blank(gap: bytes) -> bool:
    return bool(gap.replace(b"\\\n", b"").strip(b" \t\n"))  # a line continuation is a blank


def _plain_words(source: bytes) -> tuple[int, list[str]] | None:
    """(offset of the first word, the words) when `source` is a line of plain words; else None."""
    if not _PLAIN_LINE.issuperset(source.decode("latin-1")) or b"==" in source:
        return None
    text = source.decode("ascii")
    words = text.replace("\t", " ").split()
    if not words or words[0][0] not in _NAME_START or "=" in words[0] or words[0] in _NOT_A_COMMAND_NAME:
        return None
    if any(word[0] == "=" for word in words):
        return None
    return len(text) - len(text.lstrip(" \t")), words


def _is_name(text: str) -> bool:
    return bool(text) and (text[0].isalpha() or text[0] == "_") and all(c.isalnum() or c == "_" for c in text)


def _uses(text: str, options, clusters: bool) -> bool:
    """Whether the word `text` is one of `options` (`option_hit`)."""
    return any(option_hit(text, option, clusters) is not None for option in options)


def _option_words(text: str, options, words: list[_Word], index: int, clusters: bool = True) -> tuple[list, int]:
    """[(option, its value word or None)] for each of `options` the word `text` (at `index`) uses, in a
    fixed order: an attached value, else the next word; and the index of the last word a value took."""
    found, last = [], index
    for option in sorted(options):
        value = option_hit(text, option, clusters)
        if value is None:
            continue
        if value:
            found.append((option, _Word(value)))
        elif index + 1 < len(words):
            found.append((option, words[index + 1]))
            last = index + 1
        else:
            found.append((option, None))
    return found, last


def _may_be_option(word: _Word) -> str:
    kind = "a pattern of file names" if word.glob and not word.dynamic else "an expansion"
    return f"`{word.text}` is {kind}, which may be an option"


def _filled(words: list[_Word], holes, optionable: bool = True) -> list[_Word]:
    """`words` with each one that holds a replacement string made dynamic: its value comes from input
    (which may start with `-`, unless `optionable` is False)."""
    if not holes:
        return words
    return [_Word(w.text, True, w.unsafe, w.glob, optionable or w.optionable) if any(h in w.text for h in holes)
            else w for w in words]


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


# ------------------------------------------------------------------------------- entry points

def analyse(command: str) -> Analysis | None:
    """The segments and file accesses of `command`; None when it does not parse. Never raises.

    Beyond MAX_COMMAND_CHARS or MAX_SEGMENTS the command is one opaque segment.
    """
    if not isinstance(command, str):
        return None
    if len(command) > MAX_COMMAND_CHARS:
        return Analysis((Segment((), True, f"command longer than {MAX_COMMAND_CHARS} characters"),))
    if "\x00" in command:
        return None
    stand_ins = _stand_ins(command)
    if stand_ins is None:
        return Analysis((Segment((), True, "characters outside the Basic Multilingual Plane are not analysed"),))
    found = _read(command.translate(stand_ins[0]))
    if found is not None and _CONTINUATION in command:
        found = _with_continuations_joined(found, _read(command.translate(stand_ins[0]).replace(_CONTINUATION, "")))
    return _restore(found, stand_ins[1]) if found is not None and stand_ins[1] else found


def _read(command: str) -> Analysis | None:
    try:
        walker = _Walker(knowledge())
        walker.walk(command.encode("utf-8", "surrogatepass"), 0, ())
        return walker.result()
    except _Unparseable as exc:
        if str(exc) == "too many segments":
            return Analysis((Segment((), True, f"more than {MAX_SEGMENTS} simple commands"),))
        return None
    except (RecursionError, UnicodeError, ValueError):
        return None


_CONTINUATION = "\\\n"
_JOINED = Segment((), True, "a line continuation joins words: bash reads the line otherwise than its text shows")


def _with_continuations_joined(found: Analysis, joined: Analysis | None) -> Analysis:
    """Bash drops every backslash-newline outside single quotes before it splits words, so `r\\⏎m -rf x`
    runs `rm`; tree-sitter-bash reads two words. The line is read again with every continuation dropped
    (wherever it stands, which over-approximates bash): when both readings agree, the line is what its
    text shows; otherwise both readings count (a deny meets either) and the line is opaque (no allow
    covers it)."""
    if joined is not None and joined == found:
        return found
    extra = joined or Analysis(())
    return Analysis((*found.segments, *(s for s in extra.segments if s not in found.segments), _JOINED),
                    (*found.files, *(f for f in extra.files if f not in found.files)))


_PRIVATE_USE = range(0xE000, 0xF900)


def _stand_ins(command: str):
    """(to stand-ins, back) for characters above U+FFFF, which crash tree-sitter-bash's scanner
    (`{` followed by U+E751E segfaults 0.25.1); None when no private-use stand-in is free."""
    astral = sorted({c for c in command if ord(c) > 0xFFFF})
    if not astral:
        return {}, {}
    if len(astral) > len(_PRIVATE_USE) or any(ord(c) in _PRIVATE_USE for c in command):
        return None
    forward = {ord(c): chr(_PRIVATE_USE[i]) for i, c in enumerate(astral)}
    return forward, {ord(v): chr(k) for k, v in forward.items()}


def _restore(found: Analysis, back: dict) -> Analysis:
    segments = tuple(Segment(tuple(a.translate(back) for a in s.argv), s.opaque, s.reason.translate(back), s.hazard,
                             s.literal, s.wraps, s.base.translate(back), s.deny_only,
                             tuple(r.translate(back) for r in s.redirects)) for s in found.segments)
    files = tuple(FileAccess(f.kind, f.path.translate(back), tuple(item.translate(back) for item in f.pattern),
                             f.why.translate(back), f.tree) for f in found.files)
    return Analysis(segments, files)


def command_segments(command: str) -> tuple[Segment, ...] | None:
    """The simple commands `command` would run, in text order (None: it does not parse)."""
    found = analyse(command)
    return None if found is None else found.segments


def command_matches(segment: Segment, pattern: str) -> bool:
    """Glob-match one segment's text (opacity ignored): `"git *"` covers `git` and `git push`."""
    return glob_match(pattern, segment.text, shell=True)


def by_base(segment: Segment) -> Segment:
    """The segment with its program named by its basename (`./rm x` as `rm x`): what denies also meet."""
    return replace(segment, argv=(segment.base, *segment.argv[1:]), base="")


@memoised(4096)  # a policy's calls repeat their commands, and its analyses keep equal segments
def with_options(segment: Segment) -> Segment | None:
    """The segment with its reading by its program's option grammar, deny-only (`rm -fr /` read as the
    options -f -r and the operand /); None when no grammar reads it or what runs is not known."""
    if segment.opaque:
        return None
    from .shell_options import option_reading
    reading = option_reading(segment.argv, segment.literal_words)
    return None if reading is None else replace(segment, options=reading, deny_only=True)


def segment_matches(segment: Segment, pattern: str, lenient: bool) -> bool:
    """Whether `pattern` covers the segment: possibly (lenient, deny/ask side) or surely (allow).

    An expansion word `$X` may become anything: the deny side matches when some value could
    match; the allow side only when every value does. A segment read by its option grammar also
    matches, on the deny side, a pattern naming options it gives however spelled (`options_match`).
    """
    if lenient and segment.options is not None:
        from .shell_options import options_match
        if options_match(segment.options, pattern):
            return True
    return _text_matches(segment, pattern, lenient)


def _text_matches(segment: Segment, pattern: str, lenient: bool) -> bool:
    if not segment.allowable:
        if segment.opaque or not lenient:
            return lenient
    if lenient and segment.base and _text_matches(by_base(segment), pattern, True):
        return True  # `./rm x` is denied where `rm *` is
    literal = segment.literal_words
    if literal == len(segment.argv):
        return glob_match(pattern, segment.text, shell=True)
    prefix = " ".join(segment.argv[:literal])
    if lenient:
        return glob_prefix_viable(pattern, prefix, shell=True)
    return glob_accepts_any_continuation(pattern, prefix + " " if literal else "", shell=True)
