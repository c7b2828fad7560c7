"""`git -C DIR …` runs git in DIR: with only options that move where it runs or change nothing it does
(catalogs/shell/commands.json `transparent_before_subcommand`: `-C`, `--no-pager`; not `-c`, which may run code),
the allow of the command it gives (`git status`) covers it, DIR is read, and relative paths it names are DIR's.
Attacks: a directory outside the workspace (`git -C ~/.ssh …`), a protected one, a subcommand no rule allows,
a configuration that runs a command, a pager, an expansion for DIR."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshc.compiler.program import Program
from conftest import bash_effect

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "bypass" / "corpus.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"corpus.dsh": CORPUS["policies"]})


@pytest.mark.parametrize(
    ("policy", "command"),
    [
        ("allowlist", "git -C ~/.ssh status"),  # DIR is read: outside the workspace
        ("allowlist", "git -C /etc log --oneline"),
        ("allowlist", "git -C .. status"),
        ("allowlist", "git -C . push"),  # what it runs is decided: no rule allows a push
        ("allowlist", 'git -C "$D" status'),
        ("allowlist", "git -C $(echo ~) status"),
        ("allowlist", "git -c core.pager=evil -C . log"),  # a configuration that runs a command
        ("allowlist", "git -c color.ui=never -C . status"),  # `-c` is not read as harmless here
        ("allowlist", "git -c alias.st=!sh -C . st"),
        ("allowlist", "git -p -C . status"),  # a pager, whatever the repository configures
        ("allowlist", "git --git-dir=/tmp/x status"),
        ("allowlist", "git --work-tree=/ status"),
        ("allowlist", "git -C . -C ~/.ssh status"),
        ("denylist", "git -C . push origin main"),
        ("options", "git -C . push --force origin"),
        ("options", "git --no-pager -C . branch -D main"),
        ("fileonly", "git -C .claude diff --output=settings.json"),  # relative paths are DIR's
        ("fileonly", "git -C .claude checkout main"),
        ("fileonly", "git -C .claude restore settings.json"),
    ],
)
def test_an_attack_through_git_s_directory_option_is_refused(program, policy, command):
    assert bash_effect(program, policy, command) != "allow"


@pytest.mark.parametrize(
    "command",
    [
        "git -C . status",
        "git -C src log --oneline",
        "git --no-pager -C sub log -n 3",
        "git --no-optional-locks -C src/app status",
    ],
)
def test_git_in_a_workspace_directory_is_covered_by_the_allow_of_what_it_runs(program, command):
    assert bash_effect(program, "allowlist", command) == "allow"
