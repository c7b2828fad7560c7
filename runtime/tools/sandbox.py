"""Confinement as the tools see it: path checks for the file tools (a path argument + the
call's sandbox mode → the resolved real path, or FS_SANDBOX_DENIED) and the OS confinement of
the processes the shell tools start (ToolContext → Confinement; failures → SANDBOX_UNAVAILABLE)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from ..sandbox import Confinement, SandboxFailure, SandboxUnavailable, confinement_in
from ..sandbox.files import runs_later_at, within
from .base import ESCALATION_HINT, SANDBOX_MODES, ToolContext, ToolError, fail, invalid


def workspace_root(ctx: ToolContext) -> str:
    return os.path.realpath(ctx.workspace)


def check_mode(ctx: ToolContext) -> None:
    # an unknown mode must never degrade into an unconfined one
    if ctx.sandbox not in SANDBOX_MODES:
        raise fail("sandbox-unknown", mode=ctx.sandbox)


def resolve_path(ctx: ToolContext, path: str, write: bool, escalates: bool = False) -> str:
    """Expand `~`, anchor relative paths at the workspace, and resolve `..` and symlinks
    (every component, including a dangling final link) before confinement is judged, so a
    link inside the workspace cannot reach outside it. A refusal is FS_SANDBOX_DENIED at
    execution, never a question; `escalates` (the tool takes `sandbox_permissions`) adds the
    hint to retry escalated, which a policy then asks a human about."""
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
    hint = ESCALATION_HINT if escalates else ""
    if write and ctx.sandbox == "read-only":
        raise fail("sandbox-read-only", path=path, hint=hint)
    if not within(real, root):
        raise fail("sandbox-outside", mode=ctx.sandbox, path=path, root=root, hint=hint)
    if write and (name := runs_later_at(root, real)) is not None:  # as a confined process finds it
        raise fail("sandbox-runs-later", path=path, name=name, hint=hint)
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
    return confinement_in(
        ctx.sandbox,
        workspace_root(ctx),
        ctx.state.private_tmp(),
        writable=ctx.writable_roots,
        protected=ctx.protected_roots,
        hidden=(*ctx.hidden_roots, *found_hidden(ctx)),
        network=ctx.network,
        network_allow=ctx.network_allow,
        network_deny=ctx.network_deny,
        fallback_unsandboxed=ctx.sandbox_fallback,
        backend=ctx.sandbox_backend,
    )


def found_hidden(ctx: ToolContext) -> tuple[str, ...]:
    """The files the policy's read-deny globs match now; a search that stopped short refuses the command
    (some of them would be readable)."""
    if ctx.hidden_found is None or ctx.sandbox == "danger-full-access":
        return ()
    found, complete = ctx.hidden_found(workspace_root(ctx))
    if not complete:
        raise fail(
            "sandbox-failed",
            reason="the files the policy's read rules name could not all be found before "
            "it started (too many entries under the workspace); name a path in the rule (`secrets/**`)",
        )
    return found


def process_env(ctx: ToolContext, base: dict[str, str]) -> dict[str, str]:
    """Temp files go to the session's private temp dir, the one place every mode may write; the variables the
    policy keeps from shell lines are not there at all, outside danger-full-access (a script reads them too)."""
    tmp = ctx.state.private_tmp()
    hidden = frozenset(ctx.hidden_env) if ctx.sandbox != "danger-full-access" else frozenset()
    return {
        **{name: value for name, value in base.items() if name not in hidden},
        "TMPDIR": tmp,
        "TMP": tmp,
        "TEMP": tmp,
    }


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


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# never block in open (a FIFO without a writer, a device) and never adopt a terminal
_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def _walk_to_parent(root: str, parts: list[str], given: str, create: bool) -> int:
    """An fd of the directory holding the last part, reached from the workspace one component
    at a time without following any link: a component swapped for a symlink after the
    decision makes the walk fail instead of leaving the workspace."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return fd
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise fail("fs-moved", path=given) from None
        raise


def open_file(ctx: ToolContext, real: str, given: str, *, write: bool, create: bool = False) -> tuple[int, bool]:
    """Open the regular file at `real` (already judged by resolve_path); returns (fd, created).

    Outside danger-full-access the open is relative to the workspace fd and follows no link,
    and a file reached by writing that has other hard links is refused: a link's other name
    may lie outside the workspace."""
    flags = (os.O_RDWR if write else os.O_RDONLY) | _FILE_FLAGS
    confined = ctx.sandbox != "danger-full-access"
    root = workspace_root(ctx)
    created = False
    try:
        if confined:
            parts = os.path.relpath(real, root).split(os.sep)
            if parts == ["."]:
                raise fail("fs-is-directory", path=given)
            parent = _walk_to_parent(root, parts, given, create)
            try:
                fd, created = _open_at(parts[-1], flags, create, parent)
            finally:
                os.close(parent)
        else:
            if create:
                os.makedirs(os.path.dirname(real), exist_ok=True)
            fd, created = _open_at(real, flags & ~os.O_NOFOLLOW, create, None)
    except ToolError:
        raise
    except FileNotFoundError:
        raise fail("fs-not-found", path=given) from None
    except IsADirectoryError:
        raise fail("fs-is-directory", path=given) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise fail("fs-moved", path=given) from None
        raise fail("fs-io", verb="write" if write else "read", path=given, reason=exc.strerror or exc) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise fail("fs-is-directory", path=given)
        if not stat.S_ISREG(info.st_mode):
            raise fail("fs-not-regular", path=given)
        if write and confined and info.st_nlink > 1:
            raise fail("fs-hard-linked", path=given, links=info.st_nlink)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, created


def _open_at(name: str, flags: int, create: bool, dir_fd: int | None) -> tuple[int, bool]:
    if create:
        try:
            return os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o666, dir_fd=dir_fd), True
        except FileExistsError:
            pass
    return os.open(name, flags, dir_fd=dir_fd), False
