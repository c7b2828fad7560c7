"""Stage 4: monotonic guards after an allow. A guard denies or abstains; it cannot allow."""

from __future__ import annotations

from dataclasses import replace

from ..types import CallState, Deny
from .common import denial, note

STAGE = "guards"


def run(state: CallState, ctx) -> CallState:
    if state.decision != "allow" or state.result is not None:
        return state
    for guard in ctx.guards:
        try:
            verdict = guard(state.call, state.entry)
        except Exception as exc:  # noqa: BLE001 - fail closed: a broken guard denies
            return note(denial(state, f"guard failed: {exc}"), STAGE, "guard threw")
        if isinstance(verdict, Deny):
            state = replace(state, decided_by=tuple(verdict.decided_by) or state.decided_by)  # the guard decided
            return note(denial(state, verdict.reason, verdict.code), STAGE, "deny")
    return note(state, STAGE, "no guard objected")
