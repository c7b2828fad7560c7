"""The event log in a real PostgreSQL (started here with initdb/pg_ctl): written, read back, restarted mid-run, audited."""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from dshc.runtime.events import EventLog, read_log

BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
psycopg = pytest.importorskip("psycopg")


def _as_owner(argv, owner):
    # initdb refuses root: as root, the server runs as the `postgres` user
    return ["runuser", "-u", owner, "--", *argv] if os.geteuid() == 0 else argv


class Server:
    def __init__(self):
        self.bin = BIN[-1]
        self.owner = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
        self.root = tempfile.mkdtemp(prefix="dshc-pg-")
        os.chmod(self.root, 0o755)
        if os.geteuid() == 0:
            shutil.chown(self.root, self.owner)
        self.data = os.path.join(self.root, "data")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.dsn = f"postgresql://dshc@127.0.0.1:{self.port}/postgres"
        subprocess.run(
            _as_owner([f"{self.bin}/initdb", "-D", self.data, "-A", "trust", "-U", "dshc"], self.owner),
            check=True,
            capture_output=True,
        )

    def start(self):
        subprocess.run(
            _as_owner(
                [
                    f"{self.bin}/pg_ctl",
                    "-D",
                    self.data,
                    "-l",
                    os.path.join(self.root, "log"),
                    "-w",
                    "-o",
                    f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off",
                    "start",
                ],
                self.owner,
            ),
            check=True,
            capture_output=True,
        )

    def stop(self):
        subprocess.run(
            _as_owner([f"{self.bin}/pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"], self.owner),
            check=False,
            capture_output=True,
        )


def _usable() -> str | None:
    if not BIN or not os.path.exists(os.path.join(BIN[-1], "initdb")):
        return "PostgreSQL server binaries are not installed (/usr/lib/postgresql/*/bin; Debian: postgresql)"
    if os.geteuid() == 0 and (shutil.which("runuser") is None or _no_user("postgres")):
        return "running as root without a `postgres` user to run initdb as"
    return None


def _no_user(name):
    try:
        pwd.getpwnam(name)
        return False
    except KeyError:
        return True


@pytest.fixture(scope="module")
def server():
    reason = _usable()
    if reason:
        pytest.skip(reason)
    pg = Server()
    pg.start()
    try:
        yield pg
    finally:
        pg.stop()
        shutil.rmtree(pg.root, ignore_errors=True)


@pytest.fixture
def dsn(server, monkeypatch, tmp_path):
    """A fresh database per test, and a private cache folder for the spool."""
    name = "t" + os.urandom(6).hex()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return server.dsn.rsplit("/", 1)[0] + "/" + name


def _without_time(records):
    # each log has its own id and chain (the hashes cover `time`)
    return [{k: v for k, v in r.items() if k not in ("time", "log", "prev")} for r in records]


def _write(log, n, start=0):
    for i in range(start, start + n):
        log.append(
            "tool/call", callId=str(i), name="read", arguments={"file_path": f"f{i}", "big": "é" * 10}, parent=None
        )
        log.append("tool/result", callId=str(i), name="read", isError=False, content=f"text {i}")


def _rows(dsn):
    from dshc.runtime.pg_log import read_postgres

    return read_postgres(dsn).records


def test_records_read_back_equal_the_jsonl_records_of_the_same_writes(dsn, tmp_path):
    from dshc.cli.log_target import open_log

    jsonl = EventLog(str(tmp_path / "events.jsonl"), session="s1")
    pg = open_log(dsn, session="s1")
    for log in (jsonl, pg):
        log.append("request/header", reason="initial", context={"preset": "claude-code"}, workspace="/w")
        _write(log, 5)
        log.close()
    assert _without_time(_rows(dsn)) == _without_time(read_log(str(tmp_path / "events.jsonl")).records)
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT count(*) FROM calls").fetchone()[0] == 5
        assert conn.execute("SELECT count(*) FROM results").fetchone()[0] == 5
        assert conn.execute("SELECT context FROM sessions").fetchone()[0] == {"preset": "claude-code"}
        assert conn.execute("SELECT max(version) FROM dshc_schema_version").fetchone()[0] == 1


def test_a_database_restart_mid_run_loses_and_duplicates_nothing(server, dsn):
    from dshc.cli.log_target import open_log
    import dshc.runtime.pg_log as pg_log

    log = open_log(dsn, session="restart")
    _write(log, 10)
    server.stop()
    try:
        _write(log, 10, start=10)  # the database is away: these wait in the spool
        with open(log.path, "rb") as spool:
            assert spool.read().count(b"\n") >= 20
    finally:
        server.start()
    time.sleep(pg_log.RETRY_S)  # appends wait this long after a failure before trying the database again
    _write(log, 10, start=20)
    assert [r["seq"] for r in _rows(dsn)] == list(range(1, 60))  # shipped by the appends, before close
    log.close()
    assert [r["seq"] for r in _rows(dsn)] == list(range(1, 61))
    with open(log.path, "rb") as spool:
        assert spool.read().count(b"\n") == 1  # shipped; only the last record is kept, for `seq`


def test_a_spool_left_by_a_run_that_ended_offline_is_shipped_by_the_next_writer(server, dsn):
    from dshc.cli.log_target import open_log

    server.stop()
    try:
        log = open_log(dsn, session="offline")
        _write(log, 3)
        log.close()
    finally:
        server.start()
    assert _rows(dsn) == ()
    open_log(dsn, session="later").close()
    assert [r["seq"] for r in _rows(dsn)] == [1, 2, 3, 4, 5, 6]


def test_reinserting_the_same_records_changes_nothing(dsn):
    from dshc.runtime.pg_log import _connect, insert, migrate

    records = [{"seq": i, "session": "dup", "type": "tool/call", "callId": str(i), "name": "read"} for i in (1, 2, 3)]
    with _connect(dsn) as conn:
        conn.autocommit = True
        migrate(conn)
        migrate(conn)  # idempotent
        insert(conn, records)
        insert(conn, records + [{**records[0], "name": "changed"}])
    assert [r["name"] for r in _rows(dsn)] == ["read", "read", "read"]


def _calls(tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        "\n".join(
            json.dumps(c)
            for c in [
                {"id": "1", "name": "read", "arguments": {"file_path": "a.txt"}},
                {"id": "2", "name": "write", "arguments": {"file_path": "b.txt", "content": "x"}},
                {"id": "3", "name": "bash", "arguments": {"command": "ls", "description": "list"}},
            ]
        )
        + "\n"
    )
    return calls


def test_run_to_a_dsn_then_replay_and_audit_from_it(cli, dsn, tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    ran = cli("run", str(_calls(tmp_path)), "--workspace", str(tmp_path), "--log", dsn, "--json")
    jsonl = tmp_path / "events.jsonl"
    cli("run", str(_calls(tmp_path)), "--workspace", str(tmp_path), "--log", str(jsonl), "--json")
    assert ran.code in (0, 1)
    stored = _rows(dsn)
    assert [r["type"] for r in stored] == [r["type"] for r in read_log(str(jsonl)).records]

    from_db = cli("replay", dsn, "--policy", "read-only", "--json")
    from_file = cli("replay", str(jsonl), "--policy", "read-only", "--json")
    assert from_db.code == from_file.code == 1
    assert from_db.json()["changes"] == from_file.json()["changes"]
    assert {c["callId"] for c in from_db.json()["changes"]} == {"2"}

    session = stored[0]["session"]
    audit = cli("audit", dsn, "--json", "--preset", "standard", "--session", session)
    assert audit.code == 0, audit.out + audit.err
    audit = audit.json()
    assert audit["records"] == len(stored) and audit["sessions"] == 1
    assert "read" not in audit["never_used"] and "write" not in audit["never_used"] and audit["never_used"]
    assert [row["seq"] for row in audit["timeline"]] == sorted(r["seq"] for r in stored)


def test_suggest_reads_a_dsn_as_it_reads_the_same_run_logged_to_a_file(cli, dsn, tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    jsonl = tmp_path / "events.jsonl"
    for target in (dsn, str(jsonl)):
        cli("run", str(_calls(tmp_path)), "--workspace", str(tmp_path), "--log", target, "--json")
    from_db = cli("suggest", "--from-log", dsn, "--json")
    assert from_db.code == 0, from_db.out + from_db.err
    assert from_db.json()["calls"] > 0 and from_db.json()["rules"] > 0
    # the suggestion is a function of the calls read (tests/test_suggest.py suggests from a file log on the
    # command line): the database gives the calls the file gives, so one proved suggestion stands for both
    from dshc.cli.evidence import read_evidence

    def calls(source):
        found = read_evidence(source, "log", {}, None, lambda name: False).calls
        return [dataclasses.replace(call, source="") for call in found]

    assert calls(dsn) == calls(str(jsonl)) and len(calls(dsn)) == from_db.json()["calls"]


def _resume_calls(tmp_path):
    calls = tmp_path / "resume.jsonl"
    calls.write_text(
        "\n".join(
            json.dumps(c)
            for c in [
                {"id": "w", "name": "write", "arguments": {"file_path": "out.txt", "content": "first\n"}},
                {"id": "r", "name": "read", "arguments": {"file_path": "out.txt"}},
            ]
        )
        + "\n"
    )
    return calls


def _run_twice(cli, dsn, tmp_path, between=None):
    argv = (
        "run",
        str(_resume_calls(tmp_path)),
        "--workspace",
        str(tmp_path),
        "--log",
        dsn,
        "--approve",
        "once",
        "--policy",
        "workspace-write",
        "--json",
    )
    first = cli(*argv)
    if between:
        between()
    (tmp_path / "out.txt").write_text("changed since\n")  # a re-run write would put "first" back
    second = cli(*argv)
    return first, second


def _calls_per_session(dsn):
    sessions = {}
    for record in _rows(dsn):
        if record["type"] == "tool/call":
            sessions.setdefault(record["session"], []).append(record["callId"])
    return sessions


def test_running_the_same_calls_to_a_dsn_again_resumes_instead_of_running_them_twice(cli, dsn, tmp_path):
    first, second = _run_twice(cli, dsn, tmp_path)
    assert first.code == 0, first.out + first.err
    rows = lambda text: [json.loads(line) for line in text.splitlines()]  # noqa: E731 - jsonb keeps no key order
    assert second.code == 0 and rows(second.out) == rows(first.out)  # the recorded results, printed again
    assert (tmp_path / "out.txt").read_text() == "changed since\n"  # the write did not run again
    assert sorted(_calls_per_session(dsn).values()) == [["w", "r"]]  # one session ran calls, once each


def test_resuming_reads_only_the_sessions_of_its_own_calls_file(cli, dsn, tmp_path):
    from dshc.runtime.pg_log import read_postgres

    (tmp_path / "a.txt").write_text("hello")
    for calls in (_resume_calls(tmp_path), _calls(tmp_path)):
        cli("run", str(calls), "--workspace", str(tmp_path), "--log", dsn, "--approve", "once", "--json")
    headers = [r for r in _rows(dsn) if r["type"] == "request/header"]
    assert len({h["calls"] for h in headers}) == 2
    for header in headers:
        assert {r["session"] for r in read_postgres(dsn, header["calls"]).records} == {header["session"]}


def test_a_run_resumes_from_records_spooled_while_the_database_was_away(server, dsn, tmp_path):
    # the database goes away while the first run's slow call runs: what follows exists only in its spool
    (tmp_path / "slow.jsonl").write_text(
        "\n".join(
            json.dumps(c)
            for c in [
                {
                    "id": "slow",
                    "name": "bash",
                    "arguments": {"command": "sleep 2 && echo done >> ran.txt", "description": "slow"},
                },
                {"id": "w", "name": "write", "arguments": {"file_path": "out.txt", "content": "first\n"}},
            ]
        )
        + "\n"
    )
    argv = [
        sys.executable,
        "-c",
        "from dshc.cli.entry import entry; entry()",
        "run",
        str(tmp_path / "slow.jsonl"),
        "--workspace",
        str(tmp_path),
        "--log",
        dsn,
        "--approve",
        "once",
        "--policy",
        "workspace-write",
        "--json",
    ]
    env = {**os.environ}
    first = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not any(r.get("callId") == "slow" for r in _rows(dsn)):  # a call is in the database before it runs
        assert time.monotonic() < deadline and first.poll() is None, first.communicate()
        time.sleep(0.05)
    server.stop()
    try:
        out, err = first.communicate(timeout=60)
    finally:
        server.start()
    assert first.returncode == 0, err
    assert [r["callId"] for r in _rows(dsn) if r["type"] == "tool/result"] == []  # nothing after the stop shipped
    (tmp_path / "out.txt").write_text("changed since\n")
    second = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, timeout=60)
    assert second.returncode == 0, second.stderr
    rows = lambda text: [json.loads(line) for line in text.splitlines()]  # noqa: E731
    assert rows(second.stdout) == rows(out)  # both results read back from the first run's spool
    assert (tmp_path / "ran.txt").read_text() == "done\n" and (tmp_path / "out.txt").read_text() == "changed since\n"
    assert sorted(_calls_per_session(dsn).values()) == [["slow", "w"]]  # the spool was shipped, nothing re-ran


def test_a_run_to_an_unreachable_dsn_refuses_to_start_rather_than_risk_running_calls_twice(cli, server, dsn, tmp_path):
    server.stop()
    try:
        refused = cli("run", str(_resume_calls(tmp_path)), "--workspace", str(tmp_path), "--log", dsn, "--json")
    finally:
        server.start()
    assert refused.code == 2 and "DSH107" in refused.out and not (tmp_path / "out.txt").exists()
    assert "resume" in refused.out


def test_audit_counts_denials_by_rule(cli, dsn, tmp_path):
    cli("run", str(_calls(tmp_path)), "--workspace", str(tmp_path), "--log", dsn, "--policy", "read-only", "--json")
    audit = cli("audit", dsn, "--json").json()
    denied = [r for r in _rows(dsn) if r.get("type") == "tool/decision" and r.get("decision") == "deny"]
    assert denied and sum(audit["denials_by_rule"].values()) >= len(denied)
    text = cli("audit", dsn)
    assert text.code == 0 and "denials by rule:" in text.out


def test_an_unreachable_dsn_for_replay_is_a_diagnostic_not_a_traceback(cli):
    result = cli("replay", "postgresql://nobody:secret@127.0.0.1:1/x", "--policy", "read-only")
    assert result.code != 0 and "DSH107" in result.err and "secret" not in result.err and "Traceback" not in result.err


def test_hook_pre_and_post_records_pair_in_the_database(dsn, tmp_path):
    import io
    from dshc.cli.hook import main as hook_main

    (tmp_path / "a.txt").write_text("x")
    base = {
        "session_id": "pg-hook",
        "cwd": str(tmp_path),
        "tool_name": "Read",
        "tool_use_id": "toolu_1",
        "tool_input": {"file_path": str(tmp_path / "a.txt")},
    }
    for event in ("PreToolUse", "PostToolUse"):
        payload = {**base, "hook_event_name": event, **({"tool_response": {"ok": 1}} if event == "PostToolUse" else {})}
        out, err = io.StringIO(), io.StringIO()
        assert hook_main(["claude-code", "--log", dsn], io.StringIO(json.dumps(payload)), out, err) == 0, err.getvalue()
    stored = _rows(dsn)
    assert [r["type"] for r in stored] == ["request/header", "tool/call", "tool/decision", "tool/result"]
    assert [r["seq"] for r in stored] == [1, 2, 3, 4] and {r["session"] for r in stored} == {"claude-code-pg-hook"}


def test_the_runtime_and_cli_import_no_psycopg_without_a_dsn():
    import subprocess
    import sys

    code = (
        "import sys, dshc.cli.main, dshc.cli.log_target, dshc.runtime.pg_log; "
        "assert 'psycopg' not in sys.modules, 'psycopg imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_serve_logs_its_mcp_calls_to_a_dsn(dsn, tmp_path):
    """`dshc serve --log postgresql://…`: a real MCP client's calls and results land in the database."""
    import sys
    import anyio
    from mcp import Client, StdioServerParameters

    (tmp_path / "a.txt").write_text("hello")
    argv = [
        sys.executable,
        "-c",
        "from dshc.cli.entry import entry; entry()",
        "serve",
        "--policy",
        "read-only",
        "--workspace",
        str(tmp_path),
        "--log",
        dsn,
    ]
    params = StdioServerParameters(
        command=argv[0],
        args=argv[1:],
        cwd=str(tmp_path),
        env={**os.environ, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]},
    )

    async def main():
        async with Client(params, mode="legacy") as client:
            ran = await client.call_tool("read", {"file_path": str(tmp_path / "a.txt")})
            assert not ran.is_error
            denied = await client.call_tool("write", {"file_path": str(tmp_path / "b.txt"), "content": "x"})
            assert denied.is_error and not (tmp_path / "b.txt").exists()

    anyio.run(main)
    stored = _rows(dsn)
    calls = [r["name"] for r in stored if r.get("type") == "tool/call"]
    assert calls == ["read", "write"]
    assert [r["seq"] for r in stored] == list(range(1, len(stored) + 1))  # one session, nothing lost or doubled
    decisions = {r["name"]: r["decision"] for r in stored if r.get("type") == "tool/decision"}
    assert decisions.get("read") == "allow" and decisions.get("write") in ("deny", "ask")


TAMPERING = {  # (SQL over the session's rows, the kind `dshc audit verify` reports)
    "edited": (
        "UPDATE events SET record = jsonb_set(record, '{content}', '\"forged\"') WHERE session = 'v' AND seq = 3",
        "edited",
    ),
    "edited-columns": ("UPDATE events SET type = 'tool/call' WHERE session = 'v' AND seq = 3", "edited"),
    "deleted": ("DELETE FROM events WHERE session = 'v' AND seq = 3", "gap"),
    "reordered": (
        "UPDATE events SET id = -id WHERE session = 'v' AND seq IN (3, 4); "  # ids are unique row by row
        "UPDATE events SET id = CASE WHEN seq = 3 THEN -(SELECT id FROM events WHERE session = 'v' AND "
        "seq = 4) ELSE -(SELECT id FROM events WHERE session = 'v' AND seq = 3) END "
        "WHERE session = 'v' AND seq IN (3, 4)",
        "reordered",
    ),
    "truncated": ("DELETE FROM events WHERE session = 'v' AND seq = (SELECT max(seq) FROM events)", "truncated"),
}


@pytest.mark.parametrize("tampering", sorted(TAMPERING))
def test_verify_catches_a_database_log_tampered_with(cli, dsn, tampering):
    from dshc.cli.log_target import open_log

    logs = [open_log(dsn, session=session) for session in ("v", "w")]  # two writers, their rows interleaved
    for log in logs:
        log.append("request/header", reason="initial", fingerprint="sha256:" + "a" * 64, context={}, workspace="/w")
    for n in range(3):
        for log in logs:
            _write(log, 1, start=n)
    for log in logs:
        log.close()
    intact = cli("audit", "verify", dsn, "--json")
    assert intact.code == 0 and intact.json()["records"] == 14, intact.out
    assert [chain["head_seq"] for chain in intact.json()["logs"]] == [7, 7], intact.out
    sql, kind = TAMPERING[tampering]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql)
    done = cli("audit", "verify", dsn, "--json")
    assert done.code == 1 and done.json()["problem"]["kind"] == kind, done.out
    assert "***" not in dsn or "***" in done.json()["log"]


def test_a_dsn_run_verifies_and_big_values_hash_alike_in_the_database(cli, dsn, tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps({"id": "1", "name": "write", "arguments": {"file_path": "b.txt", "content": "é" * 70_000}}) + "\n"
    )
    cli("run", str(calls), "--workspace", str(tmp_path), "--log", dsn, "--approve", "once", "--json")
    done = cli("audit", "verify", dsn)
    assert done.code == 0 and "intact" in done.out, done.out + done.err


def test_session_facts_read_the_database_and_what_the_spool_has_not_sent(dsn):
    """`session.*` facts from a database log: its rows and the records a writer fsynced to its spool but never
    shipped (a fact missed there would let a call through that the strictest state asks about); a database
    that cannot be read is the strictest state (None)."""
    from dshc.cli.log_target import _prefix, open_log, spool_folder
    from dshc.cli.session_log import session_of_log

    log = open_log(dsn, session="w1")
    log.append("request/header", reason="initial", context={}, workspace="/w")
    log.append("tool/call", callId="1", name="read", arguments={"file_path": ".env"}, parent=None)
    log.append("tool/decision", callId="1", name="read", decision="allow")
    log.close()
    spooled = EventLog(os.path.join(spool_folder(dsn), f"{_prefix(dsn)}unsent.jsonl"), session="w1")
    spooled._seq = 10  # after what the database holds, as a writer whose ship failed continues
    spooled.append("tool/call", callId="2", name="read", arguments={"file_path": "/w/b.key"}, parent=None)
    spooled.append("tool/decision", callId="2", name="read", decision="allow")
    spooled.close()
    session = session_of_log(dsn, "w1")
    assert {".env", "/w/.env", "/w/b.key"} <= set(dict(session.read))
    assert session_of_log(dsn.rsplit("@", 1)[0] + "@127.0.0.1:1/postgres", "w1") is None
