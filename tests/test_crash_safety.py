"""Crash-safe runs: the framed log, blobs, concurrent writers, resume, signals, deadlines, RE2 grep,
replay of malformed logs, and a bounded batch of kill -9 trials (the long run is tests/bench)."""

from __future__ import annotations

import json
import os
import random
import signal
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crash_trials
from conftest import wait_for
from dshc.runtime import log_format
from dshc.runtime.calls_file import read_calls
from dshc.runtime.context import PipelineContext
from dshc.runtime.deadline import deadline_wrapper
from dshc.runtime.events import EventLog, read_log
from dshc.runtime.log_format import BadRecord
from dshc.runtime.pipeline import Pipeline
from dshc.runtime.scheduler import run_batch
from dshc.runtime.types import ToolCall

BIG = "z" * (log_format.BLOB_MIN_BYTES + 10)


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


# --- log format --------------------------------------------------------------------------
def test_a_torn_tail_is_set_aside_and_truncated_and_seq_continues(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))
    for n in range(3):
        log.append("note", n=n)
    log.close()
    whole = path.read_bytes()
    fragment = log_format.encode({"seq": 4, "type": "note", "n": 3})[:-7]  # killed mid-write
    path.write_bytes(whole + fragment)
    assert read_log(str(path)).torn_tail
    again = EventLog(str(path))
    record = again.append("note", n=4)
    again.close()
    assert record["seq"] == 4
    assert (tmp_path / "events.jsonl.torn").read_bytes() == fragment + b"\n"
    read = read_log(str(path))
    assert (read.problems, read.torn_tail) == ((), False)
    assert [r["seq"] for r in read.records] == [1, 2, 3, 4]


def test_a_record_altered_after_writing_is_reported_with_its_line(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))
    log.append("note", text="hello")
    log.append("note", text="world")
    log.close()
    path.write_bytes(path.read_bytes().replace(b"hello", b"HELLO"))
    read = read_log(str(path))
    assert [r["text"] for r in read.records] == ["world"]
    assert read.problems[0][0] == 1 and "checksum" in read.problems[0][1]


def test_a_prefix_of_a_framed_line_never_decodes():
    line = log_format.encode({"seq": 1, "type": "note", "text": "x" * 50})[:-1]
    for cut in range(1, len(line)):
        with pytest.raises(BadRecord):
            log_format.decode(line[:cut])
    assert log_format.decode(line)["text"] == "x" * 50


def test_large_values_live_beside_the_log_by_hash(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))
    log.append("tool/call", callId="c", name="write", arguments={"content": BIG, "small": "s"})
    log.close()
    raw = json.loads(lines_of(path)[0])
    ref = raw["arguments"]["content"]
    assert ref["size"] == len(BIG) and ref["$blob"].startswith("sha256:")
    assert len(lines_of(path)[0]) < 1000  # the record holds the hash, not the value
    assert (tmp_path / "events.jsonl.blobs" / ref["$blob"].replace(":", "-")).read_text() == BIG
    assert read_log(str(path)).records[0]["arguments"] == {"content": BIG, "small": "s"}


def test_a_model_cannot_forge_a_blob_reference(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))
    log.append("tool/call", callId="c1", name="write", arguments={"content": BIG})
    real_ref = json.loads(lines_of(path)[0])["arguments"]["content"]
    forged = {"path": "x", "content": dict(real_ref)}  # the model sends a reference as its own value
    log.append("tool/call", callId="c2", name="write", arguments=forged)
    log.close()
    assert read_log(str(path)).records[1]["arguments"] == forged


@pytest.mark.parametrize("ref", ["sha256:../../etc/passwd", "md5:00", None])
def test_a_blob_reference_outside_the_blob_folder_is_refused(tmp_path, ref):
    with pytest.raises(BadRecord):
        log_format.internalise({"$blob": ref, "size": 3}, str(tmp_path))


def test_an_altered_blob_is_a_problem_not_a_value(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))
    log.append("tool/call", callId="c", name="write", arguments={"content": BIG})
    log.close()
    (blob,) = (tmp_path / "events.jsonl.blobs").iterdir()
    blob.write_text("y" * len(BIG))
    read = read_log(str(path))
    assert read.records == () and "does not match" in read.problems[0][1]


# --- concurrent writers ------------------------------------------------------------------
def _append_many(path: Path, count: int) -> None:
    log = EventLog(str(path))
    for n in range(count):
        log.append("note", n=n, text=("w" * (n * 997 % 70000)))
    log.close()


def test_two_processes_appending_to_one_log_keep_one_sequence(tmp_path):
    path = tmp_path / "events.jsonl"
    pids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                _append_many(path, 100)
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    assert all(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 for pid in pids)
    read = read_log(str(path))
    assert (read.problems, read.torn_tail) == ((), False)
    assert [r["seq"] for r in read.records] == list(range(1, 201))
    sessions = {r["session"] for r in read.records}
    assert len(sessions) == 2
    for session in sessions:  # each writer's own records stay in its order
        assert [r["n"] for r in read.records if r["session"] == session] == list(range(100))


def test_replay_reads_two_runs_interleaved_in_one_log(tmp_path, cli):
    crash_trials.warm()
    log = tmp_path / "events.jsonl"
    pids = []
    for side in ("a", "b"):
        workspace = tmp_path / side
        workspace.mkdir()
        calls = tmp_path / f"{side}.jsonl"
        calls.write_text(
            "".join(
                json.dumps(
                    {"id": f"{n}", "name": "write", "arguments": {"file_path": f"{side}{n}.txt", "content": side}}
                )
                + "\n"
                for n in range(6)
            )
        )
        pids.append(
            crash_trials.spawn_run(
                ["run", str(calls), "--workspace", str(workspace), "--log", str(log), "--approve", "once"]
            )
        )
    assert [crash_trials.wait_exit(pid, 60) for pid in pids] == [0, 0]
    read = read_log(str(log))
    assert len({r["session"] for r in read.records}) == 2
    assert [r["seq"] for r in read.records] == list(range(1, len(read.records) + 1))
    replayed = cli("replay", str(log), "--policy", "workspace-write", "--json")
    assert replayed.code == 0 and replayed.json()["calls"] == 12
    stricter = cli("replay", str(log), "--policy", "read-only", "--json")
    assert stricter.code == 1 and len(stricter.json()["changes"]) == 12  # same call ids, both sessions


# --- resume ------------------------------------------------------------------------------
def _calls(tmp_path: Path, commands: dict[str, str]) -> Path:
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        "".join(
            json.dumps({"id": i, "name": "bash", "arguments": {"command": c, "description": i}}) + "\n"
            for i, c in commands.items()
        )
    )
    return calls


def _run(cli, calls: Path, tmp_path: Path, *extra: str):
    return cli(
        "run",
        str(calls),
        "--workspace",
        str(tmp_path),
        "--log",
        str(tmp_path / "events.jsonl"),
        "--approve",
        "once",
        "--json",
        *extra,
    )


def _effects(tmp_path: Path) -> list[str]:
    path = tmp_path / "effects.txt"
    return path.read_text().split() if path.exists() else []


def test_a_restart_re_emits_recorded_results_and_runs_nothing_twice(cli, tmp_path):
    calls = _calls(tmp_path, {"a": "echo a >> effects.txt; echo A", "b": "echo b >> effects.txt; echo B"})
    first = _run(cli, calls, tmp_path)
    second = _run(cli, calls, tmp_path)
    assert first.code == second.code == 0
    assert first.out == second.out and "A" in first.out
    assert _effects(tmp_path) == ["a", "b"]
    records = read_log(str(tmp_path / "events.jsonl")).records
    assert [r["callId"] for r in records if r["type"] == "tool/call"] == ["a", "b"]


def test_a_call_recorded_without_a_result_is_interrupted_once_and_rerun_only_on_request(cli, tmp_path):
    calls = _calls(tmp_path, {"a": "echo a >> effects.txt", "b": "echo b >> effects.txt"})
    log = EventLog(str(tmp_path / "events.jsonl"))  # a run that died while `a` was in flight
    log.append("request/header", context={}, workspace=str(tmp_path), calls=read_calls(str(calls)).digest)
    log.append("tool/call", callId="a", name="bash", arguments={}, parent=None)
    log.close()
    resumed = _run(cli, calls, tmp_path)
    results = [json.loads(line) for line in resumed.out.splitlines()]
    assert resumed.code == 1
    assert [(r["id"], r["isError"], r.get("error", {}).get("code")) for r in results] == [
        ("a", True, "INTERRUPTED"),
        ("b", False, None),
    ]
    assert _effects(tmp_path) == ["b"]
    _run(cli, calls, tmp_path)  # again: still interrupted, and marked only once
    records = read_log(str(tmp_path / "events.jsonl")).records
    assert sum(1 for r in records if r["type"] == "tool/interrupted") == 1
    rerun = _run(cli, calls, tmp_path, "--rerun-interrupted")
    assert rerun.code == 0 and _effects(tmp_path) == ["b", "a"]


def test_another_calls_file_over_the_same_log_is_not_resumed(cli, tmp_path):
    _run(cli, _calls(tmp_path, {"a": "echo a >> effects.txt"}), tmp_path)
    _run(cli, _calls(tmp_path, {"a": "echo other >> effects.txt"}), tmp_path)
    assert _effects(tmp_path) == ["a", "other"]


def test_a_calls_file_with_a_repeated_id_is_refused_with_its_line(cli, tmp_path):
    calls = _calls(tmp_path, {"a": "true"})
    calls.write_text(calls.read_text() * 2)
    result = cli("run", str(calls), "--workspace", str(tmp_path))
    assert result.code == 2 and ":2:" in result.err and "already used" in result.err


# --- signals -----------------------------------------------------------------------------
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_run_records_the_call_interrupted_and_kills_its_tree(tmp_path, sig, code):
    crash_trials.warm()
    calls = _calls(
        tmp_path, {"slow": "sleep 30 & sleep 30; echo slow >> effects.txt", "next": "echo next >> effects.txt"}
    )
    log, err = tmp_path / "events.jsonl", tmp_path / "stderr.txt"
    argv = ["run", str(calls), "--workspace", str(tmp_path), "--log", str(log), "--approve", "once"]
    pid = crash_trials.spawn_run(argv, err)
    wait_for(lambda: len(crash_trials.marked_processes(log)) >= 3, "bash and its two sleeps to be up")
    os.kill(pid, sig)
    assert crash_trials.wait_exit(pid, 15) == code
    message = err.read_text()
    assert message.count("\n") == 1 and "Traceback" not in message and "interrupted" in message
    records = read_log(str(log)).records
    assert [
        (r["type"], r.get("callId")) for r in records if r["type"].startswith("tool/") and r["type"] != "tool/decision"
    ] == [("tool/call", "slow"), ("tool/interrupted", "slow")]
    left = crash_trials.marked_processes(log)
    crash_trials.end_processes(left)
    assert left == [] and _effects(tmp_path) == []
    assert crash_trials.wait_exit(crash_trials.spawn_run(argv), 30) == 1  # resumed: slow stays interrupted
    assert _effects(tmp_path) == ["next"]


# --- deadlines ---------------------------------------------------------------------------
def _ctx(tmp_path, impls, seconds, grace_s=0.2):
    from dshc.compiler.view import ToolEntry, ToolView

    schema = json.dumps({"type": "object"})
    entries = tuple(ToolEntry(n, "test", f"test/{n}", "exclusive", schema, n, "allow", "ready") for n in impls)
    return PipelineContext(
        view=ToolView(None, "test", "linux", "root", "native", None, entries, None),
        log=EventLog(str(tmp_path / "events.jsonl")),
        implementations={f"test/{n}": body for n, body in impls.items()},
        tool_context=lambda sig: sig,
        execute_wrappers=(deadline_wrapper(seconds, grace_s=grace_s),),
    )


def test_a_body_that_ignores_its_deadline_still_ends_with_a_recorded_timeout(tmp_path):
    release, returned = threading.Event(), []

    def stubborn(args, signal):
        release.wait(60)  # never looks at the signal
        returned.append(True)
        return {}

    ctx = _ctx(tmp_path, {"stuck": stubborn, "after": lambda args, signal: {"ok": True}}, 0.1)
    outcomes, _ = run_batch([ToolCall.from_model("1", "stuck", {}), ToolCall.from_model("2", "after", {})], ctx)
    assert returned == []  # both calls ended while the stubborn body was still blocked
    release.set()
    assert outcomes[0].result.error["code"] == "TOOL_TIMEOUT" and "abandoned" in outcomes[0].result.content
    assert outcomes[1].result.is_error is False
    results = [r for r in read_log(str(tmp_path / "events.jsonl")).records if r["type"] == "tool/result"]
    assert [(r["callId"], r["isError"]) for r in results] == [("1", True), ("2", False)]


def test_a_write_that_finished_past_its_deadline_is_reported_done(tmp_path):
    target = tmp_path / "out.txt"

    def slow_write(args, signal):
        assert signal.wait(30)  # past the deadline (a long grace keeps a loaded machine within it)
        target.write_text("done")
        return {"bytes": 4}

    outcome = Pipeline().run(ToolCall.from_model("1", "w", {}), _ctx(tmp_path, {"w": slow_write}, 0.05, grace_s=30))
    assert outcome.result.is_error is False and target.read_text() == "done"


def test_a_body_that_stops_at_its_deadline_is_a_timeout(tmp_path):
    def polite(args, signal):
        signal.wait(10)
        raise RuntimeError("stopped")

    outcome = Pipeline().run(ToolCall.from_model("1", "p", {}), _ctx(tmp_path, {"p": polite}, 0.05, grace_s=30))
    assert outcome.result.error["code"] == "TOOL_TIMEOUT" and "stopped when told" in outcome.result.content


# --- grep --------------------------------------------------------------------------------
def test_a_catastrophic_pattern_ends_with_a_recorded_result(cli, tmp_path):
    (tmp_path / "a.txt").write_text("a" * 200_000 + "\n")
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps({"id": "g", "name": "grep", "arguments": {"pattern": "(a*)*b", "path": "a.txt"}})
        + "\n"
        + json.dumps({"id": "r", "name": "grep", "arguments": {"pattern": "(a)\\1"}})
        + "\n"
    )
    result = cli(
        "run",
        str(calls),
        "--workspace",
        str(tmp_path),
        "--log",
        str(tmp_path / "ev.jsonl"),
        "--json",
        "--timeout",
        "20",
    )
    first, second = (json.loads(line) for line in result.out.splitlines())
    assert (first["isError"], first["content"]) == (False, "no matches")
    assert second["isError"] and "linear-time engine" in second["content"]
    results = [r["callId"] for r in read_log(str(tmp_path / "ev.jsonl")).records if r["type"] == "tool/result"]
    assert results == ["g", "r"]


# --- replay of malformed logs -------------------------------------------------------------
def _log_with(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(log_format.encode(r) for r in records))
    return path


HEADER = {"seq": 1, "type": "request/header", "context": {"host": "web"}, "workspace": "/tmp"}
CALL = {"seq": 2, "type": "tool/call", "callId": "c", "name": "read", "arguments": {"file_path": "a"}}
DECISION = {"seq": 3, "type": "tool/decision", "callId": "c", "name": "read", "decision": "allow"}


@pytest.mark.parametrize(
    "records, line",
    [
        ((HEADER, {**CALL, "callId": None}, DECISION), 2),
        ((HEADER, CALL, {k: v for k, v in DECISION.items() if k != "name"}), 3),
        (({k: v for k, v in HEADER.items() if k != "context"}, CALL, DECISION), 1),
        (({**HEADER, "context": {"host": "web", "colour": "red"}}, CALL, DECISION), 1),
        (({**HEADER, "context": {"platform": "amiga"}}, CALL, DECISION), 1),
        ((CALL, DECISION), 2),
        ((HEADER, CALL, {**DECISION, "decision": "maybe"}), 3),
        ((HEADER, {**CALL, "arguments": [1]}, DECISION), 3),
        ((HEADER, CALL, {**DECISION, "type": 7}), 3),
        ((HEADER, CALL, {**DECISION, "name": "write"}), 3),
    ],
    ids=[
        "no-callId",
        "no-name",
        "no-context",
        "unknown-context-field",
        "bad-context-value",
        "no-header",
        "bad-decision",
        "arguments-not-object",
        "type-not-text",
        "name-is-not-the-calls",
    ],
)
def test_a_malformed_record_is_a_diagnostic_with_its_line(cli, tmp_path, records, line):
    path = _log_with(tmp_path, *records)
    result = cli("replay", str(path), "--policy", "read-only")
    assert result.code == 2, result.err
    assert f"{path}:{line}:" in result.err


@pytest.mark.parametrize("raw", [b"[1, 2]\n", b"not json\n", b'"text"\n', b"{}\n"])
def test_a_line_that_is_not_a_record_is_a_diagnostic_with_its_line(cli, tmp_path, raw):
    path = _log_with(tmp_path, HEADER, CALL)
    path.write_bytes(path.read_bytes() + raw + log_format.encode(DECISION))
    result = cli("replay", str(path), "--policy", "read-only")
    assert result.code == 2 and f"{path}:3:" in result.err


def test_replay_accepts_a_log_whose_last_line_is_torn(cli, tmp_path):
    path = _log_with(tmp_path, HEADER, CALL, DECISION)
    path.write_bytes(path.read_bytes() + log_format.encode(DECISION)[:20])
    result = cli("replay", str(path), "--policy", "workspace-write", "--json")
    assert result.code == 0 and result.json()["torn_tail"] is True


# --- kill -9 trials (bounded; tests/bench/kill_trials.py runs 100+) ----------------------
def test_kill_trials_leave_whole_logs_no_repeats_and_no_processes(tmp_path):
    crash_trials.warm()
    rng = random.Random(11)
    results = [crash_trials.run_trial(tmp_path / f"t{n}", rng, 2 * 1024 * 1024, 1, 1.0) for n in range(10)]
    assert sum(r.kills for r in results) >= 7  # most trials really were killed mid-run
    assert [r for r in results if not r.ok] == []


@settings(max_examples=300, deadline=None)
@given(pattern=st.text(alphabet="ab^$.*+?|()[]\\s\\b", max_size=8), text=st.text(alphabet="abé \n\r", max_size=40))
def test_grep_finds_exactly_the_lines_a_search_per_line_finds(pattern, text):
    from dshc.runtime.tools.search import LineMatcher, _compile
    from dshc.runtime.tools.base import ToolError

    try:
        matcher = LineMatcher(pattern)
    except ToolError:
        return
    lines = text.splitlines()
    ctx = SimpleNamespace(abort=threading.Event())
    alone = _compile(pattern.encode("utf-8"))
    assert list(matcher.matching(lines, ctx)) == [i for i, line in enumerate(lines) if alone.search(line.encode())]


def test_a_resumed_result_is_read_whole_from_its_blob_or_reported_unreadable(tmp_path):
    from dshc.cli.run_calls import _not_run
    from dshc.runtime.log_records import prior_run

    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))
    log.append("request/header", context={}, workspace=str(tmp_path), calls="sha256:x")
    log.append("tool/call", callId="c", name="read", arguments={}, parent=None)
    log.append(
        "tool/result",
        callId="c",
        name="read",
        isError=False,
        content=BIG,
        value=None,
        error=None,
        decidedBy=[["p/allow@1", "p.dsh:1:1"]],
    )
    log.close()
    prior = prior_run(read_log(str(path), resolve_blobs=False), "sha256:x")
    call = ToolCall.from_model("c", "read", {})
    result = _not_run(call, prior, str(path))
    assert (result.is_error, result.content, result.decided_by) == (False, BIG, (("p/allow@1", "p.dsh:1:1"),))
    for blob in (tmp_path / "events.jsonl.blobs").iterdir():
        blob.unlink()
    missing = _not_run(call, prior, str(path))
    assert missing.is_error and missing.error["code"] == "RESULT_UNREADABLE"  # never run again


def test_replay_under_an_unknown_policy_is_one_diagnostic(cli, tmp_path):
    path = _log_with(tmp_path, HEADER, CALL, DECISION)
    result = cli("replay", str(path), "--policy", "read-onyl")
    assert result.code == 2 and result.err.count("DSH207") == 1 and "read-only" in result.err
