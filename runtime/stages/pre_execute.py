"""Stage 2: resolve the name against the view, then the pre-execute waterfall (allow | ask | deny).

Code mode: a direct call of a native name is answered UNKNOWN_TOOL before any policy runs,
with a hint to call it from a `run_code` program (policy must never see, let alone approve, a
call that can only fail). A nested call (one with a parent) resolves against the SDK only, so
`run_code` never calls itself, and where a code runtime is bound its parent must be a run_code
call still running. A name on no view takes the ordinary path: the listeners see it (entry None)
and dispatch answers UNKNOWN_TOOL. A listener that throws makes a final error.
"""

from __future__ import annotations

from dataclasses import replace

from ..types import Allow, Ask, CallState, Deny
from .common import denial, error_result, note, unknown_tool

STAGE = "pre-execute"
COLLAPSED = "collapsed"


def _resolve(state: CallState, ctx):
    """(the entry the call runs, or None; None, COLLAPSED or why a nested call cannot resolve)."""
    view = ctx.view
    name = state.call.name
    wire = {e.name: e for e in view.tools}
    sdk = {e.name: e for e in (view.sdk or ())}
    if state.call.parent is not None:
        if ctx.live_parent is not None and not ctx.live_parent(state.call.parent):
            return None, f"unknown tool `{name}`: its parent `{state.call.parent}` is not a running `run_code` call"
        if name in sdk:
            return sdk[name], None  # a nested dispatch from run_code
        return None, f"unknown tool `{name}`: `tools.{name}` is not in this program's SDK"
    if name in wire:
        return wire[name], None
    if name in sdk and view.mode == "code":
        return None, COLLAPSED
    return None, None


def run(state: CallState, ctx) -> CallState:
    entry, problem = _resolve(state, ctx)
    if problem == COLLAPSED:
        if ctx.signal.is_set():  # the cancellation contract holds even for a collapsed call
            result = error_result(state, "aborted before dispatch", "ABORTED_BEFORE_DISPATCH", "AbortError")
        else:
            result = unknown_tool(state, code_mode=True)
        return note(replace(state, result=result, final=True), STAGE, "collapsed in code mode")
    if problem is not None:
        result = error_result(state, problem, "UNKNOWN_TOOL", "ToolNotFoundError")
        return note(replace(state, result=result, final=True), STAGE, "unknown tool")
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
        ctx.log.append(
            "tool/decision",
            callId=state.call.id,
            name=state.call.name,
            decision=type(decision).__name__.lower(),
            reason=decision.reason,
            decidedBy=[list(d) for d in decision.decided_by],
            fingerprint=ctx.view.fingerprint,
            **({"sandbox": ctx.sandbox_of(state.call)} if ctx.sandbox_of else {}),
        )
        if isinstance(decision, Deny):
            return note(denial(state, decision.reason, decision.code, decision.name), STAGE, "deny")
        if isinstance(decision, Ask):
            return note(replace(state, decision="ask", reason=decision.reason), STAGE, "ask")
        if isinstance(decision, Allow):
            return note(replace(state, decision="allow", reason=decision.reason), STAGE, "allow")
        result = error_result(
            state, f"pre-execute listener returned {type(decision).__name__}", None, "PreExecuteError"
        )
        return note(replace(state, result=result, final=True), STAGE, "bad decision")
    return note(replace(state, decision="allow", reason="no listener objected"), STAGE, "allow")
