"""The policy's process-sandbox lines: `network allow|deny`, `writable "PATH"` and
`sandbox fallback unsandboxed` parse, inherit, format, are checked, reach the ToolContext,
and show in decide / explain / the decision record."""

from __future__ import annotations

import json

import pytest

from dshc.cli.host import describe_sandbox, sandbox_settings, session
from dshc.compiler.program import Program
from dshc.compiler.request import Request

LAB = """policy lab "Workspace-write with a package cache and the network" extends workspace-write {
  network allow
  writable "~/.cache/pip"
  sandbox fallback unsandboxed
}

policy lab-child extends lab {
  writable "/opt/cache"
}
"""


@pytest.fixture(scope="module")
def lab() -> Program:
    return Program.load(texts={"lab.dsh": LAB})


def test_settings_inherit_and_reach_the_tool_context(lab, tmp_path):
    policy = lab.composition(Request(host="web", policy="lab-child")).policy
    assert sandbox_settings(policy) == {
        "network": True,
        "network_allow": (),
        "network_deny": (),
        "writable_roots": ("~/.cache/pip", "/opt/cache"),
        "sandbox_fallback": True,
        "protected_roots": (),
        "hidden_roots": (),
        "sandbox_backend": "auto",
    }
    ctx, state = session(lab, Request(host="web", policy="lab-child"), str(tmp_path))
    try:
        tool_ctx = ctx.tool_context(ctx.signal)
        assert (tool_ctx.sandbox, tool_ctx.network, tool_ctx.writable_roots, tool_ctx.sandbox_fallback) == (
            "workspace-write",
            True,
            ("~/.cache/pip", "/opt/cache"),
            True,
        )
    finally:
        state.close()


def test_unsaid_means_network_off_and_fail_closed(program):
    policy = program.composition(Request(host="web", policy="workspace-write")).policy
    assert sandbox_settings(policy) == {
        "network": False,
        "network_allow": (),
        "network_deny": (),
        "writable_roots": (),
        "sandbox_fallback": False,
        "protected_roots": (),
        "hidden_roots": (),
        "sandbox_backend": "auto",
    }


@pytest.mark.parametrize(
    "line, message",
    [
        ("network maybe", "network must be `allow` or `deny`"),
        ('writable "relative/dir"', "must be absolute or start with `~/`"),
        ("sandbox fallback never", "the only sandbox fallback is `unsandboxed`"),
    ],
)
def test_bad_values_are_diagnosed(cli, tmp_path, line, message):
    path = tmp_path / "bad.dsh"
    path.write_text(f"policy bad {{\n  {line}\n}}\n")
    result = cli("check", "--load", str(path), "--json")
    assert result.code == 2
    (diag,) = result.json()["diagnostics"]
    assert diag["code"] == "DSH109" and message in diag["message"] and diag["line"] == 2


def test_a_repeated_network_line_is_an_error(cli, tmp_path):
    path = tmp_path / "twice.dsh"
    path.write_text("policy twice {\n  network allow\n  network deny\n}\n")
    result = cli("check", "--load", str(path), "--json")
    assert result.code == 2 and [d["code"] for d in result.json()["diagnostics"]] == ["DSH306"]


def test_check_warns_about_the_fallback(cli, tmp_path):
    path = tmp_path / "lab.dsh"
    path.write_text(LAB)
    result = cli("check", str(path), "--json")
    warnings = [d for d in result.json()["diagnostics"] if d["code"] == "DSH315"]
    assert len(warnings) == 1 and warnings[0]["severity"] == "warning" and warnings[0]["line"] == 4
    assert result.code == 1


def test_format_keeps_the_lines(cli, tmp_path):
    path = tmp_path / "lab.dsh"
    path.write_text(LAB.replace("  network allow\n", "  network   allow ;\n"))
    assert cli("fmt", str(path)).code == 0
    assert path.read_text() == LAB
    assert cli("fmt", "--check", str(path)).code == 0


def test_decide_and_explain_name_the_sandbox(cli):
    decided = cli(
        "decide",
        "bash",
        "--args",
        json.dumps({"command": "make", "description": "x", "sandbox_permissions": "danger-full-access"}),
        "--host",
        "web",
        "--policy",
        "read-only",
        "--json",
    ).json()
    assert decided["sandbox"]["mode"] == "read-only" and decided["sandbox"]["applies_to"] == "processes"
    assert decided["sandbox"]["escalation_if_approved"] == "danger-full-access"
    assert decided["sandbox"]["network"] == "deny"
    text = cli(
        "decide",
        "bash",
        "--args",
        '{"command": "ls", "description": "x"}',
        "--host",
        "web",
        "--policy",
        "danger-full-access",
    ).out
    assert "sandbox: danger-full-access for processes via none" in text
    explained = cli("explain", "read", "standard", "--host", "web", "--policy", "read-only", "--json").json()
    assert explained["sandbox"]["applies_to"] == "files"
    assert "sandbox" not in cli("explain", "read", "standard", "--host", "web", "--json").json()


def test_the_sandbox_description_is_none_for_tools_without_process_or_file(program):
    assert describe_sandbox(program, Request(host="web", policy="read-only"), "todo_write") is None


def test_decision_events_record_the_sandbox(cli, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    calls, log = tmp_path / "calls.jsonl", tmp_path / "events.jsonl"
    calls.write_text(json.dumps({"id": "c1", "name": "read", "arguments": {"file_path": "missing"}}) + "\n")
    cli("run", str(calls), "--workspace", str(workspace), "--policy", "read-only", "--log", str(log))
    (decision,) = [r for r in map(json.loads, log.read_text().splitlines()) if r["type"] == "tool/decision"]
    assert decision["sandbox"]["mode"] == "read-only" and decision["sandbox"]["applies_to"] == "files"
