"""`~` and `$HOME` in a path glob name the home directory, as the shell reads them; a path glob no canonical
path can match is reported by `dshc check` (DSH316) instead of deciding nothing in silence."""

from __future__ import annotations

import os

import pytest

from dshc.cli.main import main
from dshc.compiler.paths import home_glob, never_canonical
from dshc.compiler.program import Program
from dshc.compiler.request import Request

HOME = os.path.expanduser("~")
POLICY = """policy home extends workspace-write {
  default allow
  deny read when args.file_path matches "~/.ssh/**"
  deny read when args.file_path matches "$HOME/.aws/*"
  deny read when args.file_path matches "${HOME}/.netrc"
  guard rc-files: deny write, edit when args.file_path matches "~/.bashrc"
  deny bash when args.command matches "cat ~/notes*"
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"home.dsh": POLICY})


def _effect(program, tool, args, workspace="/ws"):
    return program.decide(Request(preset="standard", host="web", policy="home"), tool, args, workspace=workspace).effect


@pytest.mark.parametrize(
    "tool, args",
    [
        ("read", {"file_path": f"{HOME}/.ssh/id_rsa"}),
        ("read", {"file_path": "~/.ssh/id_ed25519"}),
        ("read", {"file_path": "/ws/../" + HOME.lstrip("/") + "/.ssh/config"}),
        ("read", {"file_path": f"{HOME}/.aws/credentials"}),
        ("read", {"file_path": "~/.netrc"}),
        ("write", {"file_path": "~/.bashrc", "content": "curl x | sh"}),
        ("edit", {"file_path": f"{HOME}/.bashrc", "old_string": "a", "new_string": "b"}),
        ("bash", {"command": "cat ~/.ssh/id_rsa"}),
        ("bash", {"command": "echo 'curl x | sh' >> ~/.bashrc"}),
        ("bash", {"command": "cat $HOME/.aws/credentials"}),
    ],
)
def test_home_globs_deny_what_they_name(program, tool, args):
    assert _effect(program, tool, args) == "deny"


@pytest.mark.parametrize(
    "tool, args",
    [
        ("read", {"file_path": "/ws/src/main.py"}),
        ("read", {"file_path": "/ws/.ssh/id_rsa"}),  # the workspace's own `.ssh`, not the home's
        ("bash", {"command": "cat README.md"}),
    ],
)
def test_other_paths_stay_allowed(program, tool, args):
    assert _effect(program, tool, args) == "allow"


def test_a_command_glob_keeps_its_tilde_as_text(program):
    # a command pattern matches the line as written: `~` there is the character the author typed
    assert _effect(program, "bash", {"command": "cat ~/notes.txt"}) == "deny"
    assert home_glob("cat ~/notes*") == "cat ~/notes*"  # (no leading `~`: untouched)


def test_home_glob_forms():
    assert home_glob("~/.ssh/**") == f"{HOME}/.ssh/**"
    assert home_glob("~") == HOME
    assert home_glob("$HOME/.aws/*") == f"{HOME}/.aws/*"
    assert home_glob("${HOME}") == HOME
    assert home_glob("$HOMEDIR/x") == "$HOMEDIR/x"
    assert home_glob("src/*.env") == "src/*.env"


@pytest.mark.parametrize(
    "pattern, reason",
    [
        ("./secrets/*", "`.` or `..`"),
        ("src/../.env", "`.` or `..`"),
        ("src//x", "empty part"),
        ("build/", "trailing"),
        ("~no-such-user-x9/.ssh/*", "names no user"),
    ],
)
def test_patterns_no_canonical_path_can_match(pattern, reason):
    assert reason in never_canonical(pattern)


@pytest.mark.parametrize("pattern", ["~/.ssh/**", "*.env", "/etc/*", "src/*.py", "**/.git/config", "/", ".env"])
def test_patterns_that_can_match(pattern):
    assert never_canonical(pattern) == ""


def test_check_warns_on_a_path_glob_that_never_matches(tmp_path, capsys):
    source = tmp_path / "p.dsh"
    source.write_text(
        "policy p extends workspace-write {\n  default allow\n"
        '  deny read when args.file_path matches "./secrets/*"\n'
        '  deny bash when args.command matches "cat ./x"\n}\n'
    )
    assert main(["check", str(source), "--json"]) == 1
    out = capsys.readouterr().out
    assert '"DSH316"' in out and '"line": 3' in out
    assert out.count('"DSH316"') == 1  # a command's `./x` is text as written, not a path


def test_shipped_declarations_have_no_dead_path_glob(capsys):
    assert main(["check"]) == 0
