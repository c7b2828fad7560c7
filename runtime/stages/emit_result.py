"""Stage 9: `tools/result` observers see the frozen result; they cannot change it, and their
failures are contained (noted, never raised)."""

from __future__ import annotations

from ..types import CallState
from .common import note

STAGE = "emit-result"


def run(state: CallState, ctx) -> CallState:
    for observer in ctx.observers:
        try:
            observer(state.call, state.result)
        except Exception as exc:  # noqa: BLE001 - an observer can never break the call
            state = note(state, STAGE, f"observer failed: {type(exc).__name__}")
    return state
