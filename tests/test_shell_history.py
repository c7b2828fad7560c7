"""A git command that prints files' content from the repository's history (`git log -p`, `git show HEAD`,
`git diff`) reads every file below the working directory: those contents come from git's objects, which
no sandbox mount hides, and an operand before `--` may be a revision. Only `-- PATH…`, or operands that are
all `REV:PATH`, name what it prints (i9wa4/dotfiles#373, makecindy/cindy#2836)."""

from __future__ import annotations

import pytest

from dshc.compiler.shell import analyse

EVERY_FILE = "./**"


def reads(command):
    found = analyse(command)
    assert found is not None, command
    return {f.path for f in found.files if f.kind == "read"}


@pytest.mark.parametrize(
    "command",
    [
        "git log -p",
        "git log --patch --all",
        "git log -u",
        "git log -U5",
        "git log --unified=1",
        "git log -c",
        "git log --cc",
        "git log -m -p",
        "git log --word-diff",
        "git log -pS KEY",
        "git log -L 1,5:a.py",
        "git log --remerge-diff",
        "git whatchanged -p",
        "git reflog -p",
        "git diff-tree -p HEAD",
        "git diff-index -p HEAD",
        "git show",
        "git show HEAD",
        "git show --format=%H HEAD",
        "git show -Ssecret HEAD",
        "git show HEAD:a.py HEAD",
        "git diff",
        "git diff HEAD~1",
        "git diff a.py",
        "git diff --cached",
        "git diff --stat -p",
        "git stash show -p",
        "git stash list -p",
        "git archive HEAD",
        "git cat-file -p 3b18e512",
        "git cat-file --batch-all-objects --batch",
        "git format-patch -1",
        "git fast-export --all",
        "git bundle create x.bundle --all",
        "git range-diff a...b",
        "git grep KEY HEAD",
        "git lp",
        "git log -p --",
        "git show HEAD:*.env",
        "git worktree add /tmp/w HEAD",
        "git worktree add -b x ../w",
        "git checkout-index -a",
        "git clone . /tmp/c",
    ],
)
def test_a_command_printing_history_reads_every_file(command):
    assert EVERY_FILE in reads(command)


@pytest.mark.parametrize(
    "command",
    [
        "git log",
        "git log --oneline -n 5",
        "git log -S KEY --oneline",
        "git log -Spassword",
        "git log --stat",
        "git log -p -- src",
        "git log -p HEAD -- a.py",
        "git whatchanged",
        "git diff-tree HEAD",
        "git show HEAD:a.py",
        "git show HEAD:a.py main:b.py",
        "git show --stat HEAD",
        "git show -s HEAD",
        "git show --no-patch HEAD",
        "git show --name-only HEAD",
        "git diff --stat",
        "git diff --name-status HEAD~1",
        "git diff --dirstat=files",
        "git diff --quiet",
        "git diff -- a.py",
        "git diff HEAD -- a.py",
        "git diff HEAD:a.py HEAD~1:a.py",
        "git stash show",
        "git stash list",
        "git stash show --stat",
        "git cat-file -t HEAD",
        "git cat-file -e HEAD",
        "git cat-file -p HEAD:a.py",
        "git status",
        "git add -p",
        "git -c core.pager=cat status",
        "git branch -c x y",
        "git -p status",
        "git --paginate diff --stat",
        "git stash push -m wip",
        "git stash show -u",
        "git commit -m x",
        "git push origin main",
        "git worktree list",
        "git worktree remove /tmp/w",
        "git clone https://example.com/r.git /tmp/c",
    ],
)
def test_a_command_printing_no_history_or_only_named_paths_does_not(command):
    assert EVERY_FILE not in reads(command)


def test_a_quiet_option_counts_as_a_whole_word_only():
    # `-Ss` is `-S` with the value `s`, not `-s` (no patch): the patch is still printed
    assert EVERY_FILE in reads("git show -Ss HEAD")
    assert EVERY_FILE not in reads("git show -s HEAD")


def test_named_paths_are_read_with_every_file_below_them():
    # a path may name a folder (or, as `REV:PATH`, a tree): git prints the history of every file below it
    assert reads("git log -p -- src/a.py") == {"src/a.py", "src/a.py/**"}
    assert reads("git diff HEAD:src HEAD~1:src") == {"src", "src/**"}
    assert reads("git archive HEAD -- src") == {"HEAD", "src", "src/**"}


@pytest.mark.parametrize("command", ["git grep -e K -- src", "git log -p -- d", "git show HEAD"])
def test_what_an_operand_read_named_already_is_not_read_twice(command):
    paths = [f.path for f in analyse(command).files if f.kind == "read"]
    assert len(paths) == len(set(paths)), paths


def test_a_tree_git_show_names_is_listed_not_printed():
    assert reads("git show HEAD:.env") == {".env"}
    assert reads("git cat-file -p HEAD:src") == {"src"}


def test_in_another_directory_every_file_below_it_is_read():
    assert any(path.endswith("/**") for path in reads("git -C sub log -p"))


@pytest.mark.parametrize("command", ['git show "$rev"', 'git show "$rev":a.py'])
def test_a_revision_the_rules_cannot_read_makes_the_command_opaque(command):
    assert analyse(command).segments[0].opaque


@pytest.mark.parametrize(
    "command, source",
    [
        ("git clone . /tmp/c", "./**"),
        ("git clone /srv/repo /tmp/c", "/srv/repo/**"),
        ("git clone file:///srv/repo", "/srv/repo/**"),
        ("git clone ../sibling", "../sibling/**"),
        ("git clone ./a:b c", "./a:b/**"),
    ],
)
def test_a_clone_of_a_repository_on_this_machine_reads_every_file_of_it(command, source):
    # a copy outside the workspace is out of the sandbox's reach (its read-deny globs hide workspace files)
    assert source in reads(command)


@pytest.mark.parametrize(
    "command",
    [
        "git clone https://example.com/r.git",
        "git clone ssh://host/r.git",
        "git clone git@github.com:o/r.git",
        "git clone host:r.git /tmp/c",
        "git clone --depth 1 https://example.com/r.git",
    ],
)
def test_a_clone_from_another_machine_reads_no_file_here(command):
    assert reads(command) == set()
