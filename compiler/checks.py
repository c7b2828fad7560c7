"""Semantic lint over a resolved program. Each check yields diagnostics; `run_checks` adds none.

CHECKS run in order; none depends on another. Findings are warnings: the program compiles,
but something in it can never take effect.
"""

from __future__ import annotations

import itertools
from typing import Iterator

from . import ast
from .conditions import SHELL_FIELDS, Env, evaluate
from .diagnostics import Diagnostic, DshError
from .facts import PLATFORMS
from .paths import never_canonical
from .policy import RANK
from .request import Request
from .resolve import own_tool_name, target_matches_tool, tool_name


def _condition_atoms(expr, kind) -> set[str]:
    if kind == "flag":
        return {a.name.text for a in ast.atoms(expr) if isinstance(a, ast.Flag)}
    return {a.fact.path[0] for a in ast.atoms(expr) if isinstance(a, ast.Has) and len(a.fact.path) == 1}


def check_mount_conditions_can_hold(program) -> Iterator[Diagnostic]:
    """DSH302: a mount condition false for every platform, host and service/flag combination."""
    hosts = sorted(program.resolved.hosts) or [None]
    for preset in program.resolved.tables["preset"].values():
        for mount in preset.mounts:
            if mount.condition is None:
                continue
            services = sorted(_condition_atoms(mount.condition, "service"))
            flags = sorted(_condition_atoms(mount.condition, "flag"))
            if len(services) + len(flags) > 12:
                continue  # too many atoms to enumerate; say nothing rather than guess
            holds = any(
                evaluate(
                    mount.condition,
                    Env(
                        {"platform": platform, "host": host},
                        frozenset(s for s, on in zip(services, svc) if on),
                        frozenset(f for f, on in zip(flags, flg) if on),
                    ),
                    False,
                )
                is True
                for platform in PLATFORMS
                for host in hosts
                for svc in itertools.product((False, True), repeat=len(services))
                for flg in itertools.product((False, True), repeat=len(flags))
            )
            if not holds:
                yield Diagnostic(
                    "DSH302",
                    f"the condition of mount `{mount.row_name}` can never hold",
                    mount.condition.span or mount.span,
                    "the row never registers; fix or drop the condition",
                )


def _mountable_names(program) -> set[str]:
    names: set[str] = set()
    catalog = program.catalog
    for preset in program.resolved.tables["preset"].values():
        for mount in preset.mounts:
            package = catalog.package_by_id.get(mount.package.text)
            for tool in package.tools if package else ():
                names.add(tool_name(tool, mount))
    return names


def check_restrictions_name_inherited_tools(program) -> Iterator[Diagnostic]:
    """DSH303: an exact name in `only`/`hide` that no row on any chain can register."""
    mountable = _mountable_names(program)
    scopes = program.resolved.scopes
    ancestors_own = _ancestors_own(scopes)
    for scope in scopes.values():
        inherited = ancestors_own[scope.name]
        for name in (*scope.decl.only, *scope.decl.hide):
            if not any(c in name.text for c in "*?") and name.text not in mountable and name.text not in inherited:
                yield Diagnostic(
                    "DSH303",
                    f"scope `{scope.name}` restricts `{name.text}`, which it never inherits",
                    name.span,
                    "no preset or host row registers it, so the restriction has no effect",
                )


def _ancestors_own(scopes) -> dict[str, frozenset[str]]:
    """Per scope, the `own` names of every scope above it on its parent chain, each built on its parent's."""
    found: dict[str, frozenset[str]] = {}
    for name in scopes:
        pending = []
        while name is not None and name not in found:
            pending.append(name)
            name = scopes[name].parent
        for item in reversed(pending):  # the root first; parent chains are acyclic once resolved
            parent = scopes[item].parent
            found[item] = (
                found[parent] | {own_tool_name(n.text) for n in scopes[parent].own}
                if parent is not None
                else frozenset()
            )
    return found


def check_shadowed_rules(program) -> Iterator[Diagnostic]:
    """DSH307: a rule that a stricter, unconditional rule over the same tools always overrides.

    Tool sets are bitmasks over the catalog, so a policy costs one pass over its rules plus one
    superset test per distinct (effect, condition, tool set) — not a test per pair of rules.
    """
    masks = _CoverMasks(program.catalog)
    for policy in program.resolved.policies.values():
        # per (rank, condition): the first rule (in policy order) of each distinct tool set
        firsts: dict[tuple, dict[int, tuple[int, ast.Rule]]] = {}
        for index, other in enumerate(policy.rules):
            group = firsts.setdefault((RANK[other.effect], other.condition), {})
            group.setdefault(masks.of(other), (index, other))
        answers: dict[tuple, ast.Rule | None] = {}
        for rule in policy.decl.rules:
            covered = masks.of(rule)
            if not covered:
                continue
            key = (RANK[rule.effect], rule.condition, covered)
            if key not in answers:
                answers[key] = _first_stricter_cover(firsts, *key)
            other = answers[key]
            if other is not None:
                yield Diagnostic(
                    "DSH307",
                    f"`{rule.effect}` rule is shadowed by the stricter `{other.effect}` rule at {other.span}",
                    rule.span,
                    "it can never decide anything; remove it",
                )


def _first_stricter_cover(firsts, rank: int, condition, covered: int):
    """The earliest rule stricter than `rank`, unconditional or on the same condition, covering every tool."""
    groups = [
        firsts.get((other_rank, other_condition))
        for other_rank in set(RANK.values())
        if other_rank > rank
        for other_condition in {None, condition}
    ]
    found = [first for group in groups if group for mask, first in group.items() if mask & covered == covered]
    return min(found, key=lambda pair: pair[0])[1] if found else None


class _CoverMasks:
    """Which catalog tools a rule's targets cover, as a bitmask; each distinct target is matched once."""

    def __init__(self, catalog):
        self.tools = tuple(catalog.definitions.values())
        self._targets: dict[tuple[str, str], int] = {}

    def of(self, item) -> int:
        mask = 0
        for target in item.targets:
            key = (target.kind, target.name.text)
            found = self._targets.get(key)
            if found is None:
                found = self._targets[key] = sum(
                    1 << bit
                    for bit, tool in enumerate(self.tools)
                    if target_matches_tool(target, tool.name, tool, tool.aliases)
                )
            mask |= found
        return mask

    def named(self, names: set[str]) -> int:
        return sum(1 << bit for bit, tool in enumerate(self.tools) if tool.name in names or set(tool.aliases) & names)


def _reachable_names(program) -> set[str]:
    """Every name visible in some cell of the declared domain (default services)."""
    names: set[str] = set()
    resolved = program.resolved
    for host in resolved.hosts.values():
        presets = sorted(resolved.presets) if host.roster else [None]
        for preset, platform, scope in itertools.product(presets, PLATFORMS, sorted(resolved.scopes)):
            for mode in ("native", "both"):
                try:
                    view = program.view(
                        Request(host=host.name.text, preset=preset, platform=platform, scope=scope, mode=mode)
                    )
                except DshError:
                    continue
                names.update(view.names)
    return names


def check_unreachable_rules(program) -> Iterator[Diagnostic]:
    """DSH308: a rule or guard whose tools are visible in no cell of any host, preset and scope."""
    if not program.resolved.hosts:
        return
    masks = _CoverMasks(program.catalog)
    reachable = masks.named(_reachable_names(program))
    for policy in program.resolved.policies.values():
        for item in (*policy.decl.rules, *policy.decl.guards):
            if not masks.of(item) & reachable:
                label = f"guard `{item.name.text}`" if isinstance(item, ast.Guard) else f"`{item.effect}` rule"
                yield Diagnostic(
                    "DSH308",
                    f"{label} can never match: none of its tools is visible in any scope",
                    item.span,
                    "check the tool names, or mount their packages",
                )


def check_raw_prefix_command_patterns(program) -> Iterator[Diagnostic]:
    """DSH309: `args.command matches "ls*"` also matches `lsblk`; the pattern word `"ls *"` does not."""
    for policy in program.resolved.tables["policy"].values():
        for item in (*policy.rules, *policy.guards):
            for atom in ast.atoms(item.condition):
                if not (isinstance(atom, ast.Matches) and atom.fact.path == ("args", "command")):
                    continue
                pattern = atom.pattern
                stem = pattern[:-1]
                # a stem ending in punctuation (`git log:*`, `npm run test-*`, `PATH=*`, `src/*`) is a deliberate
                # argument prefix, a value or a path going on: not a longer name
                if (
                    pattern.endswith("*")
                    and stem
                    and (stem[-1].isalnum() or stem[-1] == "_")
                    and not any(c in stem for c in "*?")
                ):
                    yield Diagnostic(
                        "DSH309",
                        f"pattern `{pattern}` also matches longer program or argument names (`{stem}x`)",
                        atom.span or item.span,
                        f'write `"{stem} *"` to match `{stem}` and `{stem} …` only',
                    )


def check_path_patterns_can_match(program) -> Iterator[Diagnostic]:
    """DSH316: a glob on a path argument that no canonical path can match (`./src/*`, `~nobody/x`, `src/`):
    arguments are compared in canonical form (`paths`), so such a rule never decides anything."""
    # only path parameters arrive canonical: a URL's `https://` is no empty path part
    path_fields = {name for tool in program.catalog.definitions.values() for name in tool.path_parameters}
    for policy in program.resolved.tables["policy"].values():
        for item in (*policy.rules, *policy.guards):
            for atom in ast.atoms(item.condition):
                field = ast.argument_field(atom) if isinstance(atom, ast.Matches) else None
                if field is None or field in SHELL_FIELDS or field not in path_fields:
                    continue
                why = never_canonical(atom.pattern)
                if why:
                    yield Diagnostic(
                        "DSH316",
                        f"pattern `{atom.pattern}` on `args.{field}` can never match: {why}",
                        atom.span or item.span,
                        "path arguments are compared relative to the workspace root inside it, "
                        "absolute outside it; `~/` and `$HOME/` name your home directory",
                    )


def check_sandbox_fallback(program) -> Iterator[Diagnostic]:
    """DSH315: the policy lets processes run unconfined where no OS sandbox is available."""
    for policy in program.resolved.tables["policy"].values():
        if policy.fallback is not None and policy.fallback.text == "unsandboxed":
            yield Diagnostic(
                "DSH315",
                f"policy `{policy.name.text}` runs commands unsandboxed where no OS sandbox is available",
                policy.fallback.span,
                "without this line such calls fail with SANDBOX_UNAVAILABLE instead",
            )


def check_text_denies_the_sandbox_could_hold(program) -> Iterator[Diagnostic]:
    """DSH317: a deny on a command's text whose resource (the network, a file) the sandbox could hold for
    every process, where a rule of another form would let it (`compiler.enforcement`)."""
    from .enforcement import text_deny_hints

    seen = set()
    for policy in program.resolved.policies.values():
        for span, what, way in text_deny_hints(policy):
            if span is not None and span not in seen:
                seen.add(span)
                yield Diagnostic("DSH317", f"{what}: another program or spelling walks around it", span, way)


CHECKS = (
    check_mount_conditions_can_hold,
    check_restrictions_name_inherited_tools,
    check_shadowed_rules,
    check_unreachable_rules,
    check_raw_prefix_command_patterns,
    check_path_patterns_can_match,
    check_sandbox_fallback,
    check_text_denies_the_sandbox_could_hold,
)


def run_checks(program, paths: set[str] | None = None) -> Iterator[Diagnostic]:
    """Run every check; with `paths`, keep only findings located in those files."""
    for check in CHECKS:
        for diag in check(program):
            if paths is None or diag.where in paths:
                yield diag
