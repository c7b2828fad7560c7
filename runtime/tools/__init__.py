"""Local tool bodies, keyed by catalog definition id ("tool-fs/read", "tool-bash-persistent/bash").
In: validated arguments + a ToolContext; out: one JSON value, or a ToolError the pipeline
turns into an error result. `render` turns a successful value into the model's text."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from . import (
    ask_user,
    editor,
    fs,
    goals,
    jobs,
    persistent_shell,
    plan,
    search,
    shell,
    structured_output,
    todo,
    unavailable,
    web,
)
from .base import Body, JobTable, ToolContext, ToolError, ToolState
from .persistent_shell import PersistentShell
from .sandbox import resolve_path

_GROUPS = (
    fs,
    search,
    editor,
    shell,
    persistent_shell,
    jobs,
    todo,
    plan,
    goals,
    ask_user,
    unavailable,
    web,
    structured_output,
)


def _merge(attribute: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for group in _GROUPS:
        table = getattr(group, attribute)
        clash = merged.keys() & table.keys()
        if clash:
            raise RuntimeError(f"tool definitions registered twice: {sorted(clash)}")
        merged.update(table)
    return merged


IMPLEMENTATIONS: dict[str, Body] = _merge("BODIES")
RENDERERS: dict[str, Any] = _merge("RENDERERS")


def render(definition: str, args: Mapping[str, Any], value: Any) -> str:
    """Short deterministic text for a successful value; JSON for tools without their own view."""
    renderer = RENDERERS.get(definition)
    if renderer is not None:
        return renderer(args, value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def unavailable_definitions() -> frozenset[str]:
    """Definitions whose body can only fail on this host (provider missing)."""
    missing = set(unavailable.MISSING) | {"tool-fs/read_image"}
    if not web.ready(os.environ.get("DSHC_WEB_PROVIDER") or None):
        missing |= set(web.BODIES)
    if shell.pwsh_executable() is None:
        missing.add("tool-pwsh/pwsh")
    return frozenset(missing)


__all__ = [
    "IMPLEMENTATIONS",
    "Body",
    "JobTable",
    "PersistentShell",
    "ToolContext",
    "ToolError",
    "ToolState",
    "render",
    "resolve_path",
    "unavailable_definitions",
]
