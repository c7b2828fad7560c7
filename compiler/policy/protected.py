"""The paths a policy forbids writing inside the writable roots, for the OS sandbox to keep read-only, and
those it forbids reading, for the sandbox to hide (with the files its read-deny globs match, found when a
command starts: `hidden_globs`, `matching_files`).

`deny write, edit when args.file_path matches ".claude/*"` is enforced where a call is decided, but a
process writes files no rule sees (`tar xf a.tar`, a build script, `python3 x.py`): the sandbox keeps
`.claude` read-only too (`runtime/sandbox/readonly.py`). Only what the rule alone decides becomes a path:
a `deny` or `ask` (a sandboxed process cannot ask) or a guard on the `write` tool whose whole condition is
`args.file_path matches "DIR/*"` (or `"DIR/**"`, or a literal `"FILE"`), or an `or` of such tests. A rule
with another condition (`… and plan_mode`) would be enforced where it does not hold, and a glob without a
literal directory (`*.env`) names no path: both are left to the rules.
"""
from __future__ import annotations

import os

from .. import ast
from ..globs import glob_match
from ..paths import home_glob, tilde_glob

WILD = "*?"


def protected_paths(policy) -> tuple[str, ...]:
    """The literal paths (relative ones are the workspace's; a directory's ends in `/`) a policy keeps from
    being written."""
    return _named_paths(policy, "write")


def hidden_paths(policy) -> tuple[str, ...]:
    """The literal paths a policy keeps from being read, for the OS sandbox to hide (a process finds a
    directory empty, a file empty): `deny read … "secrets/**"` holds for `python3 x.py` too. A leading `~` (or
    `$HOME`, written `~`) is left for the sandbox to expand."""
    return _named_paths(policy, "read")


def _named_paths(policy, tool: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    denying = [rule for rule in policy.rules if rule.effect in ("deny", "ask")] + list(policy.guards)
    for rule in denying:
        if not any(target.kind == "tool" and glob_match(target.name.text, tool) for target in rule.targets):
            continue
        tests = rule.condition.items if isinstance(rule.condition, ast.Or) else (rule.condition,)
        paths = [_path(test) for test in tests]
        if paths and all(paths):
            found.update(dict.fromkeys(paths))
    return tuple(found)


def _path(test) -> str | None:
    """`DIR/` for `args.file_path matches "DIR/*"` (a directory: the trailing `/` says so), FILE for a literal
    glob; None for any other test."""
    if not isinstance(test, ast.Matches) or ast.argument_field(test) != "file_path":
        return None
    pattern = tilde_glob(test.pattern)
    for tail in ("/**", "/*"):
        if pattern.endswith(tail) and not any(char in pattern[:-len(tail)] for char in WILD):
            return pattern[:-len(tail)].rstrip("/") + "/"
    return pattern if pattern and not any(char in pattern for char in WILD) else None


SEARCH_LIMIT = 50_000  # entries a command's start may look through for the files a read-deny glob names
SKIPPED = frozenset({".git"})  # git's own folder: its files are objects, not the project's


def hidden_globs(policy) -> tuple[str, ...]:
    """The globs of the read denies (or asks, or guards) that name no literal path (`*.env`, `*.pem`; every
    pattern of an `or` that holds one): the sandbox hides the files they match when a command starts."""
    found: dict[str, None] = {}
    denying = [rule for rule in policy.rules if rule.effect in ("deny", "ask")] + list(policy.guards)
    for rule in denying:
        if not any(target.kind == "tool" and glob_match(target.name.text, "read") for target in rule.targets):
            continue
        tests = rule.condition.items if isinstance(rule.condition, ast.Or) else (rule.condition,)
        if not all(isinstance(test, ast.Matches) and ast.argument_field(test) == "file_path" for test in tests):
            continue
        if any(_path(test) is None for test in tests):  # (all literal, `hidden_paths` mounts them as paths)
            found.update(dict.fromkeys(home_glob(test.pattern) for test in tests))
    return tuple(found)


def matching_files(root: str, globs, limit: int | None = None, base: str | None = None) -> tuple[tuple[str, ...], bool]:
    """(the files under `root` a glob matches, whether every entry was looked at): a file matches as a call's
    path does, in its relative form (to `base`, the workspace: `root` when not given) or its absolute form.
    Linked folders are not entered (what they hold is outside, or found through its own path); past `limit`
    entries the search stops and says so."""
    limit = SEARCH_LIMIT if limit is None else limit
    # `*.env`, the common form, is a suffix test in C; any other glob goes through `glob_match`
    ends = tuple(suffix for suffix in map(_suffix, globs) if suffix is not None)
    others = tuple(pattern for pattern in globs if _suffix(pattern) is None)
    found, seen, stack = [], 0, [os.path.realpath(root)]
    base = stack[0] if base is None else base
    below = base.rstrip("/") + "/"  # where a file's relative form starts, when it lies below `base`
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        seen += len(entries)
        if seen > limit:
            return tuple(found), False
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED:
                        stack.append(entry.path)
                    continue
                if entry.is_dir():  # a linked folder: neither entered nor a file
                    continue
            except OSError:
                continue
            if ends and entry.path.endswith(ends):  # both forms end alike
                found.append(entry.path)
                continue
            relative = entry.path[len(below):] if entry.path.startswith(below) else entry.path
            if any(glob_match(pattern, relative) or glob_match(pattern, entry.path) for pattern in others):
                found.append(entry.path)
    return tuple(found), True


def _suffix(pattern: str) -> str | None:
    """`X` for a glob `*X` whose `X` holds no wildcard (it matches exactly the texts ending in `X`), else None."""
    return pattern[1:] if pattern[:1] == "*" and not any(char in WILD for char in pattern[1:]) else None
