"""Durable event logs → the calls real sessions made, each with whether it ran, and the records skipped.

`read_sessions` is the one place a log source is opened: a JSONL path today; a reader for other
sources (a database DSN) plugs in there and returns the same `Evidence`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..runtime.log_records import replay_input
from .log_target import read_log_target


@dataclass(frozen=True)
class ObservedCall:
    line: int
    call_id: str
    name: str
    arguments: Any
    context: dict  # the context the call was decided in (the header's, plan mode as it stood)
    workspace: str | None
    recorded: str  # the policy's word: allow | ask | deny
    ran: bool  # allowed, or asked and approved; a declined ask or a deny did not run


@dataclass(frozen=True)
class Evidence:
    calls: tuple[ObservedCall, ...]
    skipped: tuple[tuple[int, str], ...]  # (line, why) records that could not be used
    torn_tail: bool


def read_sessions(source: str) -> Evidence:
    """Every logged call of `source` with its outcome; malformed records are skipped and named."""
    log = read_log_target(source)  # a JSONL path or a postgresql:// DSN; DSH107 when unreadable
    given = replay_input(log)
    outcomes = {}  # (session, call id) -> the decision its tool/result records (None: it ran, hook style)
    for record in log.records:
        if record.get("type") == "tool/result" and isinstance(record.get("callId"), str):
            decision = record.get("decision")
            outcomes.setdefault((record.get("session"), record["callId"]), decision if isinstance(decision, str)
                                else None)
    sessions = {line: record.get("session") for line, record in zip(log.lines, log.records)}
    calls = []
    for logged in given.decisions:
        key = (sessions.get(logged.line), logged.call_id)
        if key in outcomes:
            ran = outcomes[key] in (None, "allow")
        else:  # no result (interrupted): it ran only if the policy let it through unasked
            ran = logged.recorded == "allow"
        calls.append(ObservedCall(logged.line, logged.call_id, logged.name, logged.arguments, logged.context,
                                  logged.header.workspace, logged.recorded, ran))
    return Evidence(tuple(calls), given.problems, log.torn_tail)
