"""Stage 5: the `execute` waterfall around dispatch, then the tool body.

Wrappers may only swap the abort signal (the caller's is fused back in). The body validates
the arguments against the view's schema (INVALID_ARGS), runs the implementation and checks
that it returned one JSON object (INVALID_TOOL_OUTPUT).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

from ..arguments import problem as argument_problem
from ..signals import Signal, fuse
from ..types import CallState, ToolResult, thaw
from .common import error_result, note, unknown_tool

STAGE = "execute"


def run(state: CallState, ctx) -> CallState:
    if state.result is not None or state.decision != "allow":
        return state
    if ctx.signal.is_set():
        result = error_result(state, "aborted before dispatch", "ABORTED_BEFORE_DISPATCH", "AbortError")
        return note(replace(state, result=result), STAGE, "aborted before dispatch")

    def dispatch(signal: Signal) -> ToolResult:
        return _body(state, ctx, fuse(ctx.signal, signal))

    chain = dispatch
    for wrapper in reversed(ctx.execute_wrappers):
        chain = _wrap(wrapper, state.call, chain, ctx.signal)
    started = time.perf_counter()
    try:
        result = chain(ctx.signal)
    except Exception as exc:  # noqa: BLE001 - a wrapper throw is a final error
        result = error_result(state, f"execute wrapper failed: {exc}", None, "ExecuteError")
        return note(replace(state, result=result, final=True), STAGE, "wrapper threw")
    ctx.metrics[state.call.id] = time.perf_counter() - started
    if not result.is_error and ctx.signal.is_set():
        result = error_result(state, "aborted", "ABORTED", "AbortError")  # replaces a success only
    return note(
        replace(state, result=result, contexts=state.contexts + result.additional_contexts),
        STAGE,
        "error" if result.is_error else "ok",
    )


def _wrap(wrapper, call, inner, original: Signal):
    def wrapped(signal: Signal) -> ToolResult:
        return wrapper(call, signal, lambda replacement=signal: inner(fuse(original, replacement)))

    return wrapped


def _body(state: CallState, ctx, signal: Signal) -> ToolResult:
    entry = state.entry
    body = ctx.implementations.get(entry.definition) if entry is not None else None
    if body is None:  # a name on no view reaches dispatch (policy saw it) and fails here
        return unknown_tool(state)
    arguments = thaw(state.call.arguments)
    problem = argument_problem(entry.parameters_json, arguments)
    if problem is not None:
        return error_result(
            state, f"invalid arguments for `{state.call.name}`: {problem}", "INVALID_ARGS", "ToolArgsError"
        )
    tool_ctx = ctx.tool_context(signal)
    try:
        value = body(arguments, tool_ctx)
    except Exception as exc:  # noqa: BLE001 - a throwing tool is an error result, never the end of the turn
        return _thrown(state, exc)
    finally:
        _record_denied(state, ctx, tool_ctx)
    if not isinstance(value, dict):
        return error_result(
            state,
            f"`{state.call.name}` returned {type(value).__name__}, not a JSON object",
            "INVALID_TOOL_OUTPUT",
            "ToolOutputError",
        )
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        return error_result(
            state,
            f"`{state.call.name}` returned a value that is not JSON: {exc}",
            "INVALID_TOOL_OUTPUT",
            "ToolOutputError",
        )
    content = ctx.render(entry.definition, arguments, value)
    return ToolResult(state.call.id, state.call.name, False, content, value, None, state.decided_by)


def _record_denied(state: CallState, ctx, tool_ctx) -> None:
    """The connections the call's egress proxy refused, read from the proxy's own channel (never from the
    command's output), as `network/denied` events between the call and its result."""
    for event in getattr(tool_ctx, "network_denied", ()):
        kind = "network/denied-dropped" if "dropped" in event else "network/denied"
        ctx.log.append(kind, callId=state.call.id, name=state.call.name, **event)


def _thrown(state: CallState, exc: Exception) -> ToolResult:
    code = getattr(exc, "code", None)
    name = getattr(exc, "name", None) or type(exc).__name__
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return error_result(
        state, message, code if isinstance(code, str) else None, name if isinstance(name, str) else "Error"
    )


def timeout_wrapper(seconds: float):
    """The shipped timeout policy: past the deadline the signal fires and the result is TOOL_TIMEOUT."""
    from ..watchdog import WATCHDOG

    def wrapper(call, signal: Signal, proceed) -> ToolResult:
        deadline = Signal()
        WATCHDOG.arm(seconds, deadline)
        result = proceed(deadline)
        if deadline.is_set() and not signal.is_set():
            message = f"`{call.name}` timed out after {seconds:g}s"
            return ToolResult(
                call.id,
                call.name,
                True,
                f"Error: {message}",
                None,
                {"name": "ToolTimeoutError", "code": "TOOL_TIMEOUT", "message": message},
            )
        return result

    return wrapper


def retry_wrapper(attempts: int, codes: frozenset[str] = frozenset({"TOOL_TIMEOUT"})):
    """Run the body again (up to `attempts` times in all) while it fails with one of `codes`.

    Only for tools whose effects may repeat: the caller chooses where to install it.
    """

    def wrapper(call, signal: Signal, proceed) -> ToolResult:
        result = proceed(signal)
        for _ in range(attempts - 1):
            if not result.is_error or (result.error or {}).get("code") not in codes or signal.is_set():
                break
            result = proceed(signal)
        return result

    return wrapper


def metrics_wrapper(sink: dict):
    """Record each call's wall time (seconds) and outcome in `sink`, keyed by call id."""

    def wrapper(call, signal: Signal, proceed) -> ToolResult:
        started = time.perf_counter()
        result = proceed(signal)
        sink[call.id] = {"seconds": time.perf_counter() - started, "error": (result.error or {}).get("code")}
        return result

    return wrapper
