"""`script [options] [file]` (util-linux script(1)) writes its typescript to the file and runs $SHELL, which
reads its commands from stdin; `-c CMD` runs CMD instead, and options may follow the file. Its operand was
read as a command to run: `echo 'rm -rf src' | script -q /dev/null` met no deny, and `script -c ls
.claude/settings.json` wrote a protected file."""

from __future__ import annotations

import pytest

from dshc.compiler.shell import analyse


def _parts(command):
    found = analyse(command)
    return [segment.argv for segment in found.segments], {(f.kind, f.path) for f in found.files}


@pytest.mark.parametrize("command", ["script -q /dev/null", "script out.txt", "script", "script -a log"])
def test_without_a_command_it_runs_a_shell_reading_stdin(command):
    found = analyse(command)
    assert found.segments[0].opaque and "reads its commands from stdin" in found.segments[0].reason


@pytest.mark.parametrize(
    "command",
    [
        "script -qc 'rm x' /dev/null",
        "script /dev/null -c 'rm x'",
        "script --command='rm x' log",
        "script -q log --command 'rm x'",
    ],
)
def test_its_command_line_is_read_wherever_the_option_stands(command):
    argvs, _ = _parts(command)
    assert ("rm", "x") in argvs and not analyse(command).segments[0].opaque


@pytest.mark.parametrize(
    "command, written",
    [
        ("script -c ls .claude/settings.json", ".claude/settings.json"),
        ("script -c ls --log-out o.log", "o.log"),
        ("script -c ls -T t.log x", "t.log"),
        ("script -c ls -B io.log", "io.log"),
        ("script out -qc ls", "out"),
        ("script out -c ls -O late.log", "late.log"),
    ],
)
def test_its_file_and_log_options_are_writes(command, written):
    _, files = _parts(command)
    assert ("write", written) in files


def test_the_typescript_is_not_a_command():
    argvs, _ = _parts("script -qc ls typescript.txt")
    assert ("typescript.txt",) not in argvs
