"""The second layer under a read deny: `deny read … "secrets/**"` is decided where a call names the file, but
a process reads files no rule sees (`python3 x.py`, a test suite, `make`). A read deny on a literal path or
directory is now kept by the sandbox too: the command finds the directory empty and the file empty, and
cannot unmount, rename or link its way to what was there. A glob without a literal path (`*.env`) names
nothing to hide: it stays the rules' alone.

Reports: anthropics/claude-code#57525 (a read deny walked around by a command that reads the file),
martymcenroe/AssemblyZero#693 (a Bash command printed the API key `Read(.dev.vars)` denied),
GSA-TTS/agentic-coding-quickstart#178 (`rg "" ~/.aws/` read what the read denylist named). Real processes."""

from __future__ import annotations

import os

import pytest

from dshc.compiler.policy.protected import hidden_paths
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.runtime import sandbox
from dshc.runtime.sandbox import Probe, SandboxUnavailable, confinement_in, plan
from dshc.runtime.sandbox.confine import bwrap_argv

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace, reason="needs Landlock and unprivileged user namespaces"
)
needs_bwrap = pytest.mark.skipif(PROBE.bwrap is None, reason="needs bubblewrap")

POLICY = """
policy secrets "Keeps secrets unread" extends workspace-write {
  default allow
  deny read when args.file_path matches "secrets/**"
  ask read when args.file_path matches ".env" or args.file_path matches "/srv/keys/*"
  guard ssh: deny read when args.file_path matches "~/.ssh/**"
  deny read when args.file_path matches "*.pem"
  deny read when args.file_path matches "logs/*" and plan_mode
  deny write when args.file_path matches "out/*"
}
"""


def test_only_what_a_rule_alone_names_becomes_a_hidden_path():
    policy = Program.load(texts={"p.dsh": POLICY}).composition(Request(host="web", policy="secrets")).policy
    # `*.pem` names no path, `… and plan_mode` is not the glob alone, a write deny is not a read's
    assert hidden_paths(policy) == ("secrets/", ".env", "/srv/keys/", "~/.ssh/")


@pytest.fixture
def tree(workspace):
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "token").write_text("TOKEN=hidden-token\n")
    (workspace / ".env").write_text("KEY=hidden-key\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('app')\n")
    return workspace


READS = (
    "python3 -c \"print(open('secrets/token').read())\" 2>&1 | tail -1; cat .env; echo env=$?; "
    "ls -A secrets; echo ls=$?; cat src/app.py; umount secrets; echo umount=$?; mv secrets s2; echo mv=$?; "
    "mv .env e2; echo mv-file=$?; ln .env e3; echo ln=$?; cat s2/token e2 e3 2>/dev/null"
)


def _hidden_ok(output: str) -> None:
    assert "hidden-token" not in output and "hidden-key" not in output, output
    assert "print('app')" in output, output  # what is not hidden reads as before
    for step in ("umount", "mv", "mv-file", "ln"):
        assert f"{step}=0" not in output, (step, output)


@needs_namespaces
def test_a_process_finds_a_hidden_directory_empty_and_a_hidden_file_empty(run_bash, tree):
    _hidden_ok(run_bash(READS, hidden_roots=("secrets/", ".env")))


@needs_bwrap
def test_bubblewrap_hides_them_too(run_bash, tree):
    _hidden_ok(run_bash(READS, hidden_roots=("secrets/", ".env"), sandbox_backend="bwrap"))


@needs_namespaces
def test_read_only_mode_hides_them_too(tree, state):
    import threading
    from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext

    ctx = ToolContext(
        workspace=str(tree),
        sandbox="read-only",
        owner="agent-1",
        state=state,
        abort=threading.Event(),
        timeout_s=60,
        hidden_roots=("secrets/", ".env"),
    )
    output = IMPLEMENTATIONS["tool-bash/bash"](
        {"command": "cat secrets/token .env; cat src/app.py", "description": "t"}, ctx
    )["output"]
    assert "hidden-token" not in output and "hidden-key" not in output and "print('app')" in output, output


def _found(**changes) -> Probe:
    return Probe(
        **{
            "platform": "linux",
            "landlock_abi": 3,
            "network_namespace": True,
            "bwrap": "/usr/bin/bwrap",
            "sandbox_exec": None,
            "seccomp": True,
            **changes,
        }
    )


def test_the_plan_names_each_hidden_path_to_every_mechanism(tmp_path):
    (tmp_path / "secrets").mkdir()
    (tmp_path / ".env").write_text("")
    conf = confinement_in(
        "workspace-write", str(tmp_path), "/tmp/t", hidden=("secrets/", ".env", "gone/", "~/.dshc-absent/")
    )
    assert conf.hidden == (f"{tmp_path}/secrets/", f"{tmp_path}/.env")  # what exists: a missing one holds nothing
    launch = plan(conf, ["/bin/true"], 3, _found())
    assert {f"-{tmp_path}/secrets/", f"-{tmp_path}/.env"} <= set(launch.argv)
    argv = bwrap_argv(conf, "/usr/bin/bwrap", ["true"])
    at = argv.index("--tmpfs")
    assert argv[at : at + 4] == ["--tmpfs", f"{tmp_path}/secrets", "--remount-ro", f"{tmp_path}/secrets"]
    at = argv.index(f"{tmp_path}/.env")
    assert argv[at - 2 : at + 1] == ["--ro-bind", "/dev/null", f"{tmp_path}/.env"]
    profile = plan(conf, ["/bin/true"], 3, _found(platform="darwin", sandbox_exec="/usr/bin/sandbox-exec")).argv[2]
    assert (
        f'(deny file-read*\n    (subpath "{tmp_path}/secrets")' in profile and f'(literal "{tmp_path}/.env")' in profile
    )
    with pytest.raises(SandboxUnavailable, match="unprivileged user namespaces .*unreadable"):
        plan(conf.replace(network=True), ["/bin/true"], 3, _found(network_namespace=False))
    assert plan(conf.replace(mode="danger-full-access"), ["/bin/true"], 3, _found()).mechanism == "none"


def _bash_in(workspace, state, workdir: str, command: str, **context) -> str:
    import threading
    from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext

    ctx = ToolContext(
        workspace=str(workspace),
        sandbox="workspace-write",
        owner="agent-1",
        state=state,
        abort=threading.Event(),
        timeout_s=60,
        **context,
    )
    return IMPLEMENTATIONS["tool-bash/bash"]({"command": command, "description": "t", "workdir": workdir}, ctx)[
        "output"
    ]


@needs_namespaces
def test_a_command_started_inside_a_hidden_directory_finds_it_empty_too(tree, state):
    # its working directory is looked up again after the mounts: the one it started in is what they cover
    output = _bash_in(tree, state, "secrets", "cat token; ls -A; echo listed", hidden_roots=("secrets/",))
    assert "hidden-token" not in output and "listed" in output, output


@needs_namespaces
def test_a_command_started_inside_a_protected_directory_cannot_write_there(tree, state):
    (tree / ".claude").mkdir()
    output = _bash_in(
        tree, state, ".claude", "echo planted > settings.json; echo wrote=$?", protected_roots=(".claude/",)
    )
    assert "wrote=0" not in output and not (tree / ".claude" / "settings.json").exists(), output


def test_decide_names_what_processes_cannot_read():
    from dshc.cli.host import describe_sandbox, sandbox_text

    program = Program.load(texts={"p.dsh": POLICY})
    described = describe_sandbox(program, Request(host="web", policy="secrets"), "bash")
    assert described["unreadable"] == ["secrets/", ".env", "/srv/keys/", "~/.ssh/"]
    assert ", unreadable: secrets/, .env, /srv/keys/, ~/.ssh/" in sandbox_text(described)
    # the read tool's own calls are the rules' to decide: nothing is mounted for them
    assert describe_sandbox(program, Request(host="web", policy="secrets"), "read")["unreadable"] == []


@needs_namespaces
def test_claude_code_bash_through_the_hook_finds_them_hidden(tmp_path, through_hook):
    project = tmp_path / "proj"
    (project / "secrets").mkdir(parents=True)
    (project / "secrets" / "token").write_text("TOKEN=hidden-token\n")
    (project / "p.dsh").write_text(POLICY)
    (project / ".dshc").write_text('load = ["p.dsh"]\npolicy = "secrets"\n')
    # the rules read the line, not the program: `python3 x.py` is the sandbox's to contain
    (project / "x.py").write_text("print(open('secrets/token').read())\n")
    answer, ran = through_hook(project, "python3 x.py; echo ran")
    assert answer["permissionDecision"] == "allow" and "updatedInput" in answer, answer
    assert "ran" in ran.stdout and "hidden-token" not in ran.stdout + ran.stderr, (ran.stdout, ran.stderr)


@needs_namespaces
def test_a_hidden_file_gone_before_the_command_starts_is_no_reason_to_refuse(workspace, tmp_path):
    # found when the plan was made, removed before the launcher mounts: nothing is left there to hide
    import subprocess
    from dshc.runtime.sandbox import Confinement

    conf = Confinement(
        "workspace-write", str(workspace), str(tmp_path), hidden=(f"{workspace}/gone.env", f"{workspace}/gone/")
    )
    done = subprocess.run(plan(conf, ["/bin/echo", "ran"], -1).argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "ran" in done.stdout, (done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("backend", ["auto", "bwrap"])
def test_a_hidden_file_with_another_hard_link_refuses_the_command(run_bash, workspace, backend):
    # hiding one name leaves the other reading the same file (`cat backup/token`): refused, not run
    from dshc.runtime.tools import ToolError

    (workspace / "token").write_text("s3cret\n")
    (workspace / "backup").mkdir()
    os.link(workspace / "token", workspace / "backup" / "token")
    with pytest.raises(ToolError) as caught:
        run_bash("cat backup/token > seen", hidden_roots=("token",), sandbox_backend=backend)
    assert caught.value.code == "SANDBOX_UNAVAILABLE" and "hard links" in caught.value.message
    assert not (workspace / "seen").exists()


@needs_namespaces
def test_a_deny_on_a_folder_by_its_own_path_hides_the_folder(run_bash, tree, tmp_path):
    # `matches "/home/me/.ssh"` names a folder without a trailing `/`: the null device cannot be mounted over
    # it, and every sandboxed command failed with "Not a directory"
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "id_rsa").write_text("PRIVATE-KEY\n")
    conf = confinement_in("workspace-write", str(tree), "/tmp/t", hidden=(str(keys),))
    assert conf.hidden == (f"{keys}/",)
    output = run_bash(f"cat {keys}/id_rsa; ls -A {keys}; echo ran; cat src/app.py", hidden_roots=(str(keys),))
    assert "PRIVATE-KEY" not in output and "ran" in output and "print('app')" in output, output
