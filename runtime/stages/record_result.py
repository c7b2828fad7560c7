"""Stage 10: the `tool/result` event — the single model-facing result of the call."""

from __future__ import annotations

from ..types import CallState, thaw
from .common import note

STAGE = "record-result"


def run(state: CallState, ctx) -> CallState:
    result = state.result
    assert result is not None  # after `execute`, every call has its result
    ctx.log.append(
        "tool/result",
        callId=state.call.id,
        name=state.call.name,
        isError=result.is_error,
        content=result.content,
        value=thaw(result.value),
        error=result.error,
        decision=state.decision,
        decidedBy=[list(d) for d in result.decided_by or state.decided_by],
        fingerprint=ctx.view.fingerprint,
    )
    return note(state, STAGE, "recorded")
