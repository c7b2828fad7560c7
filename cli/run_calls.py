"""`dshc run`'s loop: a calls file, a Program and a Request → results in model order, resumable and stoppable.

At most once per call id: a restart over the same calls file and log re-emits recorded
results, reports calls recorded without a result as `interrupted` (re-run only on request),
and runs the rest. A stop (SIGINT/SIGTERM) starts nothing new, records the calls in flight
as interrupted, kills their process trees and returns.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Callable

from ..runtime import orphans
from ..runtime.calls_file import CallsFile
from ..runtime.events import LogSealed, read_log
from ..runtime.log_format import BadRecord, blob_dir, internalise, sweep_partials
from ..runtime.log_records import PriorRun, prior_run
from ..runtime.pg_log import is_dsn
from ..runtime.scheduler import run_batch
from ..runtime.types import ToolResult
from .host import session

INTERRUPTED_REASON = "the run stopped before this call's result was recorded"
STOP_GRACE_S = 3.0


@dataclass
class RunOptions:
    workspace: str
    log_path: str | None
    approver: Callable | None
    timeout_s: float
    interactive: bool = False
    rerun_interrupted: bool = False
    output_schema: dict | None = None  # what a child's structured_output must match; None: any object


@dataclass
class RunStop:
    """Set from a signal handler: which signal asked the run to stop."""

    signum: int | None = None
    event: threading.Event = field(default_factory=threading.Event)

    def request(self, signum: int) -> None:
        self.signum = self.signum or signum
        self.event.set()


@dataclass
class RunReport:
    failed: bool = False
    stopped_by: int | None = None
    interrupted: list[tuple[str, str]] = field(default_factory=list)  # (call id, name) marked by the stop


def interrupted_result(call_id: str, name: str) -> ToolResult:
    message = f"interrupted: {INTERRUPTED_REASON}; it is not run again (at most once per call id)"
    return ToolResult(
        call_id,
        name,
        True,
        f"Error: {message}",
        None,
        {"name": "InterruptedError", "code": "INTERRUPTED", "message": message},
    )


def logged_result(record: dict, blobs: str) -> ToolResult:
    loaded = internalise(record, blobs)  # only the results shown again are loaded whole
    record = loaded if isinstance(loaded, dict) else {}  # a record that is one blob reference holds no result
    error = record.get("error") if isinstance(record.get("error"), dict) else None
    decided = tuple(tuple(d) for d in record.get("decidedBy") or () if isinstance(d, list) and len(d) == 2)
    return ToolResult(
        record["callId"],
        str(record.get("name", "")),
        bool(record.get("isError")),
        str(record.get("content", "")),
        record.get("value"),
        error,
        decided,
    )


def _not_run(call, prior: PriorRun, log_path: str | None) -> ToolResult:
    """The answer for a call this run did not execute: its recorded result, or `interrupted`."""
    if call.id not in prior.results or log_path is None:  # results are read from a log: there is one then
        return interrupted_result(call.id, call.name)
    try:
        record = prior.results[call.id]
        if is_dsn(log_path):
            from .log_target import spooled_blobs

            return logged_result(record, spooled_blobs(log_path, record.get("session")))
        return logged_result(record, blob_dir(log_path))
    except BadRecord as exc:  # the result was recorded, so the call ran: report, never run again
        message = f"the recorded result cannot be read: {exc}"
        return ToolResult(
            call.id,
            call.name,
            True,
            f"Error: {message}",
            None,
            {"name": "LogError", "code": "RESULT_UNREADABLE", "message": message},
        )


def _prior(options: RunOptions, calls: CallsFile) -> PriorRun:
    path = options.log_path
    if path and is_dsn(path):  # at most once per call id holds for a database log too
        from .log_target import read_dsn_for_resume

        return prior_run(read_dsn_for_resume(path, calls.digest), calls.digest)
    if not path or not os.path.exists(path):
        return PriorRun()
    return prior_run(read_log(path, resolve_blobs=False), calls.digest)


def run_calls(
    program,
    request,
    calls: CallsFile,
    options: RunOptions,
    emit: Callable[[list[ToolResult], tuple], None],
    stop: RunStop,
) -> RunReport:
    """Run (or resume) every batch; `emit(results, contexts)` receives each batch in model order."""
    prior = _prior(options, calls)
    if options.log_path:
        orphans.sweep_dead_runs(options.log_path)
        if not is_dsn(options.log_path):
            sweep_partials(blob_dir(options.log_path))  # what writers killed mid-blob left
    with orphans.marked_children(options.log_path):
        return _run_marked(program, request, calls, options, emit, stop, prior)


def _run_marked(
    program, request, calls: CallsFile, options: RunOptions, emit, stop: RunStop, prior: PriorRun
) -> RunReport:
    ctx, state = session(
        program,
        request,
        options.workspace,
        options.log_path,
        options.approver,
        options.timeout_s,
        interactive=options.interactive,
        calls_digest=calls.digest,
        output_schema=options.output_schema,
    )
    for call_id, name in prior.unfinished.items():  # the earlier run died with these in flight
        ctx.log.append("tool/interrupted", callId=call_id, name=name, reason=INTERRUPTED_REASON)
    interrupted = {**prior.marked, **prior.unfinished}
    report = RunReport()

    def loop() -> None:
        for batch in calls.batches:
            if stop.event.is_set():
                return
            fresh = [
                c for c in batch if c.id not in prior.results and (c.id not in interrupted or options.rerun_interrupted)
            ]
            outcomes, contexts = run_batch(fresh, ctx) if fresh else ([], ())
            ran = {o.result.call_id: o.result for o in outcomes}
            results = [ran.get(c.id) or _not_run(c, prior, options.log_path) for c in batch]
            if stop.event.is_set():
                return  # results of a stopped batch are the interrupted markers, not these
            report.failed |= any(r.is_error for r in results)
            emit(results, contexts)

    worker_error: list[BaseException] = []

    def guarded() -> None:
        try:
            loop()
        except LogSealed:
            pass  # the stop sealed the log while a call was finishing
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
            worker_error.append(exc)

    worker = threading.Thread(target=guarded, name="dshc-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive() and not stop.event.is_set():
            worker.join(0.1)  # short waits, so the main thread keeps handling signals
        if stop.event.is_set():
            report.stopped_by = stop.signum
            report.interrupted = ctx.log.seal(f"interrupted by signal {stop.signum}")
            ctx.signal.set()
            worker.join(STOP_GRACE_S)
            orphans.kill_own_children()
            report.failed = True
    finally:
        state.close()
        ctx.log.close()
    if worker_error and report.stopped_by is None:
        raise worker_error[0]
    return report
