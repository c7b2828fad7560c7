"""Where a sandbox mode lets a file be changed, judged on its path alone (stdlib only: the Claude Code hook
asks it for every Write and Edit). In: the mode, the real workspace, the extra writable roots, a path. Out:
None, or why the mode keeps the change from running unasked. The process sandbox holds the same lines
(`confine`): read-only changes nothing, workspace-write changes the writable roots but not what runs
code later (`RUN_LATER`)."""

from __future__ import annotations

import os

# Inside a write root, what makes a program run code later, outside the sandbox: git's hooks and its
# settings (`core.hooksPath`, `core.fsmonitor`, an alias), the submodules a checkout fetches, the hook
# managers whose installed hook runs what their files say (husky's scripts, pre-commit's and lefthook's
# configuration), an editor's project tasks and dev container (`initializeCommand` runs on the host), an
# agent's project configuration (its hooks, commands, MCP servers), what a shell runs on entering the folder
# (direnv's `.envrc`) or sources to use the project's environment (a virtual environment's activation scripts:
# the rest of `.venv` is written by every `pip install`, and is the project's code as its sources are). The
# hooks folder a repository's `core.hooksPath` names is one too (`hooks_path`).
RUN_LATER = (
    ".git/hooks",
    ".git/config",
    ".gitmodules",
    ".husky",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".devcontainer",
    ".devcontainer.json",
    ".claude",
    ".codex",
    ".cursor",
    ".gemini",
    ".envrc",
    ".venv/bin/activate",
    ".venv/bin/activate.fish",
    ".venv/bin/activate.csh",
    ".venv/bin/activate.nu",
    ".venv/bin/activate.ps1",
    ".venv/bin/activate.xsh",
    ".venv/bin/activate_this.py",
)


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def runs_later(relative: str) -> str | None:
    """The `RUN_LATER` entry a workspace-relative path is (or is under), else None. Compared in lower case:
    a case-insensitive file system reads `.GIT/hooks` as `.git/hooks`."""
    lowered = relative.replace(os.sep, "/").lower()
    return next((name for name in RUN_LATER if lowered == name or lowered.startswith(name + "/")), None)


def runs_later_at(root: str, real: str) -> str | None:
    """What runs code later that the real path `real`, under the write root `root`, is or is under: a
    `RUN_LATER` entry, or the hooks folder the repository at `root` configures (named as it is written)."""
    name = runs_later(os.path.relpath(real, root))
    if name is not None:
        return name
    hooks = hooks_path(root)
    if hooks is not None and within(real, os.path.realpath(hooks)):
        return os.path.relpath(hooks, root) if within(hooks, root) else hooks
    return None


def hooks_path(root: str) -> str | None:
    """The folder git runs the hooks of the repository at `root` from, when its config sets `core.hooksPath`
    (git then reads no `.git/hooks`): absolute, `~` expanded, a relative one the working tree's. The last
    setting wins, as in git; None when unset or unreadable."""
    config = _config_file(root)
    if config is None:
        return None
    try:
        with open(config, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 20)
    except OSError:
        return None
    section, found = None, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):  # `[core]`; `[core "x"]` is a subsection, not core
            header = line[1 : line.find("]")] if "]" in line else ""
            section = header.strip().lower()
            continue
        name, _, value = line.partition("=")
        if section == "core" and name.strip().lower() == "hookspath":
            found = _config_value(value)
    if not found:
        return None
    found = os.path.expanduser(found)
    return found if os.path.isabs(found) else os.path.join(root, found)


def _config_file(root: str) -> str | None:
    folder = git_folder(root)
    return None if folder is None else os.path.join(folder, "config")


def git_folder(root: str) -> str | None:
    """The git folder of the repository whose `.git` is at `root`, where its config and objects are: `.git`, or
    for a worktree or submodule (a `.git` file saying `gitdir: …`) the folder its git folder shares."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as handle:
            first = handle.readline(4096).strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    folder = os.path.join(root, first[len("gitdir:") :].strip())
    try:
        with open(os.path.join(folder, "commondir"), encoding="utf-8", errors="replace") as handle:
            folder = os.path.join(folder, handle.readline(4096).strip())  # a worktree: the main repository's
    except OSError:
        pass
    return folder


def _config_value(text: str) -> str:
    """A git config value as git reads it: quotes removed, `#` or `;` outside them starts a comment,
    `\\`, `\\"`, `\\t` and `\\n` escaped, surrounding blanks dropped."""
    out, quoted, index = [], False, 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            out.append({"t": "\t", "n": "\n"}.get(text[index + 1], text[index + 1]))
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()


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
    name = runs_later_at(root, real)
    if name is not None:
        return f"`{real}` is in `{name}`, which runs code later, outside the sandbox"
    return None
