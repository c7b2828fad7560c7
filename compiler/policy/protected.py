"""The paths a policy forbids writing inside the writable roots, for the OS sandbox to keep read-only, and
those it forbids reading, for the sandbox to hide (with the files its read-deny globs match, found when a
command starts: `hidden_globs`, `matching_files`).

`deny write, edit when args.file_path matches ".claude/*"` is enforced where a call is decided, but a
process writes files no rule sees (`tar xf a.tar`, a build script, `python3 x.py`): the sandbox keeps
`.claude` read-only too (`runtime/sandbox/readonly.py`). Only what the rule alone decides becomes a path:
a `deny` or `ask` (a sandboxed process cannot ask) or a guard on the `write` tool whose whole condition is
`args.file_path matches "DIR/*"` (or `"DIR/**"`, or a literal `"FILE"`), or an `or` holding such a test (each
test of an `or` decides alone). A rule with another condition (`… and plan_mode`) would be enforced where it
does not hold, and a glob without a literal directory (`*.env`) names no path: both are left to the rules
(the sandbox hides the files such a read glob matches when a command starts: `hidden_globs`).
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
    for _, tests in _denying(policy, tool):  # one test of an `or` decides alone: its path is the rule's
        found.update(dict.fromkeys(path for path in map(literal_path, tests) if path))
    return tuple(found)


def _denying(policy, tool: str):
    """(rule, the tests of its condition's `or`) for each deny, ask and guard naming `tool`."""
    for rule in [rule for rule in policy.rules if rule.effect in ("deny", "ask")] + list(policy.guards):
        if any(target.kind == "tool" and glob_match(target.name.text, tool) for target in rule.targets):
            yield rule, ast.disjuncts(rule.condition)


def literal_path(test) -> str | None:
    """`DIR/` for `args.file_path matches "DIR/*"` (a directory: the trailing `/` says so), FILE for a literal
    glob; None for any other test."""
    if not isinstance(test, ast.Matches) or ast.argument_field(test) != "file_path":
        return None
    pattern = tilde_glob(test.pattern)
    for tail in ("/**", "/*"):
        if pattern.endswith(tail) and not any(char in pattern[: -len(tail)] for char in WILD):
            return pattern[: -len(tail)].rstrip("/") + "/"
    return pattern if pattern and not any(char in pattern for char in WILD) else None


SEARCH_LIMIT = 50_000  # entries a command's start may look through for the files a read-deny glob names
# git's object store: compressed objects only, and most of a repository's entries (a search that entered it would
# stop short on any large one); what git holds of a hidden file is hidden with the store (`gitstore`)
SKIPPED = ".git/objects"


def hidden_globs(policy) -> tuple[str, ...]:
    """The globs of the read denies (or asks, or guards) that name no literal path (`*.env`, `*.pem`; every
    pattern of an `or` that holds one): the sandbox hides the files they match when a command starts."""
    found: dict[str, None] = {}
    for _, tests in _globbed(policy):
        found.update(dict.fromkeys(home_glob(test.pattern) for test in tests))
    return tuple(found)


def _globbed(policy):
    """The read denies `hidden_globs` takes its globs from: every test a file-path glob, some not a path."""
    for rule, tests in _denying(policy, "read"):
        if all(isinstance(test, ast.Matches) and ast.argument_field(test) == "file_path" for test in tests) and any(
            literal_path(test) is None for test in tests
        ):  # (all literal: `hidden_paths` mounts them)
            yield rule, tests


def sandbox_hides(policy) -> bool:
    """Whether every command the policy lets run does so in a sandbox that hides what its read denies name
    (`hidden_paths`, `hidden_globs`) and keeps what its write denies name read-only (`protected_paths`): it
    declares a confining mode and never runs a command unconfined (a host with no mechanism able to do both
    refuses the command: `runtime.sandbox.confine.missing`)."""
    return (
        policy is not None
        and policy.sandbox is not None
        and policy.sandbox.text != "danger-full-access"
        and not (policy.fallback is not None and policy.fallback.text == "unsandboxed")
    )


def enforced_rules(policy, kind: str) -> tuple[frozenset, frozenset]:
    """The denies, asks and guards on `kind` ("read" | "write") the sandbox enforces for processes: (those it
    enforces wherever their files are — each test a literal path: hidden, or kept read-only —, those it may
    enforce depending on the workspace — read globs, hidden inside it when a command starts; write globs under
    a fixed folder, read-only where no write root is near it: `deferral`); both empty unless `sandbox_hides`. The rule layer may leave a command's access to a whole tree to the sandbox for
    them (`policy.deferral`)."""
    if not sandbox_hides(policy):
        return frozenset(), frozenset()
    literal = frozenset(rule for rule, tests in _denying(policy, kind) if all(map(literal_path, tests)))
    if kind == "read":
        return literal, frozenset(rule for rule, _ in _globbed(policy))
    # a write glob under a fixed folder (`~/.kube/config*`) is the OS's where no write root is near that folder
    return literal, frozenset(
        rule
        for rule, tests in _denying(policy, kind)
        if rule not in literal and all(literal_path(test) or fixed_folder(test) for test in tests)
    )


def fixed_folder(test) -> str | None:
    """The folder every file a file-path test matches lies below, when it is absolute or the home's (`~/.kube`
    for `matches "~/.kube/config*"`; a glob's `*` may cross `/`, so at any depth), `~` kept; else None."""
    if not isinstance(test, ast.Matches) or ast.argument_field(test) != "file_path":
        return None
    pattern = tilde_glob(test.pattern)
    first = min((at for at in map(pattern.find, "*?[{\\") if at >= 0), default=len(pattern))
    folder = pattern[:first].rpartition("/")[0]
    return folder if folder.startswith(("/", "~/")) or folder == "~" else None


def matching_files(root: str, globs, limit: int | None = None, base: str | None = None) -> tuple[tuple[str, ...], bool]:
    """(the files under `root` a glob matches, whether every entry was looked at): a file matches as a call's
    path does, in its relative form (to `base`, the workspace: `root` when not given) or its absolute form.
    A link is followed: `grep -R` and a build read through it, so a linked folder is searched (once, by its
    real path) and a linked file matches by its own name or its target's; a match is given as its real path
    (what a mount hides). Past `limit` entries the search stops and says so."""
    limit = SEARCH_LIMIT if limit is None else limit
    # `*.env`, the common form, is a suffix test in C; any other glob goes through `glob_match`
    ends = tuple(suffix for suffix in map(_suffix, globs) if suffix is not None)
    others = tuple(pattern for pattern in globs if _suffix(pattern) is None)
    start = os.path.realpath(root)
    base = start if base is None else base
    below = base.rstrip("/") + "/"  # where a file's relative form starts, when it lies below `base`

    def matches(path: str) -> bool:
        if ends and path.endswith(ends):  # both forms end alike
            return True
        relative = path[len(below) :] if path.startswith(below) else path
        return any(glob_match(pattern, relative) or glob_match(pattern, path) for pattern in others)

    found: dict[str, None] = {}
    seen, stack, entered = 0, [(start, start)], {start}  # (the folder as reached, its real path)
    while stack:
        folder, real = stack.pop()
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
                    if not entry.path.endswith(SKIPPED):
                        stack.append((entry.path, os.path.join(real, entry.name)))
                    continue
                linked = entry.is_symlink()
                target = os.path.realpath(entry.path) if linked else os.path.join(real, entry.name)
                if linked and entry.is_dir():
                    if target not in entered:  # a cycle, or a folder searched already, is searched once
                        entered.add(target)
                        stack.append((entry.path, target))
                    continue
            except OSError:
                continue
            if matches(entry.path) or (linked or real != folder) and matches(target):
                found[target] = None
    return tuple(found), True


def _suffix(pattern: str) -> str | None:
    """`X` for a glob `*X` whose `X` holds no wildcard (it matches exactly the texts ending in `X`), else None."""
    return pattern[1:] if pattern[:1] == "*" and not any(char in WILD for char in pattern[1:]) else None
