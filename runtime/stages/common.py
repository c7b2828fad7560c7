"""Small helpers the stages share: error results and stage notes."""

from __future__ import annotations

from dataclasses import replace

from ..types import CallState, StageRecord, ToolResult


def note(state: CallState, stage: str, text: str) -> CallState:
    return replace(state, records=state.records + (StageRecord(stage, text),))


def error_result(state: CallState, message: str, code: str | None = None, name: str = "ToolError") -> ToolResult:
    error = {"name": name, "message": message}
    if code is not None:
        error["code"] = code
    return ToolResult(state.call.id, state.call.name, True, f"Error: {message}", None, error, state.decided_by)


def denial(state: CallState, reason: str, code: str | None = None, name: str = "ToolDenied") -> CallState:
    """A denial is an error result, without a code unless its decider gives one; it still goes through post-execute."""
    error = {"name": name, "message": reason, **({"code": code} if code else {})}
    result = ToolResult(state.call.id, state.call.name, True, f"Error: {reason}", None, error, state.decided_by)
    return replace(state, decision="deny", reason=reason, result=result)


def unknown_tool(state: CallState, code_mode: bool = False) -> ToolResult:
    """UNKNOWN_TOOL; in code mode the name is visible, so the message names the way to reach it."""
    name = state.call.name
    message = f'unknown tool "{name}"'
    if code_mode:
        message += f": only `run_code` is callable directly — call `{name}` from inside a `run_code` program instead"
    return error_result(state, message, "UNKNOWN_TOOL", "ToolNotFoundError")
