"""Stage 7: a lossless JSON snapshot of the result; anything that is not JSON becomes isError."""

from __future__ import annotations

import json
from dataclasses import replace

from ..types import CallState, deep_freeze, thaw
from .common import error_result, note

STAGE = "normalize"


def run(state: CallState, ctx) -> CallState:
    result = state.result
    if result is None:  # nothing produced a result: fail closed
        result = error_result(state, "the call produced no result", None, "PipelineError")
    try:
        snapshot = json.loads(json.dumps(thaw(result.value))) if result.value is not None else None
        content = result.content if isinstance(result.content, str) else json.dumps(result.content)
        result = replace(result, value=deep_freeze(snapshot), content=content)
    except (TypeError, ValueError) as exc:
        result = error_result(state, f"result is not JSON: {exc}", "INVALID_TOOL_OUTPUT", "ToolOutputError")
    return note(replace(state, result=result), STAGE, "snapshot")
