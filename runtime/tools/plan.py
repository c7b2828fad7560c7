"""plan-mode: exit_plan_mode leaves plan mode with the proposed plan. In: the plan text;
out: the approval. Calls outside plan mode are rejected."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import ToolContext, arg_str, fail


def exit_plan_mode(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    plan = arg_str(args, "plan")
    with ctx.state.lock:
        if not ctx.state.plan_mode:
            raise fail("not-plan-mode")
        ctx.state.plan_mode = False
    return {"approved": True, "plan": plan}


def render(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    return "plan approved; plan mode is off and changes may now be made"


BODIES = {"plan-mode/exit_plan_mode": exit_plan_mode}
RENDERERS = {"plan-mode/exit_plan_mode": render}
