"""`run_code`, bound to one session's pipeline context. In: `{code, description}` + the
ToolContext; out: `{value?, logs[]}`, or CODE_RUN_FAILED whose message starts with the error
class. The program's `tools.*` are the view's SDK; each call re-enters the full pipeline
with this call as its parent."""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..code.dispatch import NestedDispatch
from ..code.executor import Limits, nested_payload, run_program
from ..code.node_runtime import CodeRuntimeMissing
from ..code.worker import Worker
from ..pipeline import Pipeline
from ..sandbox import SandboxFailure, SandboxUnavailable, confinement_in
from .base import ToolContext, ToolError, arg_str, fail
from .sandbox import found_hidden

DEFINITION = "tools/run_code"
DEFAULT_MAX_PARALLEL = 10  # the catalog's `maxParallelSubCalls` default
DEFAULT_HEAP_MB = 256


# The program's own deadline (counted from the body's start) ends this much before the call's,
# so a timeout is reported by the program, with its logs, before the call's deadline wrapper
# gives up on the body.
def program_budget(call_timeout_s: float) -> float:
    return max(0.1, call_timeout_s - max(0.5, call_timeout_s / 10))


class CodeRuntime:
    """One session's code runtime: the run_code body, the wrapper that tells it which call it
    serves, and the set of run_code calls live now (only those may parent a nested call)."""

    def __init__(
        self,
        ctx,
        pipeline: Pipeline | None = None,
        max_parallel: int = DEFAULT_MAX_PARALLEL,
        heap_mb: int = DEFAULT_HEAP_MB,
    ) -> None:
        self.ctx = ctx
        self.pipeline = pipeline or Pipeline()
        self.max_parallel = max_parallel
        self.heap_mb = heap_mb
        self._current: contextvars.ContextVar = contextvars.ContextVar("dshc_run_code_call", default=None)
        self._live: set[str] = set()
        self._deferred: dict[str, tuple[str, ...]] = {}  # run_code call id -> its nested calls' contexts
        self._lock = threading.Lock()

    def install(self) -> "CodeRuntime":
        """Bind into the context: the body, the innermost execute wrapper, the parent check."""
        self.ctx.implementations = {**self.ctx.implementations, DEFINITION: self.body}
        self.ctx.execute_wrappers = (*self.ctx.execute_wrappers, self.wrapper)
        self.ctx.live_parent = self.is_live
        return self

    def is_live(self, parent: str) -> bool:
        with self._lock:
            return parent in self._live

    def wrapper(self, call, signal, proceed):
        # innermost, so it runs on the body's own thread and the body can read the call here;
        # on the way out the nested calls' additionalContexts are deferred onto this result
        token = self._current.set(call)
        try:
            result = proceed(signal)
        finally:
            self._current.reset(token)
        with self._lock:
            deferred = self._deferred.pop(call.id, ())
        return replace(result, additional_contexts=result.additional_contexts + deferred) if deferred else result

    def body(self, args: Mapping[str, Any], tctx: ToolContext) -> dict:
        call = self._current.get()
        if call is None:
            raise ToolError("run_code was dispatched without its call", "CODE_RUN_FAILED", "CodeRunError")
        code = arg_str(args, "code")
        names = [e.name for e in (self.ctx.view.sdk or ())]
        limits = Limits(
            deadline=time.monotonic() + program_budget(tctx.timeout_s or 120.0), max_log_chars=tctx.max_output_chars
        )
        worker = _start(tctx, self.heap_mb)

        def reply(number: int, result) -> None:
            ok, payload = nested_payload(result)
            worker.send({"type": "result", "id": number, "ok": ok, "payload": payload})

        try:
            self.ctx.log.append("tool/code-worker", callId=call.id, pid=worker.pid, sandbox=worker.launch.mechanism)
            dispatch = NestedDispatch(self.ctx, self.pipeline, call.id, self.max_parallel, reply)
        except BaseException:
            worker.kill()
            raise
        with self._lock:
            self._live.add(call.id)
        try:
            outcome = run_program(code, names, worker, dispatch, tctx.abort, limits)
        finally:
            with self._lock:
                self._live.discard(call.id)
                self._deferred[call.id] = dispatch.deferred_contexts()
        if outcome.error is not None:
            error = outcome.error
            logs = "".join(f"\n{line}" for line in outcome.logs)
            raise ToolError(
                f"{error['class']}: {error['message']}" + (f"\nlogs:{logs}" if logs else ""),
                "CODE_RUN_FAILED",
                "CodeRunError",
            )
        return outcome.to_json()


def _start(tctx: ToolContext, heap_mb: int) -> Worker:
    """The worker, confined read-only with no network whatever the policy: it needs neither. What the policy's
    read denies hide from processes is hidden from it too: a program reaches files through tools, but Node's
    `vm` is no security boundary."""
    root = os.path.realpath(tctx.workspace)
    tmpdir = tctx.state.private_tmp()
    conf = confinement_in(
        "read-only",
        root,
        tmpdir,
        hidden=(*tctx.hidden_roots, *found_hidden(tctx)),
        fallback_unsandboxed=tctx.sandbox_fallback,
        backend=tctx.sandbox_backend,
    )
    try:
        return Worker(conf, heap_mb, root, tmpdir)
    except CodeRuntimeMissing as exc:
        raise fail("code-unavailable", tool="run_code", provider=str(exc)) from None
    except SandboxUnavailable as exc:
        raise fail("sandbox-unavailable", mode=exc.mode, missing=exc.missing) from None
    except (SandboxFailure, OSError) as exc:
        raise ToolError(f"worker-exit: the worker could not start: {exc}", "CODE_RUN_FAILED", "CodeRunError") from None
