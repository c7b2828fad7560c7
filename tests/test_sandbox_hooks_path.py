"""What runs code later, beyond `.git/hooks`: the hooks folder a repository's `core.hooksPath` names (husky sets
`.husky/_`; git then reads no `.git/hooks` at all), the hook managers' own configuration (husky's scripts,
pre-commit's and lefthook's files, whose commands the installed hook runs on `git commit`), a dev container's
definition (`initializeCommand` runs on the host) and the agent configurations that start MCP servers
(`.cursor/mcp.json`, `.gemini/settings.json`). A confined command could write them, and the user's next commit
or editor would run what it wrote, outside any sandbox.

Reports: safedep/pmg#444 (core.hooksPath leaves the live hook directory writable: `.husky/_/pre-commit` ran,
`.git/hooks/pre-commit` did not), rappdw/sandy#86 (a hooks folder `core.hooksPath` names but that is missing
at launch is created by the agent and fires on the next host commit). Real processes, real git."""

from __future__ import annotations

import pytest

from dshc.runtime import sandbox
from dshc.runtime.sandbox import confinement_in
from dshc.runtime.sandbox.files import change_refused, hooks_path

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace, reason="needs Landlock and unprivileged user namespaces"
)
needs_bwrap = pytest.mark.skipif(PROBE.bwrap is None, reason="needs bubblewrap")


def _refused(output: str, *steps: str) -> None:
    for step in steps:
        assert f"{step}=0" not in output, (step, output)


COMMIT = (
    "echo b > b.txt && git add b.txt && git -c user.email=t@example.com -c user.name=t commit -qm two; echo commit=$?"
)


@needs_namespaces
@pytest.mark.parametrize("backend", ["auto", pytest.param("bwrap", marks=needs_bwrap)])
def test_the_hooks_folder_git_reads_cannot_be_written(run_bash, repo, backend, git):
    git(repo, "config", "core.hooksPath", ".husky/_")
    (repo / ".husky" / "_").mkdir(parents=True)
    (repo / ".husky" / "_" / "pre-commit").write_text('#!/bin/sh\n. "$(dirname "$0")/h"\n')
    output = run_bash(
        "echo 'touch pwned' >> .husky/_/pre-commit; echo hook=$?; "
        "echo 'touch pwned' > .husky/pre-commit; echo script=$?; mv .husky h; echo mv=$?; " + COMMIT,
        sandbox_backend=backend,
    )
    _refused(output, "hook", "script", "mv")
    assert "commit=0" in output and not (repo / "pwned").exists(), output


@needs_namespaces
def test_a_hooks_folder_named_but_missing_cannot_be_made(run_bash, repo, git):
    git(repo, "config", "core.hooksPath", ".githooks")
    output = run_bash(
        "mkdir -p .githooks && printf '#!/bin/sh\\ntouch pwned\\n' > .githooks/pre-commit "
        "&& chmod +x .githooks/pre-commit; echo planted=$?; " + COMMIT
    )
    _refused(output, "planted")
    assert "commit=0" in output and not (repo / "pwned").exists(), output


@needs_namespaces
def test_hook_managers_dev_containers_and_agent_servers_are_kept(run_bash, workspace):
    for name in (".pre-commit-config.yaml", "lefthook.yml", ".devcontainer.json"):
        (workspace / name).write_text("x: 1\n")
    for folder in (".devcontainer", ".cursor", ".gemini"):
        (workspace / folder).mkdir()
    output = run_bash(
        "echo y >> .pre-commit-config.yaml; echo precommit=$?; echo y >> lefthook.yml; echo lefthook=$?; "
        "echo y >> .devcontainer.json; echo devfile=$?; echo '{}' > .devcontainer/devcontainer.json; "
        "echo devcontainer=$?; echo '{}' > .cursor/mcp.json; echo cursor=$?; "
        "echo '{}' > .gemini/settings.json; echo gemini=$?; echo ok > other.txt; echo other=$?"
    )
    _refused(output, "precommit", "lefthook", "devfile", "devcontainer", "cursor", "gemini")
    assert "other=0" in output, output


HOOKS_PATHS = [
    ("[core]\n\thooksPath = .githooks\n", ".githooks"),
    ('[Core]\n\tHOOKSPATH = ".husky/_" # husky\n', ".husky/_"),
    ("[core]\n\thooksPath = one\n[user]\n\tname = x\n[core]\n\thooksPath = two ; the last one wins\n", "two"),
    ('[remote "origin"]\n\thooksPath = not-core\n', None),
    ("[core]\n\tbare = false\n", None),
]


@pytest.mark.parametrize("text,expected", HOOKS_PATHS)
def test_the_hooks_path_is_read_as_git_reads_it(tmp_path, text, expected):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(text)
    assert hooks_path(str(tmp_path)) == (str(tmp_path / expected) if expected else None)


def test_a_worktree_or_submodule_reads_the_config_its_git_file_names(tmp_path):
    (tmp_path / "main" / ".git").mkdir(parents=True)
    (tmp_path / "main" / ".git" / "config").write_text("[core]\n\thooksPath = /elsewhere/hooks\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".git").write_text(f"gitdir: {tmp_path}/main/.git\n")  # a submodule: its own git folder
    assert hooks_path(str(tmp_path / "sub")) == "/elsewhere/hooks"  # an absolute path is taken as written
    worktree = tmp_path / "main" / ".git" / "worktrees" / "tree"  # as `git worktree add` lays it out
    worktree.mkdir(parents=True)
    (worktree / "commondir").write_text("../..\n")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / ".git").write_text(f"gitdir: {worktree}\n")
    assert hooks_path(str(tmp_path / "tree")) == "/elsewhere/hooks"  # the main repository's config


def test_a_change_there_is_refused_as_running_code_later(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n\thooksPath = .githooks\n")
    ws = str(tmp_path)
    assert "runs code later" in change_refused("workspace-write", ws, ".githooks/pre-commit")
    assert "runs code later" in change_refused("workspace-write", ws, ".pre-commit-config.yaml")
    assert "runs code later" in change_refused("workspace-write", ws, ".devcontainer/devcontainer.json")
    assert change_refused("workspace-write", ws, "src/app.py") is None
    conf = confinement_in("workspace-write", ws, "/tmp/t")
    assert f"{ws}/.githooks/" in conf.run_later  # named but missing: made and kept, as a protected folder is
