"""A call → the parts it is decided as (canonical path arguments; a shell line's simple commands
and the files it redirects, as `write`/`read` calls of those paths); part decisions → the strictest.
"""

# Each simple command is decided as if it were the whole call (its `command` is a `SegmentArg`),
# so an allow holds when every segment is covered by *some* allow rule. A wrapper (`sudo rm`)
# yields both `sudo rm` and `rm`: a deny of either decides, an allow needs both. What a runner
# runs (`uv run rm x`) is deny-only: a deny or ask matching it decides, an allow of the runner's
# line covers it. A redirected file carries the shell call's escalation fields, so workspace rules
# apply to it as to a write. A command a program's option grammar reads is also read by its options
# (`rm -fr /` as -f -r and /): deny-only, and counted only where stricter than the command as written.
from __future__ import annotations

from _collections_abc import (
    Mapping,
)  # collections.abc's own source, loaded at start-up (collections.abc loads collections)

from ..catalog import ToolDef
from ..conditions import SHELL_FIELDS, SegmentArg
from ..file_pattern import ANY, canonical_args, pattern_path
from ..paths import canonical_path
from .decision import Decision, Verdict
from .effects import RANK

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Callable


class Stricter:
    """A deny-only part that counts only where it is stricter than part `part` of the same call: a simple
    command read by its option grammar adds only what its options make a deny or ask meet."""

    __slots__ = ("part",)

    def __init__(self, part: int) -> None:
        self.part = part


FILE_TOOLS = {"read": "read", "write": "write"}  # a file access kind → the tool it is decided as
CARRIED = ("sandbox_permissions", "justification")  # escalation fields a file access inherits


def canonical(tool: ToolDef | None, args, workspace: str | None):
    """`args` with the tool's path parameters resolved against the workspace."""
    return canonical_args(args, tool.path_parameters if tool is not None else (), workspace)


def with_paths(decision: Verdict, before, after) -> Verdict:
    """Name the canonical form of every path argument canonicalisation changed, in the reason."""
    if after is before or not isinstance(after, Mapping):
        return decision
    changed = [f"`{k}` is `{after[k]}`" for k in after if isinstance(before.get(k), str) and before[k] != after[k]]
    if not changed:
        return decision
    return Decision(
        decision.effect,
        f"{decision.reason} ({', '.join(changed)})",
        build=lambda: decision.deciding,
        gate=decision.gate,
        matched=decision.matched,
    )


def shell_parts(
    tool_is_shell: bool,
    args,
    workspace: str | None,
    tool_for: Callable[[str], ToolDef | None] | None,
    analysed: Callable | None = None,
    names: Callable[[str, ToolDef | None], bool] | None = None,
    optioned: frozenset | None = None,
    deferred: Callable | None = None,
):
    """[(label, tool name or None for the call's own tool, tool, args, deny-only, deferral)] or None when not
    split.

    `analysed(command)`: the command's analysis from a cache of the caller's (a policy's), else parsed here.
    `names(tool name, tool)`: whether the policy has a rule or guard for that tool. A file the command reads
    is a part only where the policy has one for `read`: a policy that says nothing of reads leaves `cat x`
    to its rules on the command, as it leaves the read tool to its default. `optioned`: the programs whose
    commands are also read by their options (`PolicyCore.option_programs`; None: every program).
    `deferred(kind, pattern, workspace)`: for an access to a whole tree (`FileAccess.tree`), the rules the
    sandbox enforces for it (`deferral.Deferral`) or None; a part's deferral is None when it is judged whole.
    """
    if not tool_is_shell or not isinstance(args, Mapping):
        return None
    field = next((f for f in SHELL_FIELDS if isinstance(args.get(f), str)), None)
    if field is None:
        return None
    command = args[field]
    if isinstance(command, SegmentArg):
        return None  # already one part of a split call
    if analysed is None:
        from ..shell import analyse  # the shell analyser loads only for shell calls

        analysed = analyse
    found = analysed(command)
    if found is None:  # it does not parse: one command that may run anything
        from ..shell import Analysis, Segment

        found = Analysis((Segment((command,), True, "the command does not parse"),))
    if not (found.segments or found.files):
        return None  # empty: decided on the text
    parts: list[tuple] = [
        (f"`{seg.text}`", None, None, {**args, field: SegmentArg(command, seg)}, seg.deny_only, None)
        for seg in found.segments
    ]
    if any(seg.redirects for seg in found.segments):  # a deny of `*.claude/*` meets `echo x >> .claude/f`
        from ..shell import with_redirections

        parts += [
            (f"`{full.text}`", None, None, {**args, field: SegmentArg(command, full)}, True, None)
            for full in (with_redirections(seg) for seg in found.segments if seg.redirects)
        ]
    if optioned is None or optioned:  # `rm -fr /` also read as its options, for a deny of `rm -rf /*`
        from ..shell import with_options

        parts += [
            (
                f"`{read.text}` (read as `{read.options.text}`)",  # type: ignore[union-attr]  # with_options sets it
                None,
                None,
                {**args, field: SegmentArg(command, read)},
                Stricter(at),
                None,
            )
            for at, read in enumerate(map(with_options, found.segments))
            if read is not None and (optioned is None or read.options.program in optioned)  # type: ignore[union-attr]  # as above
        ]
    base = args.get("workdir") if isinstance(args.get("workdir"), str) else None
    carried = {k: args[k] for k in CARRIED if k in args}
    accesses = [
        (access.kind, access.path, access.pattern, f" ({access.why})" if access.why else "", access.tree)
        for access in found.files
    ]
    hidden = next((seg for seg in found.segments if seg.opaque), None)
    if hidden is not None:  # what runs is not known: it may read and write any file
        why = f" (`{hidden.text}`: {hidden.reason})" if hidden.reason else f" (`{hidden.text}`)"
        accesses += [("read", "", (ANY,), why, False), ("write", "", (ANY,), why, False)]
    named: dict = {}
    for kind, text, pattern, unseen, tree in accesses:  # `unseen`: why an opaque command's access is any file
        name = FILE_TOOLS[kind]
        if (kind == "read" or unseen) and names is not None:  # a part only where the policy has a rule on it
            if name not in named:
                named[name] = names(name, tool_for(name) if tool_for else None)
            if not named[name]:
                continue
        path = pattern_path(pattern, workspace, base) if pattern else canonical_path(text, workspace, base)
        left = deferred(kind, path, workspace) if tree and deferred is not None else None
        parts.append(
            (
                f"{kind} of `{path}`{unseen}{left.note if left else ''}",
                name,
                tool_for(name) if tool_for else None,
                {"file_path": path, **carried},
                False,
                left,
            )
        )
    return parts


# a search tool reads the file its path argument names (and, a directory, every file below it): the
# path argument by definition
SEARCHES = {"tool-fs-search/grep": "path"}


def search_parts(
    tool: ToolDef | None,
    args,
    workspace: str | None,
    tool_for: Callable[[str], ToolDef | None] | None,
    names: Callable[[str, ToolDef | None], bool] | None = None,
):
    """[(label, "read", tool, args)]: the read of the path a search tool's call names, where the policy has
    a rule on `read` (as a shell command's reads are parts): `deny read … "*.env"` keeps `grep` on `.env`
    from printing its lines. None when the tool searches nothing or the policy says nothing of reads.
    The files below a directory are judged where the search runs, each as a read (the runtime's
    `ToolContext.may_read`), not here: a read of `src/**` would not pass an allow that says `not … matches
    "*/../*"`, as a file pattern's `**` is not known to exclude `..`."""
    field = SEARCHES.get(tool.definition) if tool is not None else None
    if field is None or not isinstance(args, Mapping):
        return None
    read_tool = tool_for("read") if tool_for else None
    if names is not None and not names("read", read_tool):
        return None
    given = args.get(field)
    path = canonical_path(given if isinstance(given, str) and given else ".", workspace)
    return [(f"read of `{path}`", "read", read_tool, {"file_path": path})]


def decide_parts(name: str, tool: ToolDef | None, parts, decide_part: Callable) -> Verdict:
    """A split shell line (`shell_parts`) decided: each part by `decide_part(name, tool, args, deferral)` (the
    line's own name and tool where the part is the whole line), then `combine`d. The reference evaluator and
    the index share it, each with its own `decide_part`."""
    return combine(
        [
            (label, decide_part(part or name, part_tool if part else tool, part_args, left), deny_only)
            for label, part, part_tool, part_args, deny_only, left in parts
        ]
    )


def decide_reads(name: str, own: Verdict, reads, decide_read: Callable) -> Verdict:
    """A search call (`search_parts`) decided: its own decision and each read's, by `decide_read(name, tool,
    args)`, `combine`d."""
    return combine(
        [
            (f"`{name}`", own, False),
            *((label, decide_read(part, part_tool, part_args), False) for label, part, part_tool, part_args in reads),
        ]
    )


def combine(parts: list[tuple[str, Verdict, bool | Stricter]]) -> Verdict:
    """The strictest part decides (deny > ask > conditional > allow); its reason names the part. A
    deny-only part counts only when a rule made it stricter than allow (a `conditional` counts
    however made: some deny or ask may match), a `Stricter` one only when also stricter than its part
    counts (a runner's command whose text met no rule counts for nothing)."""
    counts = [
        not deny_only or decision.effect != "allow" and (decision.matched or decision.effect == "conditional")
        for _, decision, deny_only in parts
    ]
    decided = [
        (label, decision)
        for (label, decision, deny_only), counted in zip(parts, counts)
        if counted
        and (
            type(deny_only) is not Stricter
            or not counts[deny_only.part]
            or RANK[decision.effect] > RANK[parts[deny_only.part][1].effect]
        )
    ]
    if len(decided) == 1:
        return decided[0][1]
    label, worst = max(decided, key=lambda pair: RANK[pair[1].effect])
    if worst.effect == "allow":
        return Decision(
            "allow",
            f"every part is allowed: {', '.join(lbl for lbl, _ in decided)}",
            build=lambda: _merged(d for _, d in decided),
        )
    return Decision(
        worst.effect, f"{label}: {worst.reason}", build=lambda: worst.deciding, gate=worst.gate, matched=worst.matched
    )


def _merged(decisions) -> tuple:
    seen: dict = {}
    for decision in decisions:
        for item in decision.deciding:
            seen.setdefault(item[0], item)
    return tuple(seen.values())
