"""Confinement as the tools see it: path checks for the file tools (a path argument + the
call's sandbox mode → the resolved real path, or SANDBOX_DENIED) and the OS confinement of
the processes the shell tools start (ToolContext → Confinement; failures → SANDBOX_UNAVAILABLE)."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from ..sandbox import Confinement, SandboxFailure, SandboxUnavailable
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


def confinement(ctx: ToolContext) -> Confinement:
    check_mode(ctx)
    roots = tuple(os.path.realpath(os.path.expanduser(root)) for root in ctx.writable_roots)
    return Confinement(mode=ctx.sandbox, workspace=workspace_root(ctx), tmpdir=ctx.state.private_tmp(),
                       writable=roots, network=ctx.network, fallback_unsandboxed=ctx.sandbox_fallback,
                       backend=ctx.sandbox_backend)


def process_env(ctx: ToolContext, base: dict[str, str]) -> dict[str, str]:
    """Temp files go to the session's private temp dir, the one place every mode may write."""
    tmp = ctx.state.private_tmp()
    return {**base, "TMPDIR": tmp, "TMP": tmp, "TEMP": tmp}


@contextmanager
def process_errors(program: str) -> Iterator[None]:
    """A process that could not start or be confined becomes a structured tool error."""
    try:
        yield
    except SandboxUnavailable as exc:
        raise fail("sandbox-unavailable", mode=exc.mode, missing=exc.missing) from None
    except SandboxFailure as exc:
        raise fail("sandbox-failed", reason=str(exc)) from None
    except OSError as exc:
        raise invalid(f"cannot start `{program}`: {exc.strerror or exc}") from None
