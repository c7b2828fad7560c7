"""A shell command line → the environment variables it reads and the ones it sets (`EnvUse`).

Reads: parameter expansions in any quoting (`$X`, `${X}`, `${X:-d}`, `"$X"`, arithmetic, expanding heredoc
bodies), the programs that print the environment (`env`, `printenv`, `export -p`, `set`, `declare -p`, …),
`/proc/*/environ`, and interpreter forms in the line's text (`os.environ`, `process.env`, awk `ENVIRON`, …).
Sets: assignments (`X=… cmd`, `export`, `declare -x`, `readonly`, `local`), `unset`, `read`, `env X=… cmd`.
"""

from __future__ import annotations

from ._base.frozen import record
from ._base.memo import memoised
from .patterns import Pattern
from .shell.plain import _PLAIN_LINE as PLAIN_LINE  # the shell analysis's own plain-line alphabet
from .session import ALL  # a reading of every variable: any name pattern matches it

_NAME = Pattern(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# programs that print every variable: `env` and `printenv` alone, `set` alone, `compgen -v|-e|-A …`
_DUMPERS = frozenset({"env", "printenv", "set", "compgen"})
# (a variable named in the source, every variable): interpreter forms, found in the line's text (also inside
# quotes: `python -c '…'`, `awk '…'`, `node -e '…'`, `bash -c '…'`)
_NAMED = Pattern(
    r"""(?:os\.environ(?:\.get)?\s*[\[(]\s*|os\.getenv\s*\(\s*|getenv\s*\(\s*|ENVIRON\s*\[\s*|ENV\s*\[\s*)"""
    r"""\\?["']([A-Za-z_][A-Za-z0-9_]*)\\?["']"""
    r"""|process\.env\.([A-Za-z_][A-Za-z0-9_]*)|process\.env\s*\[\s*\\?["']([A-Za-z_][A-Za-z0-9_]*)"""
    r"""|\$ENV\{\s*["']?([A-Za-z_][A-Za-z0-9_]*)|\$\{?([A-Za-z_][A-Za-z0-9_]*)"""
)
_WHOLE = Pattern(
    r"os\.environ|process\.env\b|ENVIRON\b|\$ENV\{|\bENV\s*[\[.]|/proc/[^/\s]+/environ|os\.getenv\s*\("
    r"|\bgetenv\s*\("
)
_SETTING_PARENTS = frozenset({"variable_assignment", "declaration_command", "unset_command", "for_statement"})


@record
class EnvUse:
    """What a line does with the environment: names read (`ALL` among them: every variable), names set, and
    whether the line was read whole (False: it does not parse, so any variable may be read or set)."""

    read: frozenset[str] = frozenset()
    set: frozenset[str] = frozenset()
    complete: bool = True

    @property
    def reads_all(self) -> bool:
        return ALL in self.read


@memoised(4096)  # a policy tests one line with several rules; lines repeat across calls
def env_use(command: str) -> EnvUse:
    """The variables `command` reads and sets (never raises: an unreadable line is `complete=False`)."""
    if not isinstance(command, str) or "\x00" in command:
        return EnvUse(complete=False)
    if _plain(command):  # `git status`: reads and sets no variable (tree-sitter is not loaded for it)
        return EnvUse()
    from .bash_grammar import bash_parser

    try:
        root = bash_parser().parse(command.encode("utf-8", "surrogatepass")).root_node
    except (UnicodeError, ValueError):
        return EnvUse(complete=False)
    read: set[str] = set()
    wrote: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        kind = node.type
        if kind == "expansion" and any(child.type == "!" for child in node.children):
            read.add(ALL)  # `${!X}`, `${!PREFIX*}`: a name chosen at run time
        elif kind == "variable_name":
            parent = node.parent.type if node.parent is not None else ""
            printed = parent == "declaration_command" and "-p" in _options(node.parent)  # `declare -p X`
            (wrote if parent in _SETTING_PARENTS and not printed else read).add(_text(node))
        elif kind == "declaration_command" and not any(
            child.type in ("variable_name", "variable_assignment") for child in node.children[1:]
        ):
            if all(option in ("-p", "-x", "-px", "-xp") for option in _options(node)):
                read.add(ALL)  # `export`, `export -p`, `declare -p`, `declare -x`: prints the (exported) variables
        elif kind == "command":
            _command(node, read, wrote)
        elif kind == "raw_string" or kind == "heredoc_body" and not node.children:
            # `'…'`, a quoted heredoc: code another program may read (`sh -c`, `awk`, `python -c`, `bash <<'E'`)
            _in_text(_text(node), read)
    _in_text(command, read, names=False)
    # the commands the shell analyser finds behind wrappers and `sh -c` (`sudo env`, `bash -c printenv`)
    from .shell import analyse

    found = analyse(command)
    for segment in found.segments if found is not None else ():
        if segment.argv and not segment.opaque:
            _argv(list(segment.argv), read, wrote)
    complete = found is not None and not root.has_error
    return EnvUse(frozenset(read), frozenset(name for name in wrote if _NAME.match(name)), complete)


# a line of these characters is plain words: no expansion, quote, operator or assignment can read or set a
# variable, and no interpreter form (`os.environ[…]`) can appear; `/proc/self/environ` is named apart
_PLAIN_LINE = PLAIN_LINE - {"="}
# the words that make a plain line read or set variables, wherever they stand (`sudo env`, `xargs printenv`)
_ENV_WORDS = frozenset(
    {
        "env",
        "printenv",
        "set",
        "compgen",
        "export",
        "declare",
        "typeset",
        "readonly",
        "local",
        "unset",
        "read",
        "readarray",
        "mapfile",
        "getopts",
        "printf",
        "source",
        ".",
    }
)


def _plain(command: str) -> bool:
    """A line no variable is read or set in: plain words, none of them one that reads or sets variables."""
    return (
        _PLAIN_LINE.issuperset(command)
        and "environ" not in command
        and not any(word.rsplit("/", 1)[-1] in _ENV_WORDS for word in command.split())
    )


def _command(node, read: set, wrote: set) -> None:
    """A simple command as tree-sitter reads it (its words as written, assignments to `env` among them)."""
    name_node = next((child for child in node.children if child.type == "command_name"), None)
    if name_node is not None:
        _argv(
            [
                _text(name_node),
                *(
                    _text(child)
                    for child in node.children
                    if child.start_byte > name_node.start_byte
                    and child.type in ("word", "string", "raw_string", "number")
                ),
            ],
            read,
            wrote,
        )


def _argv(argv: list[str], read: set, wrote: set) -> None:
    """The reads and sets a command's own words make: a dumper, `printenv NAME`, `read NAME`, `env X=y`."""
    program, words = argv[0].rsplit("/", 1)[-1], argv[1:]
    if program == "printenv" and words:
        read.update(word for word in words if _NAME.match(word))
    elif program == "env":
        assigned = [word.split("=", 1)[0] for word in words if "=" in word and not word.startswith("-")]
        wrote.update(assigned)
        if len(assigned) + sum(word.startswith("-") for word in words) == len(words):
            read.add(ALL)  # `env`, `env -0`, `env X=1`: prints the environment
    elif program in _DUMPERS and (not words or program == "compgen" and words[0] in ("-v", "-e", "-A")):
        read.add(ALL)
    elif program == "read":
        wrote.update(word for word in words if _NAME.match(word))


def _in_text(text: str, read: set, names: bool = True) -> None:
    """Interpreter forms in `text`; with `names`, also `$NAME` (the text is a script another shell may run). A form
    that names no variable (`os.environ.items()`, `/proc/self/environ`) reads them all."""
    if not _WHOLE.search(text) and not (names and "$" in text):
        return
    named = 0
    for match in _NAMED.finditer(text):
        found = next((group for group in match.groups() if group), None)
        if found is None or (match.group(5) and not names):
            continue
        read.add(found)
        named += match.group(5) is None
    whole = _WHOLE.findall(text)
    if any(form.startswith("/proc/") for form in whole) or len(whole) > named:
        read.add(ALL)


def _options(node) -> list[str]:
    return [_text(child) for child in node.children[1:] if child.type == "word" and _text(child).startswith("-")]


def _text(node) -> str:
    return node.text.decode("utf-8", "surrogatepass")
