"""A line of plain words is analysed without tree-sitter: the analysis must be the one tree-sitter's
parse gives, for every line the shortcut takes — including lines of wrappers, shells, reserved
words and builtins, where a wrong reading would let a command through."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler import shell

BASH_RESERVED = [
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
]
BASH_BUILTINS = [
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "unsetenv",
    "wait",
]
PROGRAMS = [
    "git",
    "sudo",
    "env",
    "bash",
    "sh",
    "zsh",
    "xargs",
    "find",
    "timeout",
    "nice",
    "nohup",
    "python",
    "python3",
    "rm",
    "cp",
    "mv",
    "ls",
    "cat",
    "npm",
    "pip",
    "make",
    "awk",
    "sed",
    "perl",
    "tee",
    "curl",
    "/usr/bin/git",
    "./run",
    "bin/tool",
    "doas",
    "chroot",
    "watch",
    "ssh",
    "docker",
    "kubectl",
]
ARGUMENTS = [
    "-c",
    "-C",
    "-rf",
    "-i",
    "-e",
    "--",
    "-",
    "status",
    "push",
    "log",
    "--force",
    "--exec=rm",
    "a=b",
    "FOO=1",
    "x.txt",
    "/etc/passwd",
    "../up",
    "tests/",
    "-exec",
    "a:b",
    "1,2",
    "-n",
    "10",
    "-u",
    "root",
    "--yes",
    "install",
    "-m",
    "http.server",
    "-delete",
    "-o",
    "out",
]
WORDS = BASH_RESERVED + BASH_BUILTINS + PROGRAMS + ARGUMENTS
plain_word = st.one_of(st.sampled_from(WORDS), st.text(alphabet=sorted(shell._PLAIN), min_size=1, max_size=6))
gap = st.text(alphabet=" \t", min_size=1, max_size=3)


def _line(words: list[str], gaps: list[str], lead: str, tail: str) -> str:
    return lead + "".join(w + g for w, g in zip(words, gaps + [""])) + tail


def _by_tree_sitter(monkeypatch, line: str):
    with monkeypatch.context() as patched:
        patched.setattr(shell, "_plain_words", lambda source: None)
        return shell.analyse(line)


@settings(max_examples=400)
@given(
    st.lists(plain_word, min_size=1, max_size=6),
    st.lists(gap, min_size=5, max_size=5),
    st.text(alphabet=" \t", max_size=2),
    st.text(alphabet=" \t", max_size=2),
)
def test_plain_lines_are_analysed_as_tree_sitter_parses_them(words, gaps, lead, tail):
    line = _line(words, gaps[: len(words) - 1], lead, tail)
    with pytest.MonkeyPatch.context() as monkeypatch:
        expected = _by_tree_sitter(monkeypatch, line)
    assert shell.analyse(line) == expected, line


@pytest.mark.parametrize("first", BASH_RESERVED + BASH_BUILTINS + PROGRAMS)
@pytest.mark.parametrize("rest", ["", " x", " -c git", " a=b status", " if then fi", " -- rm -rf /"])
def test_every_first_word_either_is_left_to_tree_sitter_or_reads_alike(monkeypatch, first, rest):
    line = first + rest
    assert shell.analyse(line) == _by_tree_sitter(monkeypatch, line), line


@pytest.mark.parametrize(
    "line",
    [
        "git status",
        "  pytest -x tests/",
        "sudo rm -rf /",
        "bash -c ls",
        "git -C /tmp push --force",
        "find . -name x -delete",
    ],
)
def test_the_shortcut_takes_plain_lines(line):
    assert shell._plain_words(line.encode()) is not None


@pytest.mark.parametrize(
    "line",
    [
        "FOO=1 git push",
        "if true",
        "declare -x A",
        "git status; rm x",
        "ls > x",
        "echo $HOME",
        "ls *",
        "echo {a,b}",
        "echo ~",
        "echo 'a b'",
        "git status # x",
        "a\nb",
        "ls\\ x",
        "echo é",
        "x && y",
        "(ls)",
        "echo `id`",
        "",
        "   ",
        "- x",
        "-rf /",
        "a == b",
        "x =y",
        "user@host",
        "x%",
        "a+=b c",
        "k +:",
    ],
)
def test_anything_else_goes_to_tree_sitter(line):
    assert shell._plain_words(line.encode()) is None
