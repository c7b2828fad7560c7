"""Stage 1: the `tool/call` event is written (and fsynced) before anything else happens."""

from __future__ import annotations

from ..types import CallState, thaw
from .common import note

STAGE = "record-call"


def run(state: CallState, ctx) -> CallState:
    call = state.call
    ctx.log.append(
        "tool/call",
        callId=call.id,
        name=call.name,
        arguments=thaw(call.arguments),
        parent=call.parent,
        fingerprint=ctx.view.fingerprint,
    )
    return note(state, STAGE, "recorded")
