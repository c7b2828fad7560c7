"""The plain-line fast path: a line of plain words is one simple command, read without loading tree-sitter."""

from __future__ import annotations

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
_NOT_A_COMMAND_NAME = frozenset(
    {
        "!",
        "case",
        "coproc",
        "do",
        "done",
        "elif",
        "else",
        "esac",
        "fi",
        "for",
        "function",
        "if",
        "in",
        "select",
        "then",
        "time",
        "until",
        "while",
        "declare",
        "typeset",
        "export",
        "readonly",
        "local",
        "unset",
        "unsetenv",
    }
)


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
