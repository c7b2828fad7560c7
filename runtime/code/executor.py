"""One run_code program from start to end. In: the program text, the SDK names, a started
worker, the nested dispatcher, the abort signal and the limits; out: a ProgramOutcome, i.e.
`{value?, logs[], error?}` with error class exception | timeout | abort | worker-exit |
invalid-output | output-limit. The worker is dead when this returns, whatever happened."""

from __future__ import annotations

import json
import queue
import time
from dataclasses import dataclass, field
from typing import Any

from ..signals import Signal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from threading import Event
from ..types import ToolResult, thaw
from .dispatch import NestedDispatch
from .worker import Worker

ERROR_CLASSES = ("exception", "timeout", "abort", "worker-exit", "invalid-output", "output-limit")
_POLL_S = 0.05
_NO_VALUE = object()


@dataclass(frozen=True)
class Limits:
    deadline: float  # time.monotonic() at which the program is stopped as `timeout`
    max_value_chars: int = 65536
    max_log_chars: int = 16000
    compile_timeout_ms: int = 5000
    grace_s: float = 0.3  # what nested calls in flight get to answer an abort; inside the timeout margin


@dataclass
class ProgramOutcome:
    value: Any = _NO_VALUE
    logs: list[str] = field(default_factory=list)
    error: dict | None = None  # {"class", "message"}

    @property
    def has_value(self) -> bool:
        return self.value is not _NO_VALUE

    def to_json(self) -> dict:
        out: dict = {"logs": list(self.logs)}
        if self.has_value:
            out["value"] = self.value
        if self.error is not None:
            out["error"] = dict(self.error)
        return out


class _Logs:
    """Log lines up to a total size; past it one marker says how much was dropped."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars, self.used, self.dropped = max_chars, 0, 0
        self.lines: list[str] = []

    def add(self, text: str) -> None:
        if self.used + len(text) > self.max_chars:
            self.dropped += 1
            return
        self.used += len(text)
        self.lines.append(text)

    def result(self) -> list[str]:
        return self.lines + (
            [f"[{self.dropped} log line(s) dropped: the logs passed {self.max_chars} characters]"]
            if self.dropped
            else []
        )


def nested_payload(result: ToolResult) -> tuple[bool, Any]:
    """What a binding resolves to (the tool's JSON value) or rejects with (its error)."""
    if not result.is_error:
        return True, thaw(result.value) if result.value is not None else result.content
    error = result.error or {}
    return False, {"message": error.get("message") or result.content, "code": error.get("code"), "tool": result.name}


def run_program(
    code: str, names: list[str], worker: Worker, dispatch: NestedDispatch, abort: Signal | Event, limits: Limits
) -> ProgramOutcome:
    logs = _Logs(limits.max_log_chars)
    try:
        outcome = _drive(code, names, worker, dispatch, abort, limits, logs)
    finally:
        worker.kill()
        dispatch.close(limits.grace_s)
    outcome.logs = logs.result()
    return outcome


def _failed(kind: str, message: str) -> ProgramOutcome:
    return ProgramOutcome(error={"class": kind, "message": message})


def _drive(
    code, names, worker: Worker, dispatch: NestedDispatch, abort: Signal | Event, limits: Limits, logs: _Logs
) -> ProgramOutcome:
    if not worker.send({"type": "start", "code": code, "tools": names, "compileTimeoutMs": limits.compile_timeout_ms}):
        return _failed("worker-exit", worker.exit_text())
    started = time.monotonic()
    while True:
        try:
            kind, frame = worker.events.get(timeout=_POLL_S)
        except queue.Empty:
            kind, frame = None, None
        # checked after the wait too: an abort also fails the nested calls, and the program's
        # answer to those failures must not pass for its own ending
        if abort.is_set():
            return _failed("abort", f"the program was aborted; {dispatch.in_flight()} nested call(s) were in flight")
        if time.monotonic() >= limits.deadline:
            return _failed("timeout", f"the program ran past its time ({time.monotonic() - started:.1f}s)")
        if kind is None:
            continue
        if kind == "eof":
            return _failed("worker-exit", worker.exit_text())
        if kind == "bad":
            return _failed(frame.kind, str(frame))
        verdict = _handle(frame, dispatch, limits, logs)
        if verdict is not None:
            return verdict


def _handle(frame: dict, dispatch: NestedDispatch, limits: Limits, logs: _Logs) -> ProgramOutcome | None:
    kind = frame["type"]
    if kind == "log":
        logs.add(str(frame.get("text", "")))
        return None
    if kind == "call":
        number, name = frame.get("id"), frame.get("name")
        if not isinstance(number, int) or not isinstance(name, str):
            return _failed("invalid-output", "the worker sent a call without an id and a name")
        dispatch.submit(number, name, frame.get("args"))
        return None
    if kind == "done":
        if not frame.get("ok"):
            error = given if isinstance(given := frame.get("error"), dict) else {}
            kind_ = error["class"] if error.get("class") in ERROR_CLASSES else "invalid-output"
            return _failed(kind_, str(error.get("message", "the program failed")))
        if "value" not in frame:
            return ProgramOutcome()
        size = len(json.dumps(frame["value"], ensure_ascii=False))
        if size > limits.max_value_chars:
            return _failed(
                "output-limit",
                f"the returned value is {size} characters of JSON; the limit is {limits.max_value_chars}",
            )
        return ProgramOutcome(value=frame["value"])
    return _failed("invalid-output", f"the worker sent an unknown frame type `{kind}`")
