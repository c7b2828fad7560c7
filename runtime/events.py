"""The durable, append-only event log: records in, framed fsynced lines out (and records back).

`tool/call` is on disk before anything runs, `tool/result` (or `tool/interrupted`) after.
Every append holds an exclusive `flock`, so concurrent writers never interleave bytes and
`seq` stays one increasing sequence across writers and restarts; each record also names its
writer's `session`. A torn tail left by a killed writer is moved to `<log>.torn` (made, empty, with the log)
before the next append, so it is never buried under whole records. The log, the marker and the blobs are
opened relative to the log's folder and never through a link (`state_files`). Each record links to the
one before it in the file by its hash (`log_chain`): the writer keeps the last hash, so an append hashes one
record and reads the file only when another writer appended since.
"""

from __future__ import annotations

import fcntl
import os
import time
from _thread import allocate_lock  # not `threading`, nor `collections`: a hook writes to this log

from . import log_chain, log_format, state_files
from .log_format import BadRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

_TAIL_CHUNK = 64 * 1024


class LogSealed(RuntimeError):
    """The run has stopped: nothing more may be recorded for it (its open calls are interrupted)."""


class EventLog:
    def __init__(self, path: str | None, session: str | None = None):
        self.path = path
        self.session = session or os.urandom(6).hex()  # os.urandom, not uuid: a hook call pays for each import
        self.blobs = log_format.blob_dir(path) if path else None
        self._lock = allocate_lock()
        self._seq = 0
        self._end = -1  # file size after our last append; another size means another writer wrote
        self._chain: tuple[str, str] | None = None  # (log id, hash) of the file's last record, if it is chained
        self._sealed = False
        self.open_calls: dict[str, str] = {}  # callId -> name: recorded by this session, no outcome yet
        self.open_nested: dict[str, tuple[str, str]] = {}  # the same for run_code's nested calls: (name, parent)
        self.records: list[dict] = []  # kept in memory too, for callers without a file
        self._folder = self._fd = None
        if path:
            self._folder = state_files.open_folder(os.path.dirname(os.path.abspath(path)))
            try:
                self._fd = state_files.open_file(
                    self._folder, os.path.basename(path), os.O_RDWR | os.O_APPEND | os.O_CREAT, path, 0o644
                )
                # the marker exists from the start, empty: the sandbox can then keep it read-only (a file
                # missing when a command starts cannot be), and one planted before it is refused here
                os.close(self._torn_marker(os.O_RDONLY | os.O_CREAT))
                with self._exclusive():
                    self._sync_tail()
            except BaseException:
                self.close()
                raise

    def append(self, type_: str, **fields: object) -> dict:
        with self._lock:
            if self._sealed:
                raise LogSealed(f"the run has stopped; `{type_}` was not recorded")
            return self._append(type_, fields)

    def _append(self, type_: str, fields: dict) -> dict:
        stored = {k: log_format.externalise(v, self.blobs) for k, v in fields.items()}  # blobs land first
        if self._fd is None:
            self._seq += 1
            return self._remember({"seq": self._seq, "session": self.session, "type": type_, **fields})
        with self._exclusive():
            if os.fstat(self._fd).st_size != self._end:
                self._sync_tail()
            self._seq += 1
            head = {"seq": self._seq, "session": self.session, "type": type_, "time": round(time.time(), 6)}
            link = (
                {log_chain.LOG: self._chain[0], log_chain.PREV: self._chain[1]}
                if self._chain
                else log_chain.first_link(fields.get("fingerprint"))
            )
            line = log_format.encode({**head, **stored, **link})
            os.write(self._fd, line)
            os.fsync(self._fd)
            self._end = os.fstat(self._fd).st_size
            self._chain = (link[log_chain.LOG], log_chain.record_hash(log_format.decode(line[:-1])))
        return self._remember({**head, **fields})

    def _remember(self, record: dict) -> dict:
        # as its writer gave them: a call's id, name and parent are strings
        call_id: Any = record.get("callId")
        name: Any = record.get("name")
        if record["type"] == "tool/call" and record.get("parent") is None:
            self.open_calls[call_id] = name
        elif record["type"] == "tool/call":
            parent: Any = record.get("parent")
            self.open_nested[call_id] = (name, parent)
        elif record["type"] in ("tool/result", "tool/interrupted"):
            self.open_calls.pop(call_id, None)
            self.open_nested.pop(call_id, None)
        self.records.append(record)
        return record

    def seal(self, reason: str) -> list[tuple[str, str]]:
        """Record every open call of this session as `tool/interrupted`, then refuse further appends.

        Returns the model's own calls; nested run_code calls are marked too (with their parent)
        but have no model-facing result."""
        with self._lock:
            if self._sealed:
                return []
            for call_id, (name, parent) in list(self.open_nested.items()):
                self._append("tool/interrupted", {"callId": call_id, "name": name, "parent": parent, "reason": reason})
            marked = list(self.open_calls.items())
            for call_id, name in marked:
                self._append("tool/interrupted", {"callId": call_id, "name": name, "reason": reason})
            self._sealed = True
            return marked

    def close(self) -> None:
        with self._lock:
            for fd in (self._fd, self._folder):
                if fd is not None:
                    os.close(fd)
            self._fd = self._folder = None

    def _exclusive(self):
        return _Flock(self._fd)

    def _torn_marker(self, flags: int) -> int:
        assert self.path is not None and self._folder is not None  # a log with a file has the marker
        marker = self.path + ".torn"
        return state_files.open_file(self._folder, os.path.basename(marker), flags, marker)

    def _sync_tail(self) -> None:
        """Under the lock: keep a torn tail aside, truncate it, and continue after the last `seq`."""
        fd = self._fd
        assert fd is not None  # a log with a file
        size = os.fstat(fd).st_size
        start, last = _last_line(fd, size)
        if last and not last.endswith(b"\n"):
            side = self._torn_marker(os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                os.write(side, last + b"\n")
                os.fsync(side)
            finally:
                os.close(side)
            os.ftruncate(fd, start)
            os.fsync(fd)
            size = start
            start, last = _last_line(fd, size)
        self._chain = None  # an empty file, or an unchained or damaged last record: a new chain starts
        try:
            record = log_format.decode(last.rstrip(b"\n")) if last.strip() else {}
            seq = record.get("seq", 0)
            if isinstance(record.get(log_chain.LOG), str):
                self._chain = (record[log_chain.LOG], log_chain.record_hash(record))
        except BadRecord:
            seq = _highest_seq(fd, size)  # a damaged last line: the slow path over the whole file
        self._seq = max(self._seq, seq if isinstance(seq, int) else 0)
        self._end = size


class _Flock:
    def __init__(self, fd: int):
        self.fd = fd

    def __enter__(self):
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)


def _last_line(fd: int, size: int) -> tuple[int, bytes]:
    """(offset, bytes) of the file's last line, newline included when it has one."""
    if size == 0:
        return 0, b""
    end_probe = os.pread(fd, 1, size - 1)
    search_end = size - 1 if end_probe == b"\n" else size
    position = search_end
    while position > 0:
        step = min(_TAIL_CHUNK, position)
        chunk = os.pread(fd, step, position - step)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            start = position - step + newline + 1
            return start, os.pread(fd, size - start, start)
        position -= step
    return 0, os.pread(fd, size, 0)


def _highest_seq(fd: int, end: int) -> int:
    best = 0
    for raw in os.pread(fd, end, 0).split(b"\n"):
        try:
            seq = log_format.decode(raw).get("seq", 0) if raw.strip() else 0
        except BadRecord:
            continue
        best = max(best, seq if isinstance(seq, int) else 0)
    return best


# records; the line number of each; (line, why) for every line that is not a whole record; whether the last
# line was incomplete (a writer was killed mid-append; the next one repairs it). A tuple, not a dataclass:
# the hook, which writes a log on every call, does not load dataclasses' machinery for it.
class LogRead(tuple):
    """(records, lines, problems, torn_tail): what reading a log found, a tuple with its parts named."""

    __slots__ = ()

    def __new__(cls, records, lines, problems, torn_tail):
        return tuple.__new__(cls, (records, lines, problems, torn_tail))

    records = property(lambda self: self[0])
    lines = property(lambda self: self[1])  # the line number of each record
    problems = property(lambda self: self[2])
    torn_tail = property(lambda self: self[3])


def read_log(path: str, resolve_blobs: bool = True) -> LogRead:
    """Every line of the log: whole records (blobs resolved), and a reason for each one that is not."""
    records, lines, problems = [], [], []
    torn = False
    directory = log_format.blob_dir(path)
    with open(path, "rb") as handle:
        data = handle.read()
    raw_lines = data.split(b"\n")
    for number, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        if number == len(raw_lines):  # no newline after it: the writer died mid-append
            torn = True
            continue
        try:
            record = log_format.decode(raw)
            records.append(log_format.internalise(record, directory) if resolve_blobs else record)
            lines.append(number)
        except BadRecord as exc:
            problems.append((number, str(exc)))
        except RecursionError:  # JSON's own limit let it through; resolving its blobs did not
            problems.append((number, "the record nests too deeply to be read"))
    return LogRead(tuple(records), tuple(lines), tuple(problems), torn)


def calls_without_results(records) -> Iterator[dict]:
    """`tool/call` records with neither a result nor an interrupted marker, per (session, call id)."""
    done = {
        (r.get("session"), r.get("callId")) for r in records if r.get("type") in ("tool/result", "tool/interrupted")
    }
    for record in records:
        if record.get("type") == "tool/call" and (record.get("session"), record.get("callId")) not in done:
            yield record
