"""The durable, append-only event log: one JSON object per line, fsynced per record.

`tool/call` is on disk before anything runs and `tool/result` after. A record is written
with one `write` on an O_APPEND descriptor and fsynced, so a process killed at any point
leaves whole records only (at worst a call without its result). Readers skip nothing
silently: a torn last line is reported as such.
"""
from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator


class EventLog:
    def __init__(self, path: str | None):
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if path else None
        self._lock = threading.Lock()
        self._seq = _last_seq(path) if path else 0
        self.records: list[dict] = []  # kept in memory too, for callers without a file

    def append(self, type_: str, **fields: Any) -> dict:
        with self._lock:
            self._seq += 1
            record = {"seq": self._seq, "type": type_, "time": round(time.time(), 6), **fields}
            line = (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode("utf-8")
            if self._fd is not None:
                os.write(self._fd, line)
                os.fsync(self._fd)
            self.records.append(record)
            return record

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass(frozen=True)
class LogRead:
    records: tuple[dict, ...]
    torn_tail: bool  # the last line was incomplete (never expected: every record is one write)


def read_log(path: str) -> LogRead:
    records: list[dict] = []
    torn = False
    with open(path, "rb") as handle:
        data = handle.read()
    lines = data.split(b"\n")
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            records.append(json.loads(raw))
        except ValueError:
            if index == len(lines) - 1:
                torn = True
            else:
                raise ValueError(f"{path}: record {index + 1} is not JSON")
    return LogRead(tuple(records), torn)


def _last_seq(path: str) -> int:
    if not os.path.exists(path):
        return 0
    try:
        found = read_log(path).records
    except ValueError:
        return 0
    return max((r.get("seq", 0) for r in found), default=0)


def calls_without_results(records) -> Iterator[dict]:
    finished = {r.get("callId") for r in records if r.get("type") == "tool/result"}
    for record in records:
        if record.get("type") == "tool/call" and record.get("callId") not in finished:
            yield record
