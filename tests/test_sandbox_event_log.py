"""The event log is out of reach of the commands it records (issue 49, M8): wherever it lives, a command the
sandbox confines cannot rewrite it, plant its torn-tail marker or fill its blob folder. Real confined
commands, through `dshc run` and through the Claude Code hook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dshc.runtime import sandbox
from dshc.runtime.events import read_log

PROBE = sandbox.probe()
pytestmark = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace,
    reason="needs Landlock and unprivileged user namespaces (mount namespaces)",
)
DSHC = [sys.executable, "-c", "from dshc.cli.entry import entry; entry()"]
ATTACK = (
    'echo \'{"seq":99,"type":"tool/result"}\' >> events.jsonl; echo log=$?; '
    "ln -sf ../home/.bashrc events.jsonl.torn; echo torn=$?; "
    "echo x > events.jsonl.blobs/planted; echo blobs=$?; "
    "mv events.jsonl moved.jsonl; echo moved=$?; "
    "echo ok > mine.txt; echo own=$?"
)


@pytest.fixture
def workspace(tmp_path, private_state) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def _refused_everything_but_its_own(stdout: str) -> None:
    words = set(stdout.split())
    assert "own=0" in words and not {"log=0", "torn=0", "blobs=0", "moved=0"} & words, stdout


def test_a_command_run_by_dshc_run_cannot_write_the_log_it_is_recorded_in(workspace):
    (workspace / "calls.jsonl").write_text(
        json.dumps({"id": "c1", "name": "bash", "arguments": {"command": ATTACK, "description": "d"}}) + "\n"
    )
    done = subprocess.run(
        [
            *DSHC,
            "run",
            "calls.jsonl",
            "--host",
            "web",
            "--policy",
            "workspace-write",
            "--approve",
            "never",
            "--log",
            "events.jsonl",
            "--json",
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    result = json.loads(done.stdout.splitlines()[0])
    _refused_everything_but_its_own(result["content"])
    read = read_log(str(workspace / "events.jsonl"))
    assert read.problems == () and all(r.get("seq") != 99 for r in read.records)
    assert not (workspace / "events.jsonl.torn").is_symlink() and not (workspace / "moved.jsonl").exists()
    assert list((workspace / "events.jsonl.blobs").iterdir()) == []


def test_a_command_the_hook_confines_cannot_write_the_hooks_log(workspace):
    (workspace / ".dshc").write_text('policy = "workspace-write"\nlog = "events.jsonl"\n')
    event = {
        "session_id": "s",
        "cwd": str(workspace),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_use_id": "toolu_1",
        "tool_input": {"command": ATTACK, "description": "d"},
    }
    done = subprocess.run(
        [*DSHC, "hook", "claude-code"], input=json.dumps(event), capture_output=True, text=True, timeout=120
    )
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow" and "updatedInput" in answer, answer
    ran = subprocess.run(
        ["bash", "-c", answer["updatedInput"]["command"]], cwd=workspace, capture_output=True, text=True, timeout=60
    )
    _refused_everything_but_its_own(ran.stdout)
    read = read_log(str(workspace / "events.jsonl"))
    assert read.problems == () and [r["type"] for r in read.records] == ["request/header", "tool/call", "tool/decision"]
