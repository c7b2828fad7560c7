"""subagent-in-process-driver: `structured_output`, how a workflow or ralph child hands back its
result. In: the result object, checked against the session's output schema when there is one;
out: the result as recorded. A success ends the turn; `turn_guard` then denies every later call."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..arguments import problem as schema_problem
from ..types import Deny
from .base import ERRORS, ToolContext, ToolState, fail, invalid, thaw

DEFINITION = "subagent-in-process-driver/structured_output"
# the reference's guard denies with a reason only; this code is dshc's own (like INTERRUPTED), so a
# caller can tell the end of a child's turn from a policy denial
TURN_CONCLUDED = "TURN_CONCLUDED"


def structured_output(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    result = thaw(args)
    if ctx.output_schema is not None:
        problem = _against_schema(ctx.output_schema, result)
        if problem is not None:  # not the end of the turn: the model may fix the result and call again
            raise invalid(f"the result does not match the output schema: {problem}")
    with ctx.state.lock:
        # two calls can both pass pre-execute (nested run_code calls overlap): only the first is the result
        if ctx.state.final_output is not None:
            raise fail("turn-concluded")
        ctx.state.final_output = result
    return result


def _against_schema(schema: Mapping[str, Any], result: Any) -> str | None:
    try:
        return schema_problem(json.dumps(schema, sort_keys=True), result)
    except RecursionError:
        return "the result nests too deep to check"
    except Exception as exc:  # noqa: BLE001 - a schema that cannot be applied refuses (fail closed)
        return f"the schema cannot be applied: {exc}"


def turn_guard(state: ToolState):
    """A pre-execute listener that denies every call once the session's result is delivered; it goes
    first, so neither the policy nor a human is asked about a call that can no longer run."""
    reason = ERRORS["turn-concluded"][2]

    def guard(call, entry):
        if state.final_output is None:
            return None
        return Deny(reason, (("structured_output", None),), code=TURN_CONCLUDED)

    return guard


def render(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    return "result delivered; this turn is over"


BODIES = {DEFINITION: structured_output}
RENDERERS = {DEFINITION: render}
