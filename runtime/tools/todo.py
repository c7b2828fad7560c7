"""tool-todo: the session's task list, replaced wholesale on every call. In: the full list;
out: the list as stored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import ToolContext, invalid, thaw

STATUSES = ("pending", "in_progress", "completed")
_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


def todo_write(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    todos = thaw(args.get("todos"))
    if not isinstance(todos, list):
        raise invalid("`todos` must be a list")
    for index, item in enumerate(todos):
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            raise invalid(f"`todos[{index}]` needs a string `content`")
        if item.get("status") not in STATUSES:
            raise invalid(f"`todos[{index}].status` must be one of {', '.join(STATUSES)}")
    with ctx.state.lock:
        ctx.state.todos = todos
        return {"todos": thaw(todos)}


def render(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    if not value["todos"]:
        return "the todo list is empty"
    return "\n".join(f"{_MARKS[t['status']]} {t['content']}" for t in value["todos"])


BODIES = {"tool-todo/todo_write": todo_write}
RENDERERS = {"tool-todo/todo_write": render}
