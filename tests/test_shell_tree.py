"""compiler/shell/ on git commands that write a repository's files (catalogs/shell/commands.json `tree`,
`tree_options`, `tree_keeping`; `written` `clone` and `after_verb`): `git checkout BRANCH`, `git merge`, `git
stash pop` … wrote .claude/settings.json unseen by a `deny write … ".claude/*"` (anthropics/claude-code#23870).
Such a command is now a write of any file, with the reason named, as the repository's root may be any
directory above the working one. `git clone URL DIR`, `git worktree add PATH`, `git submodule add URL PATH`
and `git init DIR` write that directory; `git clone -c`, `--template` are read as git's own `-c` is. Bypass
forms are in the corpus."""

import pytest

from dshc.compiler.file_pattern import ANY
from dshc.compiler.program import Program
from dshc.compiler.shell import analyse
from conftest import bash_by_both

PROTECTED = """policy protect "Protect .claude" {
  default allow
  deny write when args.file_path matches ".claude/*"
}

policy commands_only "Rules on commands only" {
  default allow
  deny bash when args.command matches "rm *"
}
"""


def rewrites(command: str) -> bool:
    found = analyse(command)
    assert found is not None and not any(s.opaque for s in found.segments), (command, found)
    return any(f.kind == "write" and f.pattern == (ANY,) and f.why for f in found.files)


@pytest.mark.parametrize(
    "command",
    [
        "git checkout attacker",
        "git checkout -",
        "git checkout -b fresh origin/x",
        "git switch attacker",
        "git switch --detach x",
        "git switch -c fresh origin/x",
        "git switch --orphan fresh",
        "git merge x",
        "git merge --abort",
        "git pull",
        "git pull --rebase origin main",
        "git rebase main",
        "git cherry-pick abc",
        "git revert HEAD",
        "git am a.mbox",
        "git apply a.patch",
        "git apply --index a.patch",
        "git stash",
        "git stash push -m wip",
        "git stash pop",
        "git stash apply stash@{1}",
        "git stash branch b",
        "git reset --hard",
        "git reset --merge ORIG_HEAD",
        "git reset --keep HEAD~1",
        "git read-tree -u -m HEAD x",
        "git checkout-index -a -f",
        "git sparse-checkout set src",
        "git sparse-checkout disable",
        "git bisect start HEAD HEAD~5",
        "git bisect good",
        "git bisect run make test",
        'git checkout "$BRANCH"',
        "git co attacker",  # an alias may be checkout's
        "git -C sub checkout main",
        'cd "$D" && git pull',
        "git -c user.name=x merge main",
    ],
)
def test_a_command_that_may_rewrite_its_repository_writes_any_file(command):
    assert rewrites(command)


@pytest.mark.parametrize(
    "command",
    [
        "git switch -c feature",
        "git switch --create feature",
        "git checkout -b feature",
        "git checkout",
        "git checkout main -- src/a.py",
        "git checkout -- a.py",
        "git checkout a.py b.py",
        "git reset",
        "git reset --soft HEAD~1",
        "git reset HEAD notes.txt",
        "git stash list",
        "git stash show -p",
        "git stash drop",
        "git apply --check a.patch",
        "git apply --stat a.patch",
        "git apply --cached a.patch",
        "git am --show-current-patch",
        "git read-tree HEAD",
        "git bisect log",
        "git bisect",
        "git sparse-checkout list",
        "git status",
        "git log -p",
        "git fetch origin",
        "git commit -m x",
        "git -c user.name=x commit -m x",
        "git",
        "git add src/a.py",
        "git branch -d old",
    ],
)
def test_a_command_that_keeps_its_files_writes_none_of_them(command):
    assert not rewrites(command)


def test_the_reason_names_the_command_and_a_file_rule_decides_it():
    program = Program.load(texts={"p.dsh": PROTECTED})
    for decision in bash_by_both(program, "protect", "cd src && git checkout attacker"):
        assert decision.effect == "deny"
        assert "`git checkout attacker` may rewrite any file of its repository" in decision.reason
    for decision in bash_by_both(program, "protect", "git switch -c feature && git log"):
        assert decision.effect == "allow"


def test_a_policy_with_no_file_rule_is_not_made_to_decide_a_write():
    # the part exists only where the policy has a rule on `write`, as an opaque command's any-file parts
    program = Program.load(texts={"p.dsh": PROTECTED})
    for decision in bash_by_both(program, "commands_only", "git checkout main"):
        assert decision.effect == "allow"


def test_a_setting_s_value_is_not_the_subcommand():
    # `git -c K=V SUB`: V was read as an operand (the subcommand), so SUB's own row never applied
    assert not rewrites("git -c core.quotepath=off status")
    assert rewrites("git -c core.quotepath=off stash")


@pytest.mark.parametrize(
    "command, written",
    [
        ("git clone https://example.com/r.git", ["r", "r/**"]),
        ("git clone https://example.com/r.git/", ["r", "r/**"]),
        ("git clone git@example.com:team/tools.git", ["tools", "tools/**"]),
        ("git clone /srv/repo/.git", ["repo", "repo/**"]),
        ("git clone https://example.com/.claude", [".claude", ".claude/**"]),  # git's own name for it
        ("git clone x.bundle", ["x", "x/**"]),
        ("git clone example.com:tools.git", ["tools", "tools/**"]),
        ('git clone -- "$URL"', ["**", "**/**"]),  # a name not known: any
        ("git clone --depth 1 -b main https://example.com/r.git vendor/r", ["vendor/r", "vendor/r/**"]),
        ("git clone --separate-git-dir=g https://example.com/r.git", ["g", "r", "r/**"]),
        ("git worktree add -b fresh ../wt main", ["../wt", "../wt/**", "main", "main/**"]),
        ("git worktree list", []),
        (
            "git submodule add https://example.com/x libs/x",
            ["https://example.com/x", "https://example.com/x/**", "libs/x", "libs/x/**"],
        ),
        ("git submodule update --init", []),
        ("git init sub", ["sub", "sub/**"]),
        ("git init", []),
    ],
)
def test_a_git_command_that_makes_a_directory_writes_it(command, written):
    found = analyse(command)
    assert not any(s.opaque for s in found.segments)
    assert sorted(f.path for f in found.files if f.kind == "write") == written


@pytest.mark.parametrize(
    "command",
    [
        "git clone -c core.hooksPath=/tmp/h https://example.com/r.git",  # its post-checkout hook runs in the clone
        "git clone --template=/tmp/t https://example.com/r.git",
        "git init --template /tmp/t",
    ],
)
def test_a_clone_s_own_settings_and_templates_are_read(command):
    assert analyse(command).segments[0].opaque
    assert not analyse("git clone -c user.name=x https://example.com/r.git").segments[0].opaque
    assert not analyse("git log -c").segments[0].opaque  # a combined diff: git's `-c` only before the subcommand
