"""Nested calls of one run_code program → the full ten-stage pipeline, scheduled like a batch.

In: (binding id, name, arguments) in the program's submission order; out: each call's
ToolResult handed to `reply`, plus `tool/code-dispatch-start` / `tool/code-dispatch` events
linking it to its parent. Calls start in submission order; parallel-safe ones overlap up to
the knob; an exclusive one waits for the pool to drain and holds it until it commits.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import replace
from typing import Callable

from ..events import LogSealed
from ..pipeline import Pipeline
from ..scheduler import _aborted as aborted_before_dispatch
from ..signals import Signal
from ..types import ToolCall, ToolResult


def nested_id(parent: str, number: int) -> str:
    return f"{parent}:code:{number}"


class NestedDispatch:
    def __init__(
        self, ctx, pipeline: Pipeline, parent: str, max_parallel: int, reply: Callable[[int, ToolResult], None]
    ) -> None:
        self.abort = Signal()
        # the nested calls see the caller's abort and this program's own (timeout, end, abort)
        self.ctx = replace(ctx, signal=Signal(ctx.signal, self.abort))
        self.pipeline = pipeline
        self.parent = parent
        self.max_parallel = max(1, max_parallel)
        self.reply = reply
        self._parallel = {e.name for e in (ctx.view.sdk or ()) if e.execution == "parallel"}
        self._cond = threading.Condition()
        self._queue: deque[tuple[int, ToolCall]] = deque()
        self._running: dict[str, tuple[int, ToolCall]] = {}
        self._exclusive = False
        self._closed = False
        self._aborted: set[str] = set()  # ids whose outcome is `aborted`, whatever their result says
        self._recorded: set[str] = set()  # ids with a `tool/code-dispatch` record
        self._contexts: dict[str, tuple[str, ...]] = {}  # a nested call's additionalContexts, by call id
        self.count = 0
        threading.Thread(target=self._schedule, name=f"dshc-code-{parent}", daemon=True).start()

    def submit(self, number: int, name: str, arguments) -> None:
        with self._cond:
            if self._closed:
                return
            self.count += 1
            try:
                call = ToolCall.from_model(nested_id(self.parent, self.count), name, arguments, parent=self.parent)
            except TypeError:  # not JSON after all: the pipeline answers INVALID_ARGS for the raw text
                call = ToolCall(nested_id(self.parent, self.count), name, str(arguments), self.parent)
            self._queue.append((number, call))
            self._cond.notify_all()

    def deferred_contexts(self) -> tuple[str, ...]:
        """The nested calls' additionalContexts, in submission order: they go on the outer result."""
        with self._cond:
            ordered = sorted(self._contexts.items(), key=lambda item: int(item[0].rsplit(":", 1)[1]))
        return tuple(text for _, contexts in ordered for text in contexts)

    def in_flight(self) -> int:
        with self._cond:
            return len(self._running) + len(self._queue)

    def _may_start(self, call: ToolCall) -> bool:
        if self._exclusive or self.ctx.signal.is_set():
            return False  # once aborted nothing starts; close() records what was still queued
        if call.name in self._parallel:
            return len(self._running) < self.max_parallel
        return not self._running

    def _schedule(self) -> None:
        while True:
            with self._cond:
                while not self._closed and not (self._queue and self._may_start(self._queue[0][1])):
                    self._cond.wait()
                if self._closed:
                    return
                number, call = self._queue.popleft()
                parallel = call.name in self._parallel
                self._running[call.id] = (number, call)
                self._exclusive = not parallel
            self._log(
                "tool/code-dispatch-start",
                callId=call.id,
                parent=self.parent,
                name=call.name,
                binding=number,
                execution="parallel" if parallel else "exclusive",
            )
            try:
                state = self.pipeline.before_dispatch(call, self.ctx)  # in submission order
            except LogSealed:
                self._done(number, call, None)
                continue
            threading.Thread(target=self._run, args=(number, call, state), name=f"dshc-{call.id}", daemon=True).start()

    def _run(self, number: int, call: ToolCall, state) -> None:
        outcome = None
        try:
            outcome = self.pipeline.after_dispatch(self.pipeline.dispatch(state, self.ctx), self.ctx)
        except LogSealed:
            pass  # the run stopped; its seal records what was open
        finally:
            self._done(number, call, outcome)

    def _done(self, number: int, call: ToolCall, outcome) -> None:
        with self._cond:
            self._running.pop(call.id, None)
            self._exclusive = False
            if outcome is not None and outcome.contexts:
                self._contexts[call.id] = outcome.contexts
            self._cond.notify_all()
        result = outcome.result if outcome is not None else None
        self._record(call, number, _outcome(outcome), (result.error or {}).get("code") if result else None)
        if result is not None:
            self.reply(number, result)

    def _record(self, call: ToolCall, number: int, outcome: str, code: str | None) -> None:
        with self._cond:
            if call.id in self._recorded:
                return
            self._recorded.add(call.id)
            if call.id in self._aborted:
                outcome = "aborted"
        self._log(
            "tool/code-dispatch",
            callId=call.id,
            parent=self.parent,
            name=call.name,
            binding=number,
            outcome=outcome,
            code=code,
        )

    def close(self, grace_s: float) -> None:
        """Start nothing more; calls not started and calls in flight are recorded as aborted.

        Calls in flight get the abort signal and `grace_s` to answer; one still running after
        that keeps running on its own thread, already recorded here as aborted."""
        with self._cond:
            self._closed = True
            queued = list(self._queue)
            self._queue.clear()
            self._aborted.update(call.id for _, call in self._running.values())
            self._aborted.update(call.id for _, call in queued)
            self._cond.notify_all()
        self.abort.set()
        for number, call in queued:
            try:
                self._log(
                    "tool/code-dispatch-start",
                    callId=call.id,
                    parent=self.parent,
                    name=call.name,
                    binding=number,
                    execution="never started",
                )
                outcome = aborted_before_dispatch(self.pipeline, call, self.ctx)
                self._record(call, number, "aborted", (outcome.result.error or {}).get("code"))
            except LogSealed:
                pass
        deadline = time.monotonic() + grace_s
        with self._cond:
            while self._running and time.monotonic() < deadline:
                self._cond.wait(max(0.0, deadline - time.monotonic()))
            left = list(self._running.values())
        for number, call in left:
            self._record(call, number, "aborted", None)

    def _log(self, type_: str, **fields) -> None:
        try:
            self.ctx.log.append(type_, **fields)
        except LogSealed:
            pass  # the run has stopped: nothing more is recorded for it


ABORT_CODES = ("ABORTED", "ABORTED_BEFORE_DISPATCH")


def _outcome(outcome) -> str:
    if outcome is None or (outcome.result.error or {}).get("code") in ABORT_CODES:
        return "aborted"
    if outcome.state.decision == "deny":
        return "denied"
    return "error" if outcome.result.is_error else "ok"
