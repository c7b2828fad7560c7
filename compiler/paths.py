"""A path argument → its canonical form (`~`, `..`, symlinks resolved against the workspace):
relative to the root inside it (`docs/../src/x.md` → `src/x.md`), absolute outside; `matches` tries both.
"""

from __future__ import annotations

import os
import posixpath

from ._base.memo import memoised


class CanonicalPath(str):
    """The canonical text (relative inside the workspace) with its absolute form alongside."""

    absolute: str

    def __new__(cls, text: str, absolute: str):
        made = super().__new__(cls, text)
        made.absolute = absolute
        return made

    def forms(self) -> tuple[str, ...]:
        return (str(self),) if self.absolute == str(self) else (str(self), self.absolute)


@memoised(64)
def _root(workspace: str) -> str:
    return os.path.realpath(workspace)


def canonical_path(value: str, workspace: str | None, base: str | None = None) -> str:
    """The canonical form of `value` (relative to `base`, itself relative to the workspace).

    Without a workspace only `~` and `..` are resolved, lexically. A value the file system
    cannot take (a NUL byte) is returned unchanged: conditions then see the raw text.
    """
    if "\x00" in value or (base is not None and "\x00" in base):
        return value
    expanded = os.path.expanduser(value) if value.startswith("~") else value  # what expanduser returns for the rest
    if workspace is None:
        if base is None and _already_normal(value):
            return value  # what normpath would return; callers that see no change skip their copy
        joined = (
            posixpath.join(os.path.expanduser(base), expanded) if base and not posixpath.isabs(expanded) else expanded
        )
        normal = posixpath.normpath(joined) if joined else joined
        return CanonicalPath(normal, normal)
    root = _root(workspace)
    start = root if base is None else os.path.join(root, os.path.expanduser(base))
    try:
        full = os.path.realpath(os.path.join(start, expanded))
    except (OSError, ValueError):
        return value
    if full == root:
        return CanonicalPath(".", full)
    if full.startswith(root.rstrip("/") + "/"):
        return CanonicalPath(full[len(root.rstrip("/")) + 1 :], full)
    return CanonicalPath(full, full)


_HOME_FORMS = ("$HOME", "${HOME}")


@memoised(256)
def home_glob(pattern: str) -> str:
    """A path glob with a leading `~`, `~USER` or `$HOME` written as the home directory it names, as the
    shell would expand it for the user dshc runs as: canonical paths are absolute outside the
    workspace, so `~/.ssh/**` written as is would match nothing. `~USER` of an unknown user stays."""
    if pattern[:1] == "~":
        return os.path.expanduser(pattern)
    for form in _HOME_FORMS:
        if pattern == form or pattern.startswith(form + "/"):
            return os.path.expanduser("~") + pattern[len(form) :]
    return pattern


def tilde_glob(pattern: str) -> str:
    """`pattern` with a leading `$HOME` written `~`, as the rule reads it (`home_glob`) and people write it."""
    for form in _HOME_FORMS:
        if pattern == form or pattern.startswith(form + "/"):
            return "~" + pattern[len(form) :]
    return pattern


def never_canonical(pattern: str) -> str:
    """Why no canonical path can match the path glob `pattern` ("" when one can): canonical paths have no
    `.`/`..` part, no empty part and no trailing `/`, and a leading `~` names no known user."""
    expanded = home_glob(pattern)
    if expanded[:1] == "~":
        return f"`{expanded.split('/', 1)[0]}` names no user of this machine"
    if any(part in (".", "..") for part in expanded.split("/")):
        return "canonical paths have no `.` or `..` part"
    if "//" in expanded or (expanded.endswith("/") and expanded != "/"):
        return "canonical paths have no empty part and no trailing `/`"
    return ""


def _already_normal(value: str) -> bool:
    """normpath(value) == value, told without running it: no `~` to expand, no empty component (`//`,
    a trailing `/`, the empty text) and no `.` or `..` component (one starts the text or follows a `/`)."""
    return bool(value) and value[0] not in "~." and "//" not in value and "/." not in value and value[-1] != "/"


def path_inside(path: str, workspace: str) -> bool:
    """Normalise `~`, `..` and symlinks against the workspace, then test containment."""
    root = _root(workspace)
    full = path.absolute if isinstance(path, CanonicalPath) and os.path.isabs(path.absolute) else None
    if full is None:
        expanded = os.path.expanduser(path)
        if not os.path.isabs(expanded):
            expanded = os.path.join(root, expanded)
        try:
            full = os.path.realpath(expanded)
        except (OSError, ValueError):
            return False
    try:
        return os.path.commonpath([root, full]) == root
    except ValueError:
        return False
