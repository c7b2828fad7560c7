"""Exhaustive safety checks over the finite domain of a program — proofs, or witnesses.

The domain: hosts × presets × platforms × subsets of the services conditions can see ×
scopes × modes × plan on/off × every reachable tool × the argument classes the policies'
own patterns induce. Three properties:

  narrowing      a child scope never sees or may do more than its parent;
  monotonicity   every deny rule and guard only ever makes decisions stricter, and removing
                 a host service never makes a tool visible;
  against OLD    nothing the new program allows was denied or asked by the old one, and no
                 ask became an allow.

A policy that tests the session (`session.read`, …) is decided in every session state its tests can tell
apart (`session_states`): the strictest one (no log) and a concrete one for each class of earlier calls. A
session is taken to be whatever the log says, independent of the call being decided.

A violation comes with the first concrete witness in a fixed order. Where argument classes
are not exact the report says so and never claims a proof.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from . import ast
from .argclasses import argument_classes
from .conditions import Env
from .diagnostics import DshError
from .facts import PLATFORMS
from ._base.frozen import replace
from .policy import Verdict, decide, widens_fail_closed
from .policy.core import PolicyCore
from .request import Request
from .resolve import EffectivePolicy, own_tool_name, target_matches_tool
from .session_states import describe, session_states

MODES = ("native", "code", "both")
WORKSPACE = "/workspace"


@dataclass
class Violation:
    property: str
    message: str
    witness: dict


@dataclass
class Report:
    cells: int = 0
    decisions: int = 0
    exact: bool = True
    notes: list[str] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "proved": not self.violations and self.exact,
            "exact": self.exact,
            "cells": self.cells,
            "decisions": self.decisions,
            "notes": self.notes,
            "violations": [
                {"property": v.property, "message": v.message, "witness": v.witness} for v in self.violations
            ],
        }


def _relevant_services(program) -> list[str]:
    """Services whose presence a condition or a tool-level requirement can see."""
    found = {"sandbox"}
    for tool in program.catalog.definitions.values():
        found.update(tool.requires)
    conditions = [m.condition for p in program.resolved.tables["preset"].values() for m in p.mounts]
    conditions += [i.condition for p in program.resolved.policies.values() for i in (*p.rules, *p.guards)]
    for condition in conditions:
        for atom in ast.atoms(condition):
            if isinstance(atom, ast.Has) and len(atom.fact.path) == 1:
                found.add(atom.fact.path[0])
    return sorted(found)


def cells(program):
    """Every request of the domain, in a fixed order (the first violation is the minimal witness)."""
    resolved = program.resolved
    relevant = _relevant_services(program)
    for host_name in sorted(resolved.hosts):
        host = resolved.hosts[host_name]
        presets = sorted(resolved.presets) if host.roster else [None]
        platforms = sorted(p.text for p in host.platforms) or list(PLATFORMS)
        for preset, platform, off in itertools.product(presets, platforms, _subsets(relevant)):
            for scope, mode in itertools.product(sorted(resolved.scopes), MODES):
                yield Request(
                    host=host_name, preset=preset, platform=platform, without_services=off, scope=scope, mode=mode
                )


def _subsets(items):
    for size in range(len(items) + 1):
        for combo in itertools.combinations(items, size):
            yield frozenset(combo)


def _reachable(program, request) -> dict | None:
    try:
        view = program.view(request)
    except DshError:
        return None
    entries = {e.name: e for e in (view.sdk or ())}
    entries.update({e.name: e for e in view.tools})
    return entries


def _witness(request: Request, tool: str | None = None, arguments=None, plan=False, policy=None, session=None) -> dict:
    out = {
        "host": request.host,
        "preset": request.preset,
        "platform": request.platform,
        "scope": request.scope,
        "mode": request.mode,
        "without": sorted(request.without_services),
        "plan": plan,
    }
    if session is not None:
        out["session"] = describe(session)
    if policy is not None:
        out["policy"] = policy
    if tool is not None:
        out["tool"] = tool
    if arguments is not None:
        out["arguments"] = arguments
    return out


class ClassDecider:
    """Decisions for every argument class of a tool, cached per (policy, tool, request facts).

    Shared by `verify` and `diff`: both compare programs call by call over the classes the
    policies' own patterns induce. Inexact classes and their notes are recorded on `report`.
    """

    def __init__(self, report: Report | None = None):
        self.report = report if report is not None else Report()
        self.cache: dict = {}
        self.classes: dict = {}
        # id(policy) -> (policy, its PolicyCore): a core remembers the policy's target index and option
        # programs, which every one of the thousands of calls decided here would otherwise build again
        self.cores: dict[int, tuple] = {}

    def classes_for(self, name: str, tool, policies) -> tuple[dict, ...]:
        key = (name, tuple(id(p) for p in policies))
        found = self.classes.get(key)
        if found is None:
            conditions = [
                item.condition
                for policy in policies
                for item in (*policy.rules, *policy.guards)
                if any(target_matches_tool(t, name, tool, tool.aliases if tool else ()) for t in item.targets)
            ]
            command_classes = {c.name: c for policy in policies for c in policy.classes}
            classes = argument_classes(
                conditions, shell_tool=tool is not None and "any-process" in tool.risk, command_classes=command_classes
            )
            if not classes.exact:
                self.report.exact = False
            for note in classes.notes:
                note = f"`{name}`: {note}"
                if note not in self.report.notes:
                    self.report.notes.append(note)
            found = self.classes[key] = classes.witnesses
        return found

    def without(self, policy: EffectivePolicy, item) -> EffectivePolicy:
        """The policy minus one rule or guard; kept alive here so cache keys by identity stay valid."""
        key = ("without", id(policy), id(item))
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = replace(
                policy,
                rules=tuple(r for r in policy.rules if r is not item),
                guards=tuple(g for g in policy.guards if g is not item),
            )
        return found

    def mentioned(self, policy: EffectivePolicy) -> tuple[frozenset, frozenset, frozenset]:
        """(facts, services, flags) the policy's conditions read: nothing else can change its decisions."""
        key = ("mentioned", id(policy))
        found = self.cache.get(key)
        if found is None:
            facts, services, flags = set(), set(), set()
            items: tuple[ast.Item, ...] = (*policy.rules, *policy.guards)
            for item in items:
                for atom in ast.atoms(item.condition):
                    if isinstance(atom, ast.Flag):
                        flags.add(atom.name.text)
                    elif isinstance(atom, ast.Has) and len(atom.fact.path) == 1:
                        services.add(atom.fact.path[0])
                    elif atom.fact.path[0] not in ("args", "call"):  # read off the call, not the request
                        facts.add(atom.fact.dotted)
            found = self.cache[key] = (frozenset(facts), frozenset(services), frozenset(flags))
        return found

    def states_for(self, policies, name: str, tool) -> tuple:
        """The session states that tell apart the session tests of the policies' rules that may decide `name`
        (`(None,)`, the strictest, alone when none tests the session); inexact ones are recorded on the report."""
        key = ("states", tuple(id(p) for p in policies), name)
        found = self.cache.get(key)
        if found is None:
            aliases = tool.aliases if tool else ()
            states = session_states(
                item.condition
                for policy in policies
                for item in (*policy.rules, *policy.guards)
                if _may_decide(item, name, tool, aliases)
            )
            if not states.exact:
                self.report.exact = False
            self.report.notes.extend(note for note in states.notes if note not in self.report.notes)
            found = self.cache[key] = states.states
        return found

    def context(self, policy: EffectivePolicy, composition, plan: bool) -> tuple:
        """What of a request the policy's decisions can see: requests alike here are decided alike."""
        facts, services, flags = self.mentioned(policy)
        env = composition.env()
        seen = tuple(sorted((f, env.facts.get(f)) for f in facts - {"plan_mode"}))
        return (
            id(policy),
            seen,
            plan if "plan_mode" in facts else None,
            composition.services & services,
            env.flags & flags,
            composition.approval,
        )

    def first_time(self, *context) -> bool:
        """Whether these contexts are met for the first time (a check done in equal ones finds the same)."""
        key = ("checked", *context)
        if key in self.cache:
            return False
        self.cache[key] = True
        return True

    def decisions(
        self, policy: EffectivePolicy, composition, name: str, tool, plan: bool, classes, session=None
    ) -> tuple[str, ...]:
        """The effect for each argument class, in the order of `classes`, in session state `session`."""
        key = (
            self.context(policy, composition, plan),
            name,
            id(classes),
            id(session) if any(fact.startswith("session.") for fact in self.mentioned(policy)[0]) else None,
        )
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = tuple(
                self.decision(policy, composition, name, tool, plan, args, session).effect for args in classes
            )
        return found

    def decision(
        self, policy: EffectivePolicy, composition, name: str, tool, plan: bool, args: dict, session=None
    ) -> Verdict:
        """One concrete call, decided by the reference evaluator in a workspace of its own."""
        base = composition.env()
        facts = {
            **base.facts,
            "plan_mode": plan,
            "sandbox": policy.sandbox.text if policy.sandbox else None,
            "tool": name,
        }
        self.report.decisions += 1
        return decide(
            policy,
            composition.approval,
            composition.approval_source,
            name,
            tool,
            Env(facts, base.services, base.flags, args, WORKSPACE, session=session),
            core=self._core(policy),
        )

    def _core(self, policy: EffectivePolicy) -> PolicyCore:
        found = self.cores.get(id(policy))
        if found is None or found[0] is not policy:  # an id is only trusted for the object it was taken from
            found = self.cores[id(policy)] = (policy, PolicyCore(policy))
        return found[1]


def verify(program, against=None, policy_names=None, progress=None) -> Report:
    """`progress(done, total)` is called before each cell of the domain and once at the end (the CLI
    draws a bar with it)."""
    report = Report()
    decider = ClassDecider(report)
    policies = [program.resolved.policies[n] for n in sorted(policy_names or program.resolved.policies)]
    views: dict[Request, dict | None] = {}
    relevant = set(_relevant_services(program))

    def reach(request):
        if request not in views:
            views[request] = _reachable(program, request)
        return views[request]

    domain = list(cells(program))
    for done, request in enumerate(domain):
        if progress is not None:
            progress(done, len(domain))
        entries = reach(request)
        if entries is None:
            continue
        report.cells += 1
        composition = program.composition(request)
        scope = composition.chain[-1]
        # --- monotonicity of host services: removing one never makes a tool visible
        for service in sorted(composition.services & relevant):
            fewer = request.model_copy(update={"without_services": request.without_services | {service}})
            smaller = reach(fewer)
            if smaller is not None:
                for name in sorted(set(smaller) - set(entries)):
                    report.violations.append(
                        Violation(
                            "monotonicity",
                            f"removing service `{service}` makes `{name}` visible",
                            _witness(fewer, name),
                        )
                    )
        # --- narrowing: the child against its parent
        parent_entries = parent_composition = None
        if scope.parent is not None:
            parent_request = request.model_copy(update={"scope": scope.parent})
            parent_entries = reach(parent_request)
            parent_composition = program.composition(parent_request) if parent_entries is not None else None
            own = {own_tool_name(n.text) for n in scope.own}
            for name in sorted(set(entries) - set(parent_entries or {}) - own):
                report.violations.append(
                    Violation(
                        "narrowing",
                        f"scope `{scope.name}` sees `{name}`, which its parent `{scope.parent}` does not",
                        _witness(request, name),
                    )
                )
        for policy, plan, name in itertools.product(policies, (False, True), sorted(entries)):
            tool_def = program.catalog.definitions.get(entries[name].definition)
            states = decider.states_for([policy], name, tool_def)
            parent = (
                decider.context(policy, parent_composition, plan)
                if parent_composition is not None and name in parent_entries  # type: ignore[operator]  # set with it
                else None
            )
            # each session state but the strictest once per context the policy can tell apart: a cell alike
            # in every fact the policy reads is decided alike
            if len(states) > 1 and not decider.first_time(name, decider.context(policy, composition, plan), parent):
                states = states[:1]
            for session in states:
                _check_call(
                    report,
                    decider,
                    request,
                    composition,
                    name,
                    tool_def,
                    policy,
                    plan,
                    session,
                    parent_entries,
                    parent_composition,
                )
            if against is not None:
                _against(report, against, decider, request, name, tool_def, policy, plan, composition)
    if progress is not None:
        progress(len(domain), len(domain))
    report.violations = _first_per_message(report.violations)
    return report


def _check_call(
    report, decider, request, composition, name, tool_def, policy, plan, session, parent_entries, parent_composition
) -> None:
    """Narrowing and monotonicity for the calls of one tool in one cell and session state."""
    scope = composition.chain[-1]
    classes = decider.classes_for(name, tool_def, [policy])
    mine = decider.decisions(policy, composition, name, tool_def, plan, classes, session)
    if parent_composition is not None and name in parent_entries:
        theirs = decider.decisions(policy, parent_composition, name, tool_def, plan, classes, session)
        _compare(
            report,
            "narrowing",
            mine,
            theirs,
            classes,
            request,
            name,
            plan,
            policy.name,
            f"scope `{scope.name}` may do more than its parent `{scope.parent}`",
            session,
        )
    aliases = tool_def.aliases if tool_def else ()
    for item in (*policy.rules, *policy.guards):
        if isinstance(item, ast.Rule) and item.effect != "deny":
            continue
        if not _may_decide(item, name, tool_def, aliases):
            continue
        without = decider.without(policy, item)
        looser = decider.decisions(without, composition, name, tool_def, plan, classes, session)
        label = f"guard `{item.name.text}`" if isinstance(item, ast.Guard) else f"deny rule at {item.span}"
        _compare(
            report,
            "monotonicity",
            mine,
            looser,
            classes,
            request,
            name,
            plan,
            policy.name,
            f"{label} makes the decision wider than without it",
            session,
        )


SPLIT_TOOLS = ("read", "write")  # a shell line's file accesses and a search's path are decided as these


def _may_decide(item, name: str, tool_def, aliases) -> bool:
    """Whether a rule or guard can take part in a decision of tool `name`: it names the tool, or a tool a call
    is split into, or it targets a package or a risk axis (kept, as its tools are not looked up here)."""
    return any(
        t.kind != "tool"
        or target_matches_tool(t, name, tool_def, aliases)
        or any(target_matches_tool(t, split, None) for split in SPLIT_TOOLS)
        for t in item.targets
    )


def _compare(report, prop, mine, baseline, classes, request, name, plan, policy, message, session=None):
    for args, a, b in zip(classes, mine, baseline):
        if widens_fail_closed(b, a):  # every fact is known for a concrete call: `conditional` fails closed
            report.violations.append(
                Violation(prop, f"{message}: {b} → {a}", _witness(request, name, args, plan, policy, session))
            )
            return


def _against(report, old, decider, request, name, tool_def, policy, plan, composition):
    """Nothing the new program allows may have been denied or asked by the old one, in any session state
    either policy's session tests tell apart."""
    old_policy = old.resolved.policies.get(policy.name)
    old_entries = _reachable(old, request) if old_policy is not None else None
    if old_entries is None:
        return  # the old program has no such cell: nothing to compare against
    # both sides are decided on the classes both policies' patterns induce
    classes = decider.classes_for(name, tool_def, [policy, old_policy])
    states = decider.states_for([policy, old_policy], name, tool_def)
    if len(states) > 1 and not decider.first_time(
        "against",
        name,
        decider.context(policy, composition, plan),
        decider.context(old_policy, old.composition(request), plan),
        name in old_entries,
    ):
        states = states[:1]
    for session in states:
        mine = decider.decisions(policy, composition, name, tool_def, plan, classes, session)
        if name not in old_entries:
            for args, effect in zip(classes, mine):
                if effect != "deny":
                    report.violations.append(
                        Violation(
                            "against",
                            f"`{name}` did not exist in the old program and a call is now `{effect}`",
                            _witness(request, name, args, plan, policy.name, session),
                        )
                    )
                    return
            continue
        theirs = decider.decisions(old_policy, old.composition(request), name, tool_def, plan, classes, session)
        _compare(
            report,
            "against",
            mine,
            theirs,
            classes,
            request,
            name,
            plan,
            policy.name,
            "the new program is wider than the old one",
            session,
        )


def _first_per_message(violations: list[Violation]) -> list[Violation]:
    seen, out = set(), []
    for violation in violations:
        key = (violation.property, violation.message)
        if key not in seen:
            seen.add(key)
            out.append(violation)
    return out
