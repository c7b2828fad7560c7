"""Stage 2: resolve the name against the view, then the pre-execute waterfall (allow | ask | deny).

Code mode: a direct call of a native name is answered UNKNOWN_TOOL before any policy runs,
with a hint to call it from a `run_code` program (policy must never see, let alone approve, a
call that can only fail). A name on no view takes the ordinary path: the listeners see it
(entry None) and dispatch answers UNKNOWN_TOOL. A listener that throws makes a final error.
"""
from __future__ import annotations

from dataclasses import replace

from ..types import Allow, Ask, CallState, Deny
from .common import denial, error_result, note, unknown_tool

STAGE = "pre-execute"


def _resolve(state: CallState, view):
    """(the entry the call runs, or None; True when code mode collapses a visible native name)."""
    name = state.call.name
    wire = {e.name: e for e in view.tools}
    sdk = {e.name: e for e in (view.sdk or ())}
    if name in wire:
        return wire[name], False
    if name in sdk:
        if state.call.parent is not None:
            return sdk[name], False  # a nested dispatch from run_code
        if view.mode == "code":
            return None, True
    return None, False


def run(state: CallState, ctx) -> CallState:
    entry, collapsed = _resolve(state, ctx.view)
    if collapsed:
        if ctx.signal.is_set():  # the cancellation contract holds even for a collapsed call
            result = error_result(state, "aborted before dispatch", "ABORTED_BEFORE_DISPATCH", "AbortError")
        else:
            result = unknown_tool(state, code_mode=True)
        return note(replace(state, result=result, final=True), STAGE, "collapsed in code mode")
    state = replace(state, entry=entry)
    for listener in ctx.pre_execute:
        try:
            decision = listener(state.call, entry)
        except Exception as exc:  # noqa: BLE001 - a listener failure is a final error, never an allow
            result = error_result(state, f"pre-execute listener failed: {exc}", None, "PreExecuteError")
            return note(replace(state, result=result, final=True), STAGE, "listener threw")
        if decision is None:
            continue
        state = replace(state, decided_by=tuple(decision.decided_by))
        ctx.log.append("tool/decision", callId=state.call.id, name=state.call.name,
                       decision=type(decision).__name__.lower(), reason=decision.reason,
                       decidedBy=[list(d) for d in decision.decided_by], fingerprint=ctx.view.fingerprint,
                       **({"sandbox": ctx.sandbox_of(state.call)} if ctx.sandbox_of else {}))
        if isinstance(decision, Deny):
            return note(denial(state, decision.reason), STAGE, "deny")
        if isinstance(decision, Ask):
            return note(replace(state, decision="ask", reason=decision.reason), STAGE, "ask")
        if isinstance(decision, Allow):
            return note(replace(state, decision="allow", reason=decision.reason), STAGE, "allow")
        result = error_result(state, f"pre-execute listener returned {type(decision).__name__}", None,
                              "PreExecuteError")
        return note(replace(state, result=result, final=True), STAGE, "bad decision")
    return note(replace(state, decision="allow", reason="no listener objected"), STAGE, "allow")
