"""plan-mode: exit_plan_mode presents the plan for the user's review and, on approval, leaves
plan mode. In: the plan (markdown opening with a `# ` heading); out: `{approved: true}`.
Outside plan mode, without a heading, without a channel to ask on, or when the user keeps
planning, the call is a plain error (no code) and plan mode stays as it was."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .base import ToolContext, arg_str, fail

_HEADING = re.compile(r"#\s+\S")  # a level-1 heading: `# Title`, not `## Title` or `#Title`


def exit_plan_mode(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    plan = arg_str(args, "plan")
    with ctx.state.lock:
        planning = ctx.state.plan_mode
    if not planning:
        raise fail("not-plan-mode")
    if not _HEADING.match(plan.strip()):
        raise fail("plan-no-heading")
    if ctx.review_plan is None:
        raise fail("plan-no-channel")
    try:
        outcome = ctx.review_plan(plan)
    except Exception:  # noqa: BLE001 - a broken channel is no channel, never an approval
        outcome = "unavailable"
    if outcome == "unavailable":
        raise fail("plan-no-channel")
    if outcome != "approved":  # anything but an explicit approval keeps planning
        raise fail("plan-kept")
    with ctx.state.lock:
        ctx.state.plan_mode = False
    return {"approved": True}


def render(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    return "plan approved; plan mode is off — carry out the plan starting with your next step"


BODIES = {"plan-mode/exit_plan_mode": exit_plan_mode}
RENDERERS = {"plan-mode/exit_plan_mode": render}
