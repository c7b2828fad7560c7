"""Path confinement for the file tools. In: a path argument + the call's sandbox mode;
out: the fully resolved real path, or a SANDBOX_DENIED error."""
from __future__ import annotations

import os

from .base import SANDBOX_MODES, ToolContext, fail, invalid


def workspace_root(ctx: ToolContext) -> str:
    return os.path.realpath(ctx.workspace)


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_mode(ctx: ToolContext) -> None:
    # an unknown mode must never degrade into an unconfined one
    if ctx.sandbox not in SANDBOX_MODES:
        raise fail("sandbox-unknown", mode=ctx.sandbox)


def resolve_path(ctx: ToolContext, path: str, write: bool) -> str:
    """Expand `~`, anchor relative paths at the workspace, and resolve `..` and symlinks
    (every component, including a dangling final link) before confinement is judged, so a
    link inside the workspace cannot reach outside it."""
    check_mode(ctx)
    if not isinstance(path, str) or not path.strip():
        raise invalid("a path must be a non-empty string")
    if "\x00" in path:
        raise invalid("a path must not contain NUL characters")
    root = workspace_root(ctx)
    expanded = os.path.expanduser(path)
    real = os.path.realpath(expanded if os.path.isabs(expanded) else os.path.join(root, expanded))
    if ctx.sandbox == "danger-full-access":
        return real
    if write and ctx.sandbox == "read-only":
        raise fail("sandbox-read-only", path=path)
    if not within(real, root):
        raise fail("sandbox-outside", mode=ctx.sandbox, path=path, root=root)
    return real


def allowed_to_read(ctx: ToolContext, real: str) -> bool:
    """For paths found while walking a tree: does the sandbox let a read reach them?"""
    return ctx.sandbox == "danger-full-access" or within(os.path.realpath(real), workspace_root(ctx))


def shown(ctx: ToolContext, real: str) -> str:
    """Workspace-relative when inside the workspace, absolute otherwise."""
    root = workspace_root(ctx)
    if within(real, root):
        return os.path.relpath(real, root) if real != root else "."
    return real
