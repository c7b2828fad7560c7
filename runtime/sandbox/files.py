"""Where a sandbox mode lets a file be changed, judged on its path alone (stdlib only: the Claude Code hook
asks it for every Write and Edit). In: the mode, the real workspace, the extra writable roots, a path. Out:
None, or why the mode keeps the change from running unasked. The process sandbox holds the same lines
(`confine`): read-only changes nothing, workspace-write changes the writable roots but not what runs
code later (`RUN_LATER`)."""
from __future__ import annotations

import os

# Inside a write root, what makes a program run code later, outside the sandbox: git's hooks and its
# settings (`core.hooksPath`, `core.fsmonitor`, an alias), the submodules a checkout fetches, an editor's
# project tasks, an agent's project configuration (its hooks, commands, MCP servers).
RUN_LATER = (".git/hooks", ".git/config", ".gitmodules", ".mcp.json", ".vscode", ".idea", ".claude", ".codex")


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def runs_later(relative: str) -> str | None:
    """The `RUN_LATER` entry a workspace-relative path is (or is under), else None. Compared in lower case:
    a case-insensitive file system reads `.GIT/hooks` as `.git/hooks`."""
    lowered = relative.replace(os.sep, "/").lower()
    return next((name for name in RUN_LATER if lowered == name or lowered.startswith(name + "/")), None)


def change_refused(mode: str, workspace: str, path: str, writable=()) -> str | None:
    """Why `mode` keeps a change of `path` (relative ones are the workspace's; links and `..` resolved)
    from running unasked, or None. An unknown mode refuses."""
    if mode == "danger-full-access":
        return None
    real = os.path.realpath(os.path.join(workspace, os.path.expanduser(path)))
    if mode == "read-only":
        return f"`{path}` would be changed, and `sandbox read-only` changes no file"
    if mode != "workspace-write":
        return f"`sandbox {mode}` is not a mode dshc knows"
    root = next((root for root in (workspace, *writable) if within(real, root)), None)
    if root is None:
        return f"`{real}` is outside the workspace `{workspace}`" + (" and its writable roots" if writable else "")
    name = runs_later(os.path.relpath(real, root))
    if name is not None:
        return f"`{real}` is in `{name}`, which runs code later, outside the sandbox"
    return None
