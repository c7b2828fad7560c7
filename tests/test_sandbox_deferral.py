"""The rule layer leaves to the sandbox what the sandbox provably enforces: a command's access to a whole tree
(`grep -rn x .`, `git diff`, a branch switch) is judged without the read denies whose files the sandbox hides
and the write denies whose files it keeps read-only, so `git diff -- src` runs under `deny read … "*.env"`;
every file a line names (`cat .env`, `< .env`, `cat src/*`) stays the rules' to refuse, as does history that
may print what git holds elsewhere (`git log -p`, `git diff HEAD~3`) and a tree the sandbox does not search
(`grep -r KEY ~`). With no sandbox promised (no `sandbox` line, `danger-full-access`, `fallback unsandboxed`)
nothing is left to it.

Reports: anthropics/claude-code#45200 and #32226 (file-tool rules and the Bash sandbox disagree), and the
everyday commands a secrets deny refused (`git diff`, `rg`) in this project's own guarded policy."""

from __future__ import annotations

import json
import os

import pytest

from conftest import bash_by_both
from dshc.compiler.program import Program
from dshc.runtime import sandbox

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace, reason="needs Landlock and unprivileged user namespaces"
)

POLICY = """
policy secrets "No secrets read, no settings written" {
  default allow
  sandbox workspace-write
  guard no-secrets: deny read when args.file_path matches "*.env"
  deny read when args.file_path matches "~/.ssh/**"
  deny write when args.file_path matches "protected/*"
  deny write when args.file_path matches "*.lock"
}

policy bare "The same rules, no sandbox promised" {
  default allow
  guard no-secrets: deny read when args.file_path matches "*.env"
  deny write when args.file_path matches "protected/*"
}

policy open "The same rules, the sandbox off" extends secrets {
  sandbox danger-full-access
}

policy fallback "The same rules, run unconfined where no sandbox exists" extends secrets {
  sandbox fallback unsandboxed
}
"""

DEFERRED = [
    "git diff -- src",
    "git diff",
    "git diff --cached -- src",
    "grep -rn print .",
    "rg TODO src",
    "grep -r --include='*.py' x src",
    "tar -cf /tmp/src.tar src",
    "cd src && grep -r x .",
]
REFUSED = [
    "cat .env",
    "grep KEY .env",
    "cat src/*",
    "cat < .env",
    "git log -p",
    "git diff HEAD~3 -- src",
    "git show HEAD",
    "grep -r KEY ~",
    'grep -r KEY "$DIR"',
    "grep -r KEY ../other",
    "cp .env x",
]


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"p.dsh": POLICY})


@pytest.mark.parametrize("command", DEFERRED)
def test_a_tree_read_is_left_to_the_sandbox_that_hides_the_secrets(program, tmp_path, command):
    indexed, reference = bash_by_both(program, "secrets", command, str(tmp_path))
    assert indexed.effect == reference.effect == "allow", (indexed.reason, reference.reason)
    assert (
        "the sandbox hides from the command what secrets/deny@6, secrets/guard:no-secrets keep from being read"
        in indexed.reason
    )


@pytest.mark.parametrize("command", REFUSED)
def test_what_a_line_names_or_the_sandbox_cannot_hide_stays_refused(program, tmp_path, command):
    indexed, reference = bash_by_both(program, "secrets", command, str(tmp_path))
    assert indexed.effect == reference.effect == "deny", (indexed.reason, reference.reason)


@pytest.mark.parametrize("policy", ["bare", "open", "fallback"])
@pytest.mark.parametrize("command", ["git diff -- src", "grep -rn print .", "git checkout main"])
def test_nothing_is_left_to_a_sandbox_that_is_not_promised(program, tmp_path, policy, command):
    indexed, reference = bash_by_both(program, policy, command, str(tmp_path))
    assert indexed.effect == reference.effect == "deny", (indexed.reason, reference.reason)


def test_a_literal_path_is_hidden_wherever_the_tree_is(tmp_path):
    # `~/.ssh/**` is mounted over wherever it is: a search of the home may be left to the sandbox for it
    program = Program.load(
        texts={
            "p.dsh": "policy ssh {\n  default allow\n  sandbox workspace-write\n"
            '  deny read when args.file_path matches "~/.ssh/**"\n}\n'
        }
    )
    indexed, reference = bash_by_both(program, "ssh", "grep -r KEY ~", str(tmp_path))
    assert indexed.effect == reference.effect == "allow", indexed.reason
    assert bash_by_both(program, "ssh", "cat ~/.ssh/id_rsa", str(tmp_path))[0].effect == "deny"


def test_a_branch_switch_is_left_to_the_read_only_mounts_but_not_to_a_glob_they_do_not_keep(program, tmp_path):
    # `protected/*` is a read-only mount; `*.lock` names no folder, so a branch switch may rewrite one unseen
    indexed, reference = bash_by_both(program, "secrets", "git checkout main", str(tmp_path))
    assert indexed.effect == reference.effect == "deny" and "*.lock" not in indexed.reason
    assert "secrets/deny@" in indexed.deciding[0][0]
    lenient = Program.load(texts={"p.dsh": POLICY.replace('  deny write when args.file_path matches "*.lock"\n', "")})
    indexed, reference = bash_by_both(lenient, "secrets", "git checkout main", str(tmp_path))
    assert indexed.effect == reference.effect == "allow", indexed.reason
    assert "keeps read-only for the command what secrets/deny@7 keeps from being written" in indexed.reason
    # a file the line names is the rules' still
    assert bash_by_both(lenient, "secrets", "git checkout main -- protected/x", str(tmp_path))[0].effect == "deny"


def test_a_write_glob_under_a_folder_no_write_root_reaches_is_the_oss(tmp_path, monkeypatch):
    # `~/.kube/config*`: every file it matches is outside the workspace, the temp and cache folders, so
    # Landlock keeps it; `~/w*` matches the workspace `~/ws` itself, `~/.cache/*.txt` and `~/.*_history` (a `*`
    # crosses `/`) meet the private temp folder below the cache
    from pathlib import Path

    home = Path("/nonexistent/home")  # outside the temp folder, a write root; decisions never touch it
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    text = 'policy kube {{\n  default allow\n  sandbox workspace-write\n  deny write when args.file_path matches "{}"\n}}\n'
    for pattern, effect in (
        ("~/.kube/config*", "allow"),
        ("~/.*_history", "deny"),
        ("/dev/sd*", "allow"),
        ("~/w*", "deny"),
        ("~/.cache/*.txt", "deny"),
        ("/tmp/x/*.txt", "deny"),
        ("/dev/n*", "deny"),
        ("~/*/x.txt", "deny"),
    ):
        program = Program.load(texts={"p.dsh": text.format(pattern)})
        indexed, reference = bash_by_both(program, "kube", "git checkout main", str(home / "ws"))
        assert indexed.effect == reference.effect == effect, (pattern, indexed.reason)


def test_the_devices_every_mode_writes_are_the_launchers():
    from dshc.compiler.policy.deferral import DEVICES
    from dshc.runtime.sandbox.confine import DEVICES as LAUNCHED

    assert DEVICES == LAUNCHED


@pytest.fixture
def repository(tmp_path, git):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('app')\n")
    (root / ".gitignore").write_text(".env\n")
    (root / "old.env").write_text("KEY=committed-secret\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "with a secret")
    git(root, "rm", "-q", "--cached", "old.env")
    (root / "old.env").unlink()
    git(root, "commit", "-qm", "secret removed, still in history")
    (root / ".env").write_text("KEY=current-secret\nprint('in env')\n")
    (root / "src" / "app.py").write_text("print('app changed')\n")
    (root / "protected").mkdir()
    (root / "w.py").write_text("open('protected/planted', 'w').write('x')\n")
    return root


@needs_namespaces
def test_everyday_git_and_searches_run_and_never_print_the_secret(cli, repository, tmp_path):
    (tmp_path / "p.dsh").write_text(POLICY)
    commands = {
        "diff": "git diff -- src",
        "status": "git status --short",
        "grep": "grep -rn print .",
        "cat": "cat .env",
        "log": "git log -p",
        "script": "python3 w.py; echo wrote=$?",
    }
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        "".join(
            json.dumps({"id": key, "name": "bash", "arguments": {"command": command, "description": key}}) + "\n"
            for key, command in commands.items()
        )
    )
    done = cli(
        "run",
        str(calls),
        "--load",
        str(tmp_path / "p.dsh"),
        "--policy",
        "secrets",
        "--workspace",
        str(repository),
        "--log",
        str(tmp_path / "events.jsonl"),
        "--json",
    )
    rows = {row["id"]: row for row in map(json.loads, done.out.splitlines())}
    everything = done.out + done.err
    assert "current-secret" not in everything and "committed-secret" not in everything, everything
    assert "app changed" in rows["diff"]["content"], rows["diff"]
    assert "src/app.py" in rows["status"]["content"], rows["status"]
    assert "src/app.py" in rows["grep"]["content"] and "in env" not in rows["grep"]["content"], rows["grep"]
    for refused in ("cat", "log"):
        assert rows[refused]["error"] is not None and "no-secrets" in rows[refused]["content"], rows[refused]
    # a program writes files no rule sees: the write deny inside the workspace is a read-only mount
    assert "wrote=0" not in rows["script"]["content"] and not (repository / "protected" / "planted").exists()


@needs_namespaces
def test_a_secret_reached_through_a_link_is_hidden_from_the_search(cli, repository, tmp_path):
    # `grep -R` follows links: what one reaches outside the workspace is searched for and hidden too
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "prod.env").write_text("KEY=linked-secret\n")
    os.symlink(outside, repository / "src" / "linked")
    (tmp_path / "p.dsh").write_text(POLICY)
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps(
            {"id": "g", "name": "bash", "arguments": {"command": "grep -rRn KEY src; echo ran", "description": "g"}}
        )
        + "\n"
    )
    done = cli(
        "run",
        str(calls),
        "--load",
        str(tmp_path / "p.dsh"),
        "--policy",
        "secrets",
        "--workspace",
        str(repository),
        "--log",
        str(tmp_path / "events.jsonl"),
        "--json",
    )
    assert "linked-secret" not in done.out + done.err and "ran" in done.out, done.out
