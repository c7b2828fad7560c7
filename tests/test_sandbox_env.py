"""Secret variables kept from processes: `deny bash when args.command.env_read matches "*_TOKEN"` is decided on a
line's text, but `python3 x.py`, a test suite or `make` reads its own environment where no rule sees it. The
variables such a rule names are now absent from the environment of every process the sandbox starts (the
runtime's bash and persistent shell, the hook's confined line), and a confined process cannot read them from
another's `/proc/PID/environ` either. Real processes.

Reports: martymcenroe/AssemblyZero#693 (a Bash command printed an API key the file rules kept unread)."""

from __future__ import annotations

import json
import threading

import pytest

from dshc.compiler.enforcement import OS, RULES, enforcement_map
from dshc.compiler.policy.hidden_env import hidden_variables, present_names
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.runtime import sandbox

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace, reason="needs Landlock and unprivileged user namespaces"
)
needs_bwrap = pytest.mark.skipif(PROBE.bwrap is None, reason="needs bubblewrap")

POLICY = """
policy secrets "Keeps secret variables unread" extends workspace-write {
  default allow
  deny bash when args.command.env_read matches "*_TOKEN" or args.command.env_read in ["OPENAI_API_KEY"]
  guard aws: deny risk(any-process) when args.command.env_read matches "AWS_SECRET*"
  ask bash when args.command.env_read matches "*_PASSWORD" and plan_mode
}

policy negated {
  default allow
  deny bash when not args.command.env_read matches "HOME"
}

policy open extends secrets {
  sandbox danger-full-access
}
"""
SECRET = "s3cret-value-42"
# every way a process can see its environment: a script, a dump, its own /proc entry, and its ancestors'
READS = (
    'python3 -c \'import os; print("py=" + os.environ.get("GITHUB_TOKEN", "none"))\'; env; '
    "cat /proc/self/environ | tr '\\0' '\\n'; echo \"shell=${OPENAI_API_KEY:-none}\"; "
    "pid=$$; while [ \"$pid\" -gt 1 ]; do tr '\\0' '\\n' < /proc/$pid/environ 2>/dev/null; "
    "pid=$(awk '{print $4}' /proc/$pid/stat); done; echo KEEP=$KEEP_ME"
)


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"p.dsh": POLICY})


@pytest.fixture
def secrets_set(monkeypatch):
    for name in ("GITHUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, SECRET)
    monkeypatch.setenv("KEEP_ME", "kept")


def _hidden_ok(output: str) -> None:
    assert SECRET not in output, output
    assert "py=none" in output and "shell=none" in output, output
    assert "KEEP=kept" in output, output  # what no rule names is there as before


def test_only_what_a_rule_alone_names_becomes_a_hidden_variable(program):
    policy = program.composition(Request(host="web", policy="secrets")).policy
    # `and plan_mode` is not the test alone, and a `not` would hide every variable but one
    assert hidden_variables(policy) == ("*_TOKEN", "OPENAI_API_KEY", "AWS_SECRET*")
    assert hidden_variables(program.composition(Request(host="web", policy="negated")).policy) == ()
    assert present_names(
        hidden_variables(policy),
        {"GITHUB_TOKEN": "", "PATH": "", "AWS_SECRET_X": "", "OPENAI_API_KEY": "", "TOKEN": ""},
    ) == ("AWS_SECRET_X", "GITHUB_TOKEN", "OPENAI_API_KEY")


def _context(workspace, state, **changes):
    from dshc.runtime.tools import ToolContext

    return ToolContext(
        **{
            "workspace": str(workspace),
            "sandbox": "workspace-write",
            "owner": "agent-1",
            "state": state,
            "abort": threading.Event(),
            "timeout_s": 60,
            **changes,
        }
    )


@needs_namespaces
def test_a_process_finds_no_hidden_variable_in_its_environment_or_its_ancestors(run_bash, secrets_set):
    _hidden_ok(run_bash(READS, hidden_env=("GITHUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY")))


@needs_bwrap
def test_bubblewrap_keeps_them_too(run_bash, secrets_set):
    _hidden_ok(
        run_bash(READS, hidden_env=("GITHUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY"), sandbox_backend="bwrap")
    )


@needs_namespaces
def test_the_persistent_shell_starts_without_them_and_restarts_when_they_change(workspace, state, secrets_set):
    from dshc.runtime.tools import IMPLEMENTATIONS

    bash = IMPLEMENTATIONS["tool-bash-persistent/bash"]
    hidden = ("GITHUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY")
    _hidden_ok(bash({"command": READS}, _context(workspace, state, hidden_env=hidden))["output"])
    # a shell started with a variable is not reused once the policy hides it
    assert SECRET in bash({"command": "echo $GITHUB_TOKEN"}, _context(workspace, state))["output"]
    assert (
        SECRET not in bash({"command": "echo t=$GITHUB_TOKEN"}, _context(workspace, state, hidden_env=hidden))["output"]
    )


@needs_namespaces
def test_dshc_run_hides_what_the_policy_names(cli, tmp_path, secrets_set):
    (tmp_path / "p.dsh").write_text(POLICY)
    # the rules read the line, not the script it runs: what the script reads is the sandbox's to stop
    (tmp_path / "reads.sh").write_text(READS)
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps({"id": "c1", "name": "bash", "arguments": {"command": "bash reads.sh", "description": "d"}}) + "\n"
    )
    done = cli(
        "run",
        str(calls),
        "--load",
        str(tmp_path / "p.dsh"),
        "--host",
        "web",
        "--policy",
        "secrets",
        "--workspace",
        str(tmp_path),
        "--json",
    )
    assert json.loads(done.out)["isError"] is False, done.out
    _hidden_ok(json.loads(done.out)["content"])


def test_danger_full_access_hides_nothing(run_bash, secrets_set):
    output = run_bash("echo t=$GITHUB_TOKEN", sandbox="danger-full-access", hidden_env=("GITHUB_TOKEN",))
    assert f"t={SECRET}" in output, output


@needs_namespaces
def test_claude_code_bash_through_the_hook_finds_them_unset(tmp_path, through_hook, secrets_set):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "p.dsh").write_text(POLICY)
    (project / ".dshc").write_text('load = ["p.dsh"]\npolicy = "secrets"\n')
    (project / "reads.sh").write_text(READS)
    answer, ran = through_hook(project, "bash reads.sh")
    assert answer["permissionDecision"] == "allow" and "-u GITHUB_TOKEN" in answer["updatedInput"]["command"], answer
    _hidden_ok(ran.stdout + ran.stderr)


def test_decide_and_explain_name_the_hidden_variables(program, cli, tmp_path):
    from dshc.cli.host import describe_sandbox, sandbox_text

    described = describe_sandbox(program, Request(host="web", policy="secrets"), "bash")
    assert described["hidden_env"] == ["*_TOKEN", "OPENAI_API_KEY", "AWS_SECRET*"]
    assert ", environment without *_TOKEN, OPENAI_API_KEY, AWS_SECRET*" in sandbox_text(described)
    assert describe_sandbox(program, Request(host="web", policy="secrets"), "read")["hidden_env"] == []
    assert describe_sandbox(program, Request(host="web", policy="open"), "bash")["hidden_env"] == []
    (tmp_path / "p.dsh").write_text(POLICY)
    done = cli(
        "decide",
        "bash",
        "--args",
        json.dumps({"command": "ls", "description": "d"}),
        "--load",
        str(tmp_path / "p.dsh"),
        "--host",
        "web",
        "--policy",
        "secrets",
    )
    assert "environment without *_TOKEN, OPENAI_API_KEY, AWS_SECRET*" in done.out, done.out


def test_the_enforcement_map_places_a_hiding_rule_with_the_os(program):
    def layers(name, mechanism="landlock+mounts"):
        return {
            row.rule: (row.layer, row.concerns, row.witness)
            for row in enforcement_map(program.resolved.policies[name], mechanism)
        }

    rows = layers("secrets")
    assert rows["secrets/deny@4"][:2] == (OS, "variables read `*_TOKEN`, `OPENAI_API_KEY`")
    assert rows["secrets/guard:aws"][0] == OS
    # a condition beyond the names is the line's alone: a script reading its environment walks around it
    assert rows["secrets/ask@6"][0] == RULES and 'os.environ["x_PASSWORD"]' in rows["secrets/ask@6"][2]
    assert layers("open")["open/deny@4"][0] == RULES  # no confining sandbox: nothing is removed
