"""The policy's OS sandbox for Claude Code's Bash, through the hook (cli/hook_sandbox.py).

Claude Code runs a Bash command itself, so under the hook `sandbox read-only` did not stop a shell from
writing, and a `deny write … ".claude/*"` held only for what the rules could read in the line. Now a
Bash call a policy with a sandbox lets run comes back as `updatedInput`: the same call, its command run
by the launcher inside that sandbox. Real `dshc hook claude-code` processes; the command they hand back
is run by `bash -c` in the call's cwd, as Claude Code's shell runs a command.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dshc.cli import sandbox_record
from dshc.cli.hook import main as hook_main
from dshc.runtime import sandbox

DSHC = [sys.executable, "-c", "from dshc.cli.entry import entry; entry()"]
PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace, reason="needs Landlock and unprivileged user namespaces"
)

POLICIES = """
policy keep "writes the workspace, never .claude" extends workspace-write {
  deny write, edit when args.file_path matches ".claude/*"
  deny bash when args.command matches "rm *"
}
policy look "reads only" extends read-only {
}
policy open "no sandbox line" {
  default allow
}
policy full "no sandbox" extends danger-full-access {
}
policy optout "may run bare where nothing confines" extends workspace-write {
  sandbox fallback unsandboxed
}
"""


SANDBOXED_OPEN = """
policy open_but_sandboxed "every command, in the sandbox" extends workspace-write {
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    root.mkdir()
    (root / "p.dsh").write_text(POLICIES + SANDBOXED_OPEN)
    (root / "src").mkdir()
    return root


def _event(project: Path, command: str, **tool_input) -> str:
    return json.dumps(
        {
            "session_id": "s",
            "cwd": str(project / "src"),
            "hook_event_name": "PreToolUse",
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_use_id": "toolu_1",
            "tool_input": {"command": command, "description": "d", **tool_input},
        }
    )


def hook(project: Path, policy: str, command: str, **tool_input) -> dict:
    (project / ".dshc").write_text(f'load = ["p.dsh"]\npolicy = "{policy}"\n')
    done = subprocess.run(
        [*DSHC, "hook", "claude-code"],
        input=_event(project, command, **tool_input),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["hookSpecificOutput"]


def as_claude_code_runs(project: Path, answer: dict) -> subprocess.CompletedProcess:
    """The call's command, as Claude Code's shell runs it: the updated one when the hook gave one."""
    command = answer.get("updatedInput", {}).get("command")
    assert command is not None, answer
    return subprocess.run(["bash", "-c", command], cwd=project / "src", capture_output=True, text=True, timeout=60)


@needs_namespaces
def test_a_script_cannot_write_a_protected_directory_nor_reach_the_network(project):
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{}")
    with socket.create_server(("127.0.0.1", 0)) as server:  # on the host; the sandbox has a loopback of its own
        port = server.getsockname()[1]
        (project / "src" / "w.sh").write_text(
            "echo '{\"hooks\": 1}' > ../.claude/settings.json; echo wrote=$?\n"
            "echo ok > out.txt; echo own=$?\n"
            'f=$(mktemp); echo x > "$f"; echo tmp=$?; echo x > /tmp/dshc-shared-$$; echo shared=$?\n'
            f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=2)' 2>/dev/null;"
            " echo net=$?\n"
        )
        answer = hook(project, "keep", "sh w.sh", timeout=120000)
        assert answer["permissionDecision"] == "allow"
        assert "runs in the policy's `sandbox workspace-write`" in answer["permissionDecisionReason"]
        assert answer["updatedInput"]["description"] == "d" and answer["updatedInput"]["timeout"] == 120000
        done = as_claude_code_runs(project, answer)
    assert "wrote=0" not in done.stdout and "own=0" in done.stdout and "net=0" not in done.stdout, done
    assert "tmp=0" in done.stdout and "shared=0" not in done.stdout, done  # its own temp folder, not /tmp
    assert (project / ".claude" / "settings.json").read_text() == "{}"
    assert (project / "src" / "out.txt").read_text() == "ok\n"


@needs_namespaces
def test_sandbox_read_only_stops_a_shell_from_writing(project):
    # a script: what it writes is the sandbox's to stop (the rules already refuse a redirection they see)
    (project / "src" / "w.sh").write_text(
        "echo x > made.txt; echo wrote=$?; cat /etc/hostname >/dev/null; echo read=$?\n"
    )
    answer = hook(project, "look", "sh w.sh")
    done = as_claude_code_runs(project, answer)
    assert "wrote=0" not in done.stdout and "read=0" in done.stdout, done
    assert not (project / "src" / "made.txt").exists()


@needs_namespaces
@pytest.mark.parametrize(
    "command",
    [
        "printf '%s|' \"a b\" 'c'\"'\"'d' $((1 + 2)); echo \"it's\" \\$HOME",
        "for i in 1 2; do echo $i; done\necho second line",
        "echo ü ✓ && false || echo fell back; exit 3",
    ],
)
def test_the_command_runs_as_it_would_bare(project, command):
    done = as_claude_code_runs(project, hook(project, "keep", command))
    bare = subprocess.run(["bash", "-c", command], cwd=project / "src", capture_output=True, text=True)
    assert (done.stdout, done.returncode) == (bare.stdout, bare.returncode)


@pytest.mark.parametrize("policy", ["open", "full"])
def test_a_policy_without_a_confining_sandbox_leaves_the_command_alone(project, policy):
    answer = hook(project, policy, "echo hi > a.txt")
    assert answer["permissionDecision"] == "allow" and "updatedInput" not in answer


def test_a_denied_call_is_not_rewritten(project):
    answer = hook(project, "keep", "rm -r build")
    assert answer["permissionDecision"] == "deny" and "updatedInput" not in answer


def _in_process(project: Path, policy: str, command: str) -> dict:
    (project / ".dshc").write_text(f'load = ["p.dsh"]\npolicy = "{policy}"\n')
    out = io.StringIO()
    assert hook_main(["claude-code"], io.StringIO(_event(project, command)), out, io.StringIO()) == 0
    return json.loads(out.getvalue())["hookSpecificOutput"]


def test_where_nothing_can_confine_the_call_is_denied_unless_the_policy_opted_out(project, monkeypatch):
    bare = sandbox.Probe("linux", 0, False, None, None, False)
    monkeypatch.setattr(sandbox_record, "reported_probe", lambda: bare)
    denied = _in_process(project, "keep", "echo hi")
    assert denied["permissionDecision"] == "deny" and "updatedInput" not in denied
    assert "`sandbox workspace-write` cannot be kept here" in denied["permissionDecisionReason"]
    bare_run = _in_process(project, "optout", "echo hi")  # `fallback unsandboxed`: the command as it was
    assert bare_run["permissionDecision"] == "allow" and "updatedInput" not in bare_run


def test_without_a_sandbox_the_hook_loads_none_of_its_planner(project):
    (project / ".dshc").write_text('load = ["p.dsh"]\npolicy = "open"\n')
    probe = (
        "import sys\nfrom dshc.cli.entry import run\nrun(['hook', 'claude-code'])\n"
        "print([m for m in sys.modules if m.startswith('dshc.runtime.sandbox') or m == 'shlex'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], input=_event(project, "ls"), capture_output=True, text=True, timeout=120
    )
    assert done.stdout.splitlines()[-1] == "[]", done.stdout + done.stderr


def test_other_tools_are_not_rewritten(project):
    (project / ".dshc").write_text('load = ["p.dsh"]\npolicy = "keep"\n')
    event = json.loads(_event(project, "x"))
    # a `command` field of another tool is no shell command
    event.update(tool_name="Read", tool_input={"file_path": str(project / "src" / "a.md"), "command": "x"})
    out = io.StringIO()
    hook_main(["claude-code"], io.StringIO(json.dumps(event)), out, io.StringIO())
    assert "updatedInput" not in json.loads(out.getvalue())["hookSpecificOutput"]
    assert os.path.exists(project / ".dshc")


@pytest.mark.parametrize("word", ["", "plain/path-1.2", "a b", "it's", "$HOME", "`x`", "a\nb", "ü", "'", "--x=y", "*"])
def test_a_quoted_word_is_one_shell_word(word):
    import shlex
    from dshc.cli.hook_sandbox import quote

    assert shlex.split(quote(word)) == [word]
    done = subprocess.run(["bash", "-c", f"printf %s {quote(word)}"], capture_output=True, text=True)
    assert done.stdout == word


@needs_namespaces
def test_a_missing_claude_folder_is_made_so_nothing_can_be_planted_in_it(project):
    # a settings file created where there was none would be read as one (its hooks, `disableAllHooks`)
    answer = hook(
        project, "open_but_sandboxed", "mkdir -p ../.claude; echo '{}' > ../.claude/settings.json; echo wrote=$?"
    )
    done = as_claude_code_runs(project, answer)
    assert "wrote=0" not in done.stdout, done
    assert (project / ".claude").is_dir() and list((project / ".claude").iterdir()) == []


@needs_namespaces
def test_a_confined_command_cannot_rewrite_what_configures_the_hook(project):
    # the next call would otherwise run under whatever the command wrote there: no sandbox line, no hook
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text('{"hooks": {}}')
    (project / "src" / "w.sh").write_text(
        "echo 'policy keep \"x\" { default allow }' > ../p.dsh; echo dsh=$?\n"
        "echo 'policy = \"open\"' >> ../.dshc; echo project=$?\n"
        "echo '{}' > ../.claude/settings.json; echo settings=$?\n"
        "echo '{\"disableAllHooks\": true}' > ../.claude/settings.local.json; echo local=$?\n"
        "mkdir -p ../.claude/hooks; echo 'touch pwned' > ../.claude/hooks/format.sh; echo script=$?\n"
        "echo ok > mine.txt; echo own=$?\n"
    )
    answer = hook(project, "open_but_sandboxed", "sh w.sh")
    done = as_claude_code_runs(project, answer)
    assert "own=0" in done.stdout and not {"dsh=0", "project=0", "settings=0", "local=0", "script=0"} & set(
        done.stdout.split()
    ), done
    assert sorted(p.name for p in (project / ".claude").iterdir()) == ["settings.json"]
    assert (project / "p.dsh").read_text() == POLICIES + SANDBOXED_OPEN
    assert (project / ".claude" / "settings.json").read_text() == '{"hooks": {}}'
