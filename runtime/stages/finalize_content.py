"""Stage 8: the tool's own synchronous, content-only last word — exactly once, on every outcome."""

from __future__ import annotations

from dataclasses import replace

from ..types import CallState
from .common import error_result, note

STAGE = "finalize-content"


def run(state: CallState, ctx) -> CallState:
    finalizer = ctx.finalizers.get(state.entry.definition) if state.entry is not None else None
    if finalizer is None:  # no entry (unknown or collapsed call): nothing of the tool runs
        return state
    assert state.result is not None  # after `execute`, every call has its result
    try:
        content = finalizer(state.call.arguments, state.result.content)
    except Exception as exc:  # noqa: BLE001 - a throwing finalizer makes the result an error; it is not re-run
        return note(
            replace(state, result=error_result(state, f"finalizeContent failed: {exc}", None, "FinalizeError")),
            STAGE,
            "threw",
        )
    if content is None:
        return note(state, STAGE, "kept")
    if not isinstance(content, str):
        return note(
            replace(state, result=error_result(state, "finalizeContent must return text", None, "FinalizeError")),
            STAGE,
            "bad content",
        )
    return note(replace(state, result=replace(state.result, content=content)), STAGE, "replaced")
