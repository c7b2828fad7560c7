"""Stage 6: the post-execute waterfall. Accept may replace content OR value (not both);
block turns the result into an error with corrective feedback. Skipped after a final error."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from ..types import CallState, ToolResult, deep_freeze
from .common import error_result, note

STAGE = "post-execute"


@dataclass(frozen=True)
class Accept:
    content: str | None = None
    value: object = None
    additional_contexts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Block:
    feedback: str
    additional_contexts: tuple[str, ...] = ()


def run(state: CallState, ctx) -> CallState:
    if state.final or state.result is None:
        return state
    for listener in ctx.post_execute:
        try:
            decision = listener(state.call, state.result)
        except Exception as exc:  # noqa: BLE001 - a listener throw becomes an error result
            result = error_result(state, f"post-execute listener failed: {exc}", None, "PostExecuteError")
            return note(replace(state, result=result), STAGE, "listener threw")
        if decision is None:
            continue
        if isinstance(decision, Block):
            result = ToolResult(
                state.call.id,
                state.call.name,
                True,
                decision.feedback,
                None,
                {"name": "ToolBlocked", "message": decision.feedback},
                state.result.decided_by,
                tuple(decision.additional_contexts),
            )
            # a block keeps only its own contexts
            return note(replace(state, result=result, contexts=tuple(decision.additional_contexts)), STAGE, "block")
        if isinstance(decision, Accept):
            state = _accept(state, ctx, decision)
            continue
    return state


def _accept(state: CallState, ctx, decision: Accept) -> CallState:
    result = state.result
    assert result is not None  # after `execute`, every call has its result
    if decision.content is not None and decision.value is not None:
        bad = error_result(state, "post-execute may replace content or value, not both", None, "PostExecuteError")
        return note(replace(state, result=bad), STAGE, "illegal accept")
    if decision.value is not None:
        if result.is_error:
            bad = error_result(state, "post-execute cannot give a failed call a value", None, "PostExecuteError")
            return note(replace(state, result=bad), STAGE, "illegal accept")
        try:
            json.dumps(decision.value)
        except (TypeError, ValueError):
            bad = error_result(state, "post-execute value is not JSON", "INVALID_TOOL_OUTPUT", "ToolOutputError")
            return note(replace(state, result=bad), STAGE, "illegal accept")
        content = (
            ctx.render(state.entry.definition, state.call.arguments, decision.value)
            if state.entry
            else json.dumps(decision.value)
        )
        result = replace(result, value=deep_freeze(decision.value), content=content)
    elif decision.content is not None:
        result = replace(result, content=decision.content)
    contexts = state.contexts + tuple(decision.additional_contexts)
    return note(replace(state, result=result, contexts=contexts), STAGE, "accept")
