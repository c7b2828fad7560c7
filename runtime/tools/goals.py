"""tool-goal: an in-memory goal store in `state.goals`. In: an objective or a revisioned
action; out: the goal as it now stands. Every change needs the current revision."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import ToolContext, arg_int, arg_str, fail, invalid

OPEN_STATUSES = ("active", "paused", "blocked")
# action -> (statuses it may start from, status it leads to; None keeps the status)
TRANSITIONS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "edit": (OPEN_STATUSES, None),
    "pause": (("active",), "paused"),
    "resume": (("paused", "blocked"), "active"),
    "complete": (OPEN_STATUSES, "completed"),
    "blocked": (("active", "paused"), "blocked"),
}


def _current(ctx: ToolContext) -> dict[str, Any] | None:
    return next(reversed(ctx.state.goals.values()), None)


def create_goal(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    objective = arg_str(args, "objective")
    if not objective.strip():
        raise fail("goal-objective")
    rounds = arg_int(args, "max_goal_rounds", minimum=1)
    with ctx.state.lock:
        current = _current(ctx)
        if current is not None and current["status"] in OPEN_STATUSES:
            raise fail("goal-open", goal_id=current["goal_id"], status=current["status"])
        goal_id = f"goal-{len(ctx.state.goals) + 1}"
        goal = {
            "goal_id": goal_id,
            "objective": objective,
            "status": "active",
            "revision": 1,
            "max_goal_rounds": rounds,
            "blocked_reason": None,
        }
        ctx.state.goals[goal_id] = goal
        return {"goal": dict(goal)}


def get_goal(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    with ctx.state.lock:
        current = _current(ctx)
        return {"goal": dict(current) if current is not None else None}


def update_goal(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    goal_id = arg_str(args, "goal_id")
    revision = arg_int(args, "revision", minimum=0)
    action = arg_str(args, "action")
    if action not in TRANSITIONS:
        raise invalid(f"`action` must be one of {', '.join(TRANSITIONS)}")
    objective = arg_str(args, "objective", required=False)
    rounds = arg_int(args, "max_goal_rounds", minimum=1)
    reason = arg_str(args, "blocked_reason", required=False)
    if revision is None:
        raise invalid("`revision` is required; get_goal shows the current one")
    with ctx.state.lock:
        goal = ctx.state.goals.get(goal_id)
        if goal is None:
            raise fail("goal-unknown", goal_id=goal_id)
        if revision != goal["revision"]:
            raise fail("goal-stale", goal_id=goal_id, given=revision, current=goal["revision"])
        sources, target = TRANSITIONS[action]
        if goal["status"] not in sources:
            raise fail("goal-transition", action=action, goal_id=goal_id, status=goal["status"])
        if action == "edit":
            if objective is None and rounds is None:
                raise fail("goal-update", detail="edit needs a new `objective` or `max_goal_rounds`")
            if objective is not None and not objective.strip():
                raise fail("goal-objective")
            goal.update({k: v for k, v in (("objective", objective), ("max_goal_rounds", rounds)) if v is not None})
        if action == "blocked":
            if not reason or not reason.strip():
                raise fail("goal-update", detail="marking a goal blocked needs a `blocked_reason`")
            goal["blocked_reason"] = reason
        elif target is not None:
            goal["blocked_reason"] = None
        if target is not None:
            goal["status"] = target
        goal["revision"] += 1
        return {"goal": dict(goal)}


def render(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    goal = value["goal"]
    if goal is None:
        return "no goal is set"
    text = f"{goal['goal_id']} [{goal['status']}, revision {goal['revision']}]: {goal['objective']}"
    if goal.get("max_goal_rounds") is not None:
        text += f"\nround limit: {goal['max_goal_rounds']}"
    if goal.get("blocked_reason"):
        text += f"\nblocked: {goal['blocked_reason']}"
    return text


BODIES = {"tool-goal/create_goal": create_goal, "tool-goal/get_goal": get_goal, "tool-goal/update_goal": update_goal}
RENDERERS = dict.fromkeys(BODIES, render)
