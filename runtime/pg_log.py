"""The event log in PostgreSQL: records in (through a local JSONL spool), rows out, and rows back as a LogRead.

Every record lands in the spool first (the JSONL EventLog, fsynced), then the spool is shipped
to the database in one batched transaction, idempotent on (session, seq), and cut down to its
last record so `seq` keeps counting. While the database is unreachable the spool just grows;
the next ship sends it all, in order. psycopg is imported only here, only when a DSN is used.
"""

from __future__ import annotations

import fcntl
import os
import time

from ..common import json_io  # not the json package: a hook's log path imports this module
from .events import EventLog, LogRead, read_log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from psycopg import Connection

SCHEMES = ("postgresql://", "postgres://")
RETRY_S = 0.5  # after a failed ship, appends do not try again sooner than this

# Each migration runs once, in order, inside the transaction that records its version.
MIGRATIONS = (
    (
        1,
        """
        CREATE TABLE events (
            id BIGSERIAL UNIQUE, session TEXT NOT NULL, seq BIGINT NOT NULL, type TEXT NOT NULL,
            time DOUBLE PRECISION, record JSONB NOT NULL, PRIMARY KEY (session, seq));
        CREATE TABLE sessions (
            session TEXT PRIMARY KEY, first_seq BIGINT NOT NULL, context JSONB, workspace TEXT, fingerprint TEXT);
        CREATE TABLE calls (
            session TEXT NOT NULL, seq BIGINT NOT NULL, call_id TEXT, name TEXT, arguments JSONB, parent TEXT,
            PRIMARY KEY (session, seq));
        CREATE TABLE decisions (
            session TEXT NOT NULL, seq BIGINT NOT NULL, call_id TEXT, name TEXT, decision TEXT, reason TEXT,
            decided_by JSONB, PRIMARY KEY (session, seq));
        CREATE TABLE results (
            session TEXT NOT NULL, seq BIGINT NOT NULL, call_id TEXT, name TEXT, type TEXT, is_error BOOLEAN,
            PRIMARY KEY (session, seq));
        CREATE INDEX decisions_by_decision ON decisions (decision);
    """,
    ),
)


def is_dsn(target: str | None) -> bool:
    return isinstance(target, str) and target.startswith(SCHEMES)


def _connect(dsn: str, timeout: float = 3.0) -> Connection:
    import psycopg

    return psycopg.connect(dsn, connect_timeout=max(1, int(timeout)))


def migrate(conn) -> int:
    """Apply the missing migrations (idempotent; concurrent migrators serialise on an advisory lock)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(2026120101)")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS dshc_schema_version (version INTEGER PRIMARY KEY, "
            "applied DOUBLE PRECISION NOT NULL)"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM dshc_schema_version")}
        for version, sql in MIGRATIONS:
            if version not in done:
                conn.execute(sql)
                conn.execute("INSERT INTO dshc_schema_version VALUES (%s, %s)", (version, time.time()))
    return MIGRATIONS[-1][0]


def insert(conn, records) -> None:
    """One transaction for the batch; a (session, seq) already stored is left as it is."""
    from psycopg.types.json import Jsonb

    events, sessions, calls, decisions, results = [], [], [], [], []
    for r in records:
        key = (r.get("session"), r.get("seq"))
        events.append((*key, r.get("type"), r.get("time"), Jsonb(r)))
        kind = r.get("type")
        if kind == "request/header":
            sessions.append((*key, Jsonb(r.get("context")), r.get("workspace"), r.get("fingerprint")))
        elif kind == "tool/call":
            calls.append((*key, r.get("callId"), r.get("name"), Jsonb(r.get("arguments")), r.get("parent")))
        elif kind == "tool/decision":
            decisions.append(
                (*key, r.get("callId"), r.get("name"), r.get("decision"), r.get("reason"), Jsonb(r.get("decidedBy")))
            )
        elif kind in ("tool/result", "tool/interrupted"):
            results.append((*key, r.get("callId"), r.get("name"), kind, r.get("isError")))
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO events (session, seq, type, time, record) VALUES (%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
            events,
        )
        cur.executemany("INSERT INTO sessions VALUES (%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING", sessions)
        cur.executemany("INSERT INTO calls VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING", calls)
        cur.executemany("INSERT INTO decisions VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING", decisions)
        cur.executemany("INSERT INTO results VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING", results)


class PostgresEventLog(EventLog):
    """An EventLog whose records go to PostgreSQL, through `spool` (a private JSONL file the caller chose)."""

    path: str  # the spool's

    def __init__(self, dsn: str, spool: str, session: str | None = None, batch: int = 64):
        super().__init__(spool, session)
        self.dsn = dsn
        self.batch = batch
        self._conn: Connection | None = None
        self._retry_at = 0.0
        self._pending = 0
        if self._connected():
            assert self._conn is not None  # `_connected` made it
            row = self._conn.execute("SELECT max(seq) FROM events WHERE session = %s", (self.session,)).fetchone()
            self._seq = max(self._seq, row[0] or 0)  # another machine may have written this session
            self.ship()  # whatever an earlier run left in the spool goes first

    def _append(self, type_: str, fields: dict) -> dict:
        record = super()._append(type_, fields)
        self._pending += 1
        if self._pending >= self.batch or type_ == "tool/call":  # a call is in the database before it runs
            self.ship()
        return record

    def ship(self) -> bool:
        """Send the whole spool, then cut it to its last record; False (spool kept) when the database is away."""
        if self._fd is None or not self._connected():
            return False
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            read = read_log(self.path)
            try:
                if read.records:
                    insert(self._conn, read.records)
            except Exception:  # noqa: BLE001 - any database failure keeps the spool for the next ship
                self._drop()
                return False
            size = os.fstat(self._fd).st_size
            if read.records and size > 0:
                last = read.lines[-1]
                keep = read_tail_line(self.path, last)
                os.ftruncate(self._fd, 0)
                os.write(self._fd, keep)  # keeps `seq` continuous for the next writer of this spool
                os.fsync(self._fd)
            self._end = os.fstat(self._fd).st_size
            self._pending = 0
            return True
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        self._retry_at = 0.0  # the last chance to ship from this process: try whatever the last failure was
        self.ship()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        super().close()

    def _connected(self) -> bool:
        if self._conn is not None and not self._conn.closed:
            return True
        if time.monotonic() < self._retry_at:
            return False
        try:
            self._conn = _connect(self.dsn)
            self._conn.autocommit = True
            migrate(self._conn)
            return True
        except Exception:  # noqa: BLE001 - unreachable or refused: records stay in the spool
            self._drop()
            return False

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001
                pass
        self._conn = None
        self._retry_at = time.monotonic() + RETRY_S


def read_tail_line(path: str, number: int) -> bytes:
    with open(path, "rb") as handle:
        for index, raw in enumerate(handle, start=1):
            if index == number:
                return raw
    return b""


def read_postgres(dsn: str, calls_digest: str | None = None) -> LogRead:
    """Every stored record, in the order they were stored (each session's in `seq` order); with
    `calls_digest`, only the sessions of runs of that calls file (what resuming one needs: a fleet's
    database need not cross the wire for it)."""
    with _connect(dsn) as conn:
        conn.autocommit = True
        migrate(conn)
        if calls_digest is None:
            rows = conn.execute("SELECT record FROM events ORDER BY id").fetchall()
        else:
            rows = conn.execute(
                "SELECT record FROM events WHERE session IN (SELECT session FROM events WHERE "
                "type = 'request/header' AND record->>'calls' = %s) ORDER BY id",
                (calls_digest,),
            ).fetchall()
    records = tuple(row[0] if isinstance(row[0], dict) else json_io.loads(row[0]) for row in rows)
    return LogRead(records, tuple(range(1, len(records) + 1)), (), False)


def read_postgres_rows(dsn: str) -> list[tuple[int, str, int, str, dict]]:
    """Every row of `events` as (id, session, seq, type, record), in the order stored: what `dshc audit verify`
    checks the hash chain and the columns against."""
    with _connect(dsn) as conn:
        conn.autocommit = True
        migrate(conn)
        rows = conn.execute("SELECT id, session, seq, type, record FROM events ORDER BY id").fetchall()
    return [
        (i, session, seq, kind, record if isinstance(record, dict) else json_io.loads(record))
        for i, session, seq, kind, record in rows
    ]
