"""The second layer under a write deny inside the workspace: `deny write … ".claude/*"` is decided where a call
is, but a process writes files no rule sees (`sh w.sh`, `tar xf a.tar`, a build script). The OS sandbox now
keeps such a directory read-only (a read-only bind mount in the process's own mount namespace, Landlock after
it so the command cannot unmount it; bubblewrap `--ro-bind`; Seatbelt `deny file-write*`). Real processes;
anthropics/claude-code#11815 is the report: an agent in a sandbox rewrote its own .claude settings."""

from __future__ import annotations


import pytest

from dshc.cli.host import describe_sandbox, session
from dshc.compiler.policy.protected import protected_paths
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.runtime import sandbox
from dshc.runtime.sandbox import Confinement, Probe, plan, seatbelt
from dshc.runtime.sandbox.confine import missing
from dshc.runtime.tools import IMPLEMENTATIONS

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace, reason="needs Landlock and unprivileged user namespaces"
)

POLICIES = """
policy keeps-claude "keeps .claude" extends workspace-write {
  default allow
  deny write, edit when args.file_path matches ".claude/*"
}
policy several "several forms" {
  default allow
  ask write when args.file_path matches "config/**" or args.file_path matches "/srv/app/.env"
  guard hooks: deny write when args.file_path matches ".git/hooks/*"
  deny write when args.file_path matches "*.env"
  deny write when args.file_path matches "build/*" and plan_mode
  deny write when args.file_path matches "logs/*" or plan_mode
  deny edit when args.file_path matches "docs/*"
  allow write when args.file_path matches "out/*"
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"p.dsh": POLICIES})


def test_only_what_a_rule_alone_decides_becomes_a_path(program):
    policy = program.composition(Request(host="web", policy="several")).policy
    # `*.env` names no directory, `… and plan_mode` is not the glob alone, `edit` is not a process's write; each
    # test of an `or` decides alone, so `logs/*` in `… or plan_mode` is always denied
    assert protected_paths(policy) == ("config/", "/srv/app/.env", "logs/", ".git/hooks/")  # a directory's ends in `/`
    guarded = program.composition(Request(host="web", policy="keeps-claude")).policy
    assert protected_paths(guarded) == (".claude/",)


@pytest.fixture
def run(run_bash):
    return run_bash


@needs_namespaces
def test_a_protected_directory_cannot_be_written_renamed_or_unmounted(run, workspace):
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text("{}")
    (workspace / "w.sh").write_text("echo '{\"hooks\": 1}' > .claude/settings.json; echo wrote=$?\n")
    output = run(
        "sh w.sh; touch .claude/new; echo new=$?; mv .claude moved; echo mv=$?; rm -rf .claude; "
        "echo rm=$?; umount .claude; echo umount=$?; ln .claude/settings.json link; echo ln=$?; "
        "echo ok > other; echo other=$?",
        protected_roots=(".claude/",),
    )
    for step in ("wrote", "new", "mv", "rm", "umount", "ln"):
        assert f"{step}=0" not in output, (step, output)
    assert "other=0" in output
    assert (workspace / ".claude" / "settings.json").read_text() == "{}"
    assert sorted(p.name for p in (workspace / ".claude").iterdir()) == ["settings.json"]


@needs_namespaces
def test_a_missing_protected_directory_is_made_empty_and_kept(run, workspace):
    # planting `.claude/settings.json` where the project had none is the same attack
    (workspace / "w.sh").write_text("mkdir -p .claude; echo x > .claude/settings.json; echo wrote=$?\n")
    output = run("sh w.sh; echo x > secret.env; echo file=$?", protected_roots=(".claude/", "secret.env"))
    assert "wrote=0" not in output and sorted(p.name for p in (workspace / ".claude").iterdir()) == []
    assert "file=0" in output  # a missing file is not made: it is the rules' alone


needs_bwrap = pytest.mark.skipif(PROBE.bwrap is None, reason="needs bubblewrap")


@needs_bwrap
@pytest.mark.parametrize("present", [True, False])
def test_bubblewrap_keeps_a_protected_directory_present_or_missing(run, workspace, present):
    # `--ro-bind-try` skipped a missing directory: the script planted `.claude/settings.json` unhindered
    if present:
        (workspace / ".claude").mkdir()
    (workspace / "w.sh").write_text("mkdir -p .claude; echo x > .claude/settings.json; echo wrote=$?\n")
    output = run("sh w.sh; echo ok > other; echo other=$?", protected_roots=(".claude/",), sandbox_backend="bwrap")
    assert "wrote=0" not in output and "other=0" in output, output
    assert sorted(p.name for p in (workspace / ".claude").iterdir()) == []


@needs_namespaces
def test_without_protection_the_same_script_writes(run, workspace):
    # (not `.claude`: an agent's configuration that exists is kept read-only always, test_sandbox_run_later.py)
    (workspace / "conf").mkdir()
    (workspace / "w.sh").write_text("echo x > conf/settings.json; echo wrote=$?\n")
    assert "wrote=0" in run("sh w.sh")
    assert "wrote=0" not in run("sh w.sh", protected_roots=("conf/",))


@needs_namespaces
def test_a_policy_s_deny_reaches_the_process_sandbox(program, tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / "w.sh").write_text("echo x > .claude/settings.json; echo wrote=$?\n")
    ctx, state = session(program, Request(host="web", policy="keeps-claude"), str(tmp_path))
    try:
        tool_ctx = ctx.tool_context(ctx.signal)
        assert tool_ctx.protected_roots == (".claude/",)
        output = IMPLEMENTATIONS["tool-bash/bash"]({"command": "sh w.sh", "description": "t"}, tool_ctx)["output"]
    finally:
        state.close()
    assert "wrote=0" not in output and not (tmp_path / ".claude" / "settings.json").exists()
    described = describe_sandbox(program, Request(host="web", policy="keeps-claude"), "bash")
    assert described["read_only"] == [".claude/"] and described["mechanism"].endswith("+read-only-mounts")
    assert ".git/hooks" in described["read_only_where_present"]  # whatever the policy says (RUN_LATER)
    assert (
        describe_sandbox(program, Request(host="web", policy="keeps-claude"), "read")["read_only_where_present"] == []
    )


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


def test_each_mechanism_is_told_the_paths(tmp_path):
    ws = str(tmp_path)
    conf = Confinement("workspace-write", ws, "/tmp/t", protected=(f"{ws}/.claude/", "/etc/elsewhere"))
    assert conf.read_only() == (f"{ws}/.claude/",)  # outside every write root nothing is writable anyway
    launch = plan(conf, ["/bin/true"], 3, absent())
    assert f"!{ws}/.claude/" in launch.argv and launch.mechanism == "landlock+netns+read-only-mounts"
    bwrap = plan(
        Confinement("workspace-write", ws, "/tmp/t", protected=(f"{ws}/.claude/",), backend="bwrap"),
        ["/bin/true"],
        3,
        absent(bwrap="/usr/bin/bwrap"),
    )
    at = bwrap.argv.index(f"{ws}/.claude") - 1
    assert bwrap.argv[at : at + 3] == ["--ro-bind", f"{ws}/.claude", f"{ws}/.claude"]
    assert (tmp_path / ".claude").is_dir()  # made, empty, to be mounted: bubblewrap cannot skip it
    assert bwrap.argv.index("--bind") < at  # after the workspace's own bind, which it narrows
    text = seatbelt.profile([ws], [], False, [f"{ws}/.claude"])
    assert text.index("(allow file-write*") < text.index(f'(deny file-write*\n    (subpath "{ws}/.claude"))')
    # read-only mode writes nowhere in the workspace: nothing to keep
    assert Confinement("read-only", ws, "/tmp/t", protected=(f"{ws}/.claude",)).read_only() == ()


def test_without_namespaces_a_protected_path_fails_closed(tmp_path):
    conf = Confinement("workspace-write", str(tmp_path), "/tmp/t", network=True, protected=(f"{tmp_path}/.claude",))
    assert "read-only" in missing(conf, absent(network_namespace=False))
    assert (
        missing(Confinement("workspace-write", str(tmp_path), "/tmp/t", network=True), absent(network_namespace=False))
        is None
    )


@pytest.mark.skipif(PROBE.bwrap is None, reason="bubblewrap (`bwrap`) is not installed")
def test_bubblewrap_keeps_it_read_only_for_real(run, workspace):
    (workspace / ".claude").mkdir()
    (workspace / "w.sh").write_text("echo x > .claude/settings.json; echo wrote=$?; umount .claude; echo umount=$?\n")
    output = run(
        "sh w.sh; echo ok > other; echo other=$?", protected_roots=(".claude/", "missing"), sandbox_backend="bwrap"
    )
    assert "wrote=0" not in output and "umount=0" not in output and "other=0" in output, output
    assert not (workspace / ".claude" / "settings.json").exists()


NOSUID_SCRIPT = """
import subprocess, sys
from dshc.runtime.sandbox import confinement_in, plan
conf = confinement_in("workspace-write", sys.argv[1] + "/ws", sys.argv[1] + "/t", protected=(".claude/",),
                      hidden=("token",))
launch = plan(conf, ["/bin/sh", "-c", "echo x > .claude/a; echo claude=$?; cat token; echo ok > f; echo f=$?"], -1)
done = subprocess.run(launch.argv, cwd=sys.argv[1] + "/ws", capture_output=True, text=True)
print(done.returncode, done.stdout, done.stderr)
"""


@needs_namespaces
def test_a_workspace_on_a_nosuid_nodev_mount_keeps_its_paths_read_only(tmp_path):
    # a remount in a user namespace must keep the flags the parent namespace set (/tmp is often a nosuid,nodev
    # tmpfs): without them it was refused, and so was every command
    import shutil
    import subprocess
    import sys

    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1)")
    folder = tmp_path / "m"
    folder.mkdir()
    line = (
        f"mount -t tmpfs -o nosuid,nodev,noexec tmpfs {folder} && mkdir -p {folder}/ws/.claude {folder}/t && "
        f"echo s3cret > {folder}/ws/token && {sys.executable} -c '{NOSUID_SCRIPT}' {folder}"
    )
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", line],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.startswith("0 ") and "claude=0" not in done.stdout and "f=0" in done.stdout, done
    assert "s3cret" not in done.stdout, done
