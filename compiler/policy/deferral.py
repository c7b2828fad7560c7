"""What a command's access to a whole tree may leave to the OS sandbox. `grep -rn x .` and `git diff` read
every file below a directory because it is there, and `git checkout main` rewrites whichever files differ, not
because the line names them. Where the sandbox hides what a read deny names and keeps read-only what a write
deny names (`protected.enforced_rules`), the rule layer judges such an access without those denies — the
process cannot see or change those files — and keeps judging every file a line names (`cat .env`).
A read glob's files are hidden only inside the workspace (found there, and through its links, when a command
starts): a tree elsewhere, or one the line cannot place, keeps them. In: the rules the sandbox enforces, the
access's canonical pattern, the workspace; out: a `Deferral` (the rules to leave out, and the words a reason
adds) or None."""

from __future__ import annotations

import os

from .. import ast
from .._base.frozen import record
from ..file_pattern import DEEP, FilePattern
from ..paths import path_inside, tilde_glob
from ..user_cache import cache_root
from .core import rule_id
from .protected import fixed_folder, literal_path


@record
class Deferral:
    rules: frozenset  # the read denies, asks and guards the sandbox enforces for this read
    note: str  # ` (the sandbox hides from the command what team/guard:secrets keeps from being read)`


def deferral(
    policy, enforced: tuple[frozenset, frozenset], kind: str, pattern, workspace: str | None
) -> Deferral | None:
    literal, placed = enforced
    if kind == "read":
        within = getattr(pattern, "within", None)
        inside = within is not None and workspace is not None and path_inside(within, workspace)
        rules = literal | placed if inside else literal
    else:
        roots = _write_roots(policy, workspace)
        rules = literal | frozenset(
            rule
            for rule in placed
            if roots is not None
            and all(literal_path(test) or _apart(test, roots) for test in ast.disjuncts(rule.condition))
        )
    if not rules:
        return None
    named = ", ".join(sorted(rule_id(policy, rule) for rule in rules))
    keep = "keeps" if len(rules) == 1 else "keep"
    does = (
        f"hides from the command what {named} {keep} from being read"
        if kind == "read"
        else f"keeps read-only for the command what {named} {keep} from being written"
    )
    return Deferral(frozenset(rules), f" (the sandbox {does})")


def without(policy, rules: frozenset):
    """The policy with `rules` (rules or guards) left out, every other line as written (ids are by line)."""
    from .._base.frozen import replace

    return replace(
        policy,
        rules=tuple(rule for rule in policy.rules if rule not in rules),
        guards=tuple(guard for guard in policy.guards if guard not in rules),
    )


# the devices every sandbox mode lets a command write (`runtime.sandbox.confine.DEVICES`; a test holds them equal)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom")


def _write_roots(policy, workspace: str | None) -> tuple[str, ...] | None:
    """Where a sandboxed command may write, at most (the workspace, the policy's roots, the private temp
    folders — the hook's below the cache, the runtime's in the system's —, the devices), as real paths; None
    without a workspace to place them."""
    if workspace is None:
        return None
    import tempfile  # a write of a whole tree only (a branch switch): a hook's read never loads it

    cache = cache_root()
    roots = (
        workspace,
        *(os.path.expanduser(root.text) for root in policy.writable),
        os.path.join(cache, "dshc", "tmp") if cache else "/",
        tempfile.gettempdir(),
        "/tmp",
        "/var/tmp",
        *DEVICES,
    )
    return tuple(os.path.realpath(root) for root in roots)


def _apart(test, roots: tuple[str, ...]) -> bool:
    """Whether no write root holds a file the test's glob matches (a glob's `*` crosses `/`: `~/.*_history`
    meets `~/.cache/dshc/tmp/x_history`, and `~/.kube/config*` meets no root)."""
    glob = os.path.expanduser(tilde_glob(test.pattern))  # the home as now, as the folder is read
    folder = os.path.realpath(os.path.expanduser(fixed_folder(test))).rstrip("/") + "/"  # type: ignore[type-var, union-attr]  # set: `enforced_rules`
    for root in roots:
        below = root.rstrip("/") + "/"
        if folder.startswith(below):
            return False
        if below.startswith(folder) and (
            FilePattern(((root,),), None).may_match(glob) or FilePattern(((below, DEEP),), None).may_match(glob)
        ):
            return False
    return True
