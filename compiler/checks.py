"""Semantic lint over a resolved program. Each check yields diagnostics; `run_checks` adds none.

CHECKS run in order; none depends on another. Findings are warnings: the program compiles,
but something in it can never take effect.
"""
from __future__ import annotations

import itertools
from typing import Iterator

from . import ast
from .compose import tool_name
from .conditions import Env, evaluate
from .diagnostics import Diagnostic, DshError
from .facts import PLATFORMS
from .policy import RANK
from .request import Request
from .resolve import target_matches_tool


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
                evaluate(mount.condition, Env({"platform": platform, "host": host},
                                              frozenset(s for s, on in zip(services, svc) if on),
                                              frozenset(f for f, on in zip(flags, flg) if on)), False) is True
                for platform in PLATFORMS for host in hosts
                for svc in itertools.product((False, True), repeat=len(services))
                for flg in itertools.product((False, True), repeat=len(flags)))
            if not holds:
                yield Diagnostic("DSH302", f"the condition of mount `{mount.row_name}` can never hold",
                                 mount.condition.span or mount.span, "the row never registers; fix or drop the condition")


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
    for scope in scopes.values():
        inherited = set(mountable)
        parent = scope.parent
        while parent is not None:
            inherited.update(n.text for n in scopes[parent].own)
            parent = scopes[parent].parent
        for name in (*scope.decl.only, *scope.decl.hide):
            if not any(c in name.text for c in "*?") and name.text not in inherited:
                yield Diagnostic("DSH303", f"scope `{scope.name}` restricts `{name.text}`, which it never inherits",
                                 name.span, "no preset or host row registers it, so the restriction has no effect")


def check_shadowed_rules(program) -> Iterator[Diagnostic]:
    """DSH307: a rule that a stricter, unconditional rule over the same tools always overrides."""
    catalog = program.catalog
    for policy in program.resolved.policies.values():
        for rule in policy.decl.rules:
            covered = [t for t in catalog.definitions.values() if _covers(rule, t)]
            if not covered:
                continue
            for other in policy.rules:
                if other is rule or RANK[other.effect] <= RANK[rule.effect]:
                    continue
                if other.condition is not None and other.condition != rule.condition:
                    continue
                if all(_covers(other, t) for t in covered):
                    yield Diagnostic("DSH307", f"`{rule.effect}` rule is shadowed by the stricter `{other.effect}` "
                                     f"rule at {other.span}", rule.span, "it can never decide anything; remove it")
                    break


def _covers(rule, tool) -> bool:
    return any(target_matches_tool(t, tool.name, tool, tool.aliases) for t in rule.targets)


def _reachable_names(program) -> set[str]:
    """Every name visible in some cell of the declared domain (default services)."""
    names: set[str] = set()
    resolved = program.resolved
    for host in resolved.hosts.values():
        presets = sorted(resolved.presets) if host.roster else [None]
        for preset, platform, scope in itertools.product(presets, PLATFORMS, sorted(resolved.scopes)):
            for mode in ("native", "both"):
                try:
                    view = program.view(Request(host=host.name.text, preset=preset, platform=platform, scope=scope,
                                                mode=mode))
                except DshError:
                    continue
                names.update(view.names)
    return names


def check_unreachable_rules(program) -> Iterator[Diagnostic]:
    """DSH308: a rule or guard whose tools are visible in no cell of any host, preset and scope."""
    if not program.resolved.hosts:
        return
    reachable = _reachable_names(program)
    catalog = program.catalog
    for policy in program.resolved.policies.values():
        for item in (*policy.decl.rules, *policy.decl.guards):
            hit = any(_covers(item, tool) and (tool.name in reachable or set(tool.aliases) & reachable)
                      for tool in catalog.definitions.values())
            if not hit:
                label = f"guard `{item.name.text}`" if isinstance(item, ast.Guard) else f"`{item.effect}` rule"
                yield Diagnostic("DSH308", f"{label} can never match: none of its tools is visible in any scope",
                                 item.span, "check the tool names, or mount their packages")


def check_raw_prefix_command_patterns(program) -> Iterator[Diagnostic]:
    """DSH309: `args.command matches "ls*"` also matches `lsblk`; the pattern word `"ls *"` does not."""
    for policy in program.resolved.tables["policy"].values():
        for item in (*policy.rules, *policy.guards):
            for atom in ast.atoms(item.condition):
                if not (isinstance(atom, ast.Matches) and atom.fact.path == ("args", "command")):
                    continue
                pattern = atom.pattern
                stem = pattern[:-1]
                if pattern.endswith("*") and stem and stem[-1] not in " *?" and not any(c in stem for c in "*?"):
                    yield Diagnostic("DSH309", f"pattern `{pattern}` also matches longer program or argument "
                                     f"names (`{stem}x`)", atom.span or item.span,
                                     f"write `\"{stem} *\"` to match `{stem}` and `{stem} …` only")


def check_sandbox_fallback(program) -> Iterator[Diagnostic]:
    """DSH315: the policy lets processes run unconfined where no OS sandbox is available."""
    for policy in program.resolved.tables["policy"].values():
        if policy.fallback is not None and policy.fallback.text == "unsandboxed":
            yield Diagnostic("DSH315", f"policy `{policy.name.text}` runs commands unsandboxed where no OS sandbox "
                             "is available", policy.fallback.span,
                             "without this line such calls fail with SANDBOX_UNAVAILABLE instead")


CHECKS = (
    check_mount_conditions_can_hold,
    check_restrictions_name_inherited_tools,
    check_shadowed_rules,
    check_unreachable_rules,
    check_raw_prefix_command_patterns,
    check_sandbox_fallback,
)


def run_checks(program, paths: set[str] | None = None) -> Iterator[Diagnostic]:
    """Run every check; with `paths`, keep only findings located in those files."""
    for check in CHECKS:
        for diag in check(program):
            if paths is None or diag.where in paths:
                yield diag
