"""Stage 3 (only on ask): one-shot approval; only `allowed-once` lets the call through."""

from __future__ import annotations

from dataclasses import replace

from ..types import APPROVAL_OUTCOMES, CallState
from .common import denial, error_result, note

STAGE = "approval"


def run(state: CallState, ctx) -> CallState:
    if state.decision != "ask" or state.result is not None:
        return state
    reason = state.reason or "requires approval"
    if ctx.approver is None:
        return note(denial(state, f"{reason}; no approval channel is available"), STAGE, "no channel")
    try:
        outcome = ctx.approver(state.call, reason)
    except Exception:  # noqa: BLE001 - a throwing answerer is an unavailable channel
        outcome = "unavailable"
    if outcome not in APPROVAL_OUTCOMES:
        outcome = "unavailable"  # a rogue answer never grants
    if outcome == "allowed-once":
        return note(replace(state, decision="allow", reason=f"{reason}; approved once"), STAGE, outcome)
    if outcome == "cancelled" and ctx.signal.is_set():
        result = error_result(state, "aborted before dispatch", "ABORTED_BEFORE_DISPATCH", "AbortError")
        return note(replace(state, decision="deny", result=result), STAGE, outcome)
    words = {
        "rejected": "the user rejected it",
        "cancelled": "the approval was cancelled",
        "unavailable": "no approval channel is available",
    }
    return note(denial(state, f"{reason}; {words[outcome]}"), STAGE, outcome)
