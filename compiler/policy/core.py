"""The evaluation steps both evaluators share: a policy, a tool and an environment in;
guard verdicts, tri-state buckets, strictest-wins tallies and the final Decision out.

How a call is decided (reference and index alike):
  1. guards, in source order (`run_guards`): the first that surely fires denies; one that
     cannot be decided leaves the decision open (`unsure`);
  2. every relevant rule's condition is a tri-state (`holds`), bucketed (`Buckets.add`) into
     matched (True) or maybe (None);
  3. matched rules are tallied (`Tally`): strictest effect wins, its rules are the deciding ones;
  4. `PolicyCore.conclude` turns (strictest effect, maybe, unsure) into a Decision: the
     default when nothing matched, `conditional` when an undecided rule could change it, and
     ask → deny under `approval never`.

Rules that hold only *jointly* plug in between 2 and 3: e.g. an allow that needs every shell
segment covered by SOME allow rule. Compute the joint tri-state over the group, then
`Tally.add(effect, group)` when it is True, or `Buckets.maybe.extend(group)` when None; the
group is listed as the deciding rules in source order like any other.
"""

from __future__ import annotations

import heapq

from .. import ast
from ..catalog import ToolDef
from ..conditions import Env, evaluate
from ..patterns import fnmatchcase
from ..resolve import FNMATCH_SPECIAL, EffectivePolicy, target_matches_tool
from .decision import Decision
from .effects import RULE_EFFECTS, stricter, strictest

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable

_MATCHED = {effect: f"rule `{effect}` matched" for effect in RULE_EFFECTS}
DENIED = _MATCHED["deny"]


def targets(item, name: str, tool: ToolDef | None) -> bool:
    """Does a rule or guard name this tool (by name, alias, package or risk)?"""
    aliases = tool.aliases if tool is not None else ()
    return any(target_matches_tool(t, name, tool, aliases) for t in item.targets)


def is_shell(tool: ToolDef | None) -> bool:
    return tool is not None and "any-process" in tool.risk


def tool_env(base: Env, name: str, shell: bool, args=None, workspace: str | None = None, classes=(), risk=None) -> Env:
    """The environment one tool's conditions see: the request's, plus the `tool` fact, the call, the policy's
    command classes and the tool's risk axes (`call.network`; None: a tool the catalog does not know)."""
    return Env(
        {**base.facts, "tool": name},
        base.services,
        base.flags,
        args,
        workspace,
        shell,
        classes=classes or base.classes,
        session=base.session,
        risk=risk,
    )


def lenient(item) -> bool:
    """Polarity: guards, deny and ask count when their condition possibly holds; allow only when surely."""
    return isinstance(item, ast.Guard) or item.effect != "allow"


def holds(item, env: Env) -> bool | None:
    return True if item.condition is None else evaluate(item.condition, env, lenient(item))


def run_guards(guards: Iterable, env: Env, unsure_fires: bool = False, test=holds):
    """(the first guard that fires or None, whether an earlier guard could not be decided).

    With `unsure_fires` (call time: nothing may slip through) an undecidable guard fires. `test(guard,
    env)`: whether it holds, as `holds` answers (the index passes its guards' compiled conditions).
    """
    unsure = False
    for guard in guards:
        value = test(guard, env)
        if value is True or (value is None and unsure_fires):
            return guard, unsure
        unsure |= value is None
    return None, unsure


class Buckets:
    """Tri-state bucketing of rules: True → matched, None → maybe, False → dropped."""

    __slots__ = ("matched", "maybe")

    def __init__(self):
        self.matched: list = []
        self.maybe: list = []

    def add(self, rule, value: bool | None) -> None:
        if value is True:
            self.matched.append(rule)
        elif value is None:
            self.maybe.append(rule)


def summarise(matched: Iterable) -> tuple[str | None, tuple]:
    """Strictest-wins over matched rules: (the strictest effect, its rules in source order)."""
    matched = list(matched)
    best = strictest(r.effect for r in matched)
    return best, tuple(sorted((r for r in matched if r.effect == best), key=position))


class Tally:
    """Strictest-wins across groups of matched rules: the strictest effect so far, and the
    groups (each in source order) that carry it; merged into one list only when read."""

    __slots__ = ("effect", "parts")

    def __init__(self, effect: str | None = None, rules=()):
        self.effect = effect
        self.parts: list = [rules] if effect is not None else []

    def add(self, effect: str | None, rules) -> bool:
        """Count a group of rules that hold (jointly) with this effect; True when it is the strictest so far."""
        if effect is None:
            return False
        if self.effect is None or stricter(effect, self.effect):
            self.effect, self.parts = effect, [rules]
        elif effect == self.effect:
            self.parts.append(rules)
        else:
            return False
        return True

    def add_parts(self, effect: str | None, parts) -> None:
        """Count several groups with one effect (each in source order). The same as `add` per group:
        the first decides stricter / equal / milder for them all."""
        if effect is None or not parts:
            return
        if self.effect is None or stricter(effect, self.effect):
            self.effect, self.parts = effect, list(parts)
        elif effect == self.effect:
            self.parts.extend(parts)

    def add_matched(self, matched) -> None:
        self.add(*summarise(matched))


class TargetIndex:
    """Rules (or guards) bucketed by what their targets name, so finding a tool's rules costs the rules
    that name it, not a pass over all N. The same answer as testing `targets` on every item, in order."""

    def __init__(self, items):
        self._items = tuple(items)
        self._by_name: dict[str, list[int]] = {}
        self._by_package: dict[str, list[int]] = {}
        self._by_risk: dict[str, list[int]] = {}
        self._patterns: list[tuple[int, str]] = []
        for position, item in enumerate(self._items):
            for target in item.targets:
                text = target.name.text
                if target.kind == "package":
                    self._by_package.setdefault(text, []).append(position)
                elif target.kind == "risk":
                    self._by_risk.setdefault(text, []).append(position)
                elif FNMATCH_SPECIAL.isdisjoint(text):
                    self._by_name.setdefault(text, []).append(position)
                else:
                    self._patterns.append((position, text))

    def naming(self, name: str, tool: ToolDef | None) -> list:
        names = (name, *(tool.aliases if tool is not None else ()))
        found: set[int] = set()
        for each in names:
            found.update(self._by_name.get(each, ()))
        if tool is not None:
            found.update(self._by_package.get(tool.package, ()))
            for axis in tool.risk:
                found.update(self._by_risk.get(axis, ()))
        found.update([position for position, pattern in self._patterns if any(fnmatchcase(n, pattern) for n in names)])
        return [self._items[position] for position in sorted(found)]


class PolicyCore:
    """One policy's evaluation state: its rule names (remembered per instance) and its conclusions."""

    def __init__(self, policy: EffectivePolicy):
        self.policy = policy
        self._ids: dict[int, tuple] = {}  # id(item) -> (item, text); the item is kept so its id is never reused
        self._by_target: tuple[TargetIndex, TargetIndex] | None = None  # (rules, guards), made on first use
        self._unmatched: Decision | None = None  # the decision when no rule names a tool (made on first use)
        self._optioned: frozenset | None = None  # `option_programs()`, made on first use

    def relevant(self, name: str, tool: ToolDef | None) -> tuple[list, list]:
        """(rules, guards) that name this tool, each in source order."""
        if self._by_target is None:
            self._by_target = (TargetIndex(self.policy.rules), TargetIndex(self.policy.guards))
        rules, guards = self._by_target
        return rules.naming(name, tool), guards.naming(name, tool)

    def option_programs(self) -> frozenset:
        """The programs whose option grammar reads some command pattern of the policy (`rm` for `"rm -rf /*"`):
        only their commands are read by their options (`split.shell_parts`); no other's reading could match
        more than its text does."""
        found = self._optioned
        if found is None:
            from ..conditions import SHELL_FIELDS
            from ..shell_options import pattern_reading

            items: tuple[ast.Item, ...] = (*self.policy.rules, *self.policy.guards)
            readings = (
                pattern_reading(atom.pattern)
                for item in items
                for atom in ast.atoms(item.condition)
                if isinstance(atom, ast.Matches) and ast.argument_field(atom) in SHELL_FIELDS
            )
            found = self._optioned = frozenset(reading.program for reading in readings if reading is not None)
        return found

    def rule_id(self, item) -> str:
        """`policy/effect@line` (or `policy/guard:name`), remembered: decisions name rules on every call."""
        found = self._ids.get(id(item))
        if found is None or found[0] is not item:  # an id is only trusted for the object it was taken from
            found = self._ids[id(item)] = (item, rule_id(self.policy, item))
        return found[1]

    def guard_decision(self, guard) -> Decision:
        return Decision("deny", f"guard `{guard.name.text}` denies it", ((self.rule_id(guard), guard.span),))

    def unmatched(self, approval: str, approval_source) -> Decision:
        """`conclude` with nothing matched. Only a default of `ask` under approval `never` reads the
        request (and names where `never` was set); every other request shares one decision."""
        default = self.policy.default
        if approval == "never" and default is not None and default.text == "ask":
            return self.conclude(approval, approval_source, Tally())
        if self._unmatched is None:
            self._unmatched = self.conclude(approval, approval_source, Tally())
        return self._unmatched

    def conclude(
        self, approval: str, approval_source, tally: Tally, maybe=(), unsure: bool = False, static: bool = False
    ) -> Decision:
        """The decision from the strictest matched effect (none: the default, else deny)."""
        return self.conclude_parts(approval, approval_source, tally.effect, tally.parts, maybe, unsure, static)

    def conclude_parts(
        self,
        approval: str,
        approval_source,
        effect: str | None,
        parts,
        maybe=(),
        unsure: bool = False,
        static: bool = False,
    ) -> Decision:
        """`static`: a tool's verdict for no call in particular, where an undecided allow or ask over a
        default deny makes it `conditional` (at call time such a rule fails closed: the deny stands)."""
        """`conclude` of a tally's strictest effect and its groups of rules, given as they are."""
        matched = effect is not None
        if effect is not None:  # matched (tested on `effect` itself, which the checker then reads as set)
            reason = _MATCHED[effect]
        else:
            policy = self.policy
            effect = policy.default.text if policy.default is not None else "deny"
            parts = ()
            reason = (
                f"no rule matched; the policy default is `{effect}`"
                if policy.default is not None
                else "no rule matched and the policy has no default, so it denies"
            )
        extra: tuple = ()
        if effect != "deny" and (unsure or maybe and any(not matched or stricter(r.effect, effect) for r in maybe)):
            effect, reason = "conditional", "depends on the call's arguments or request"
        elif static and not matched and any(_widens_default(r.effect, approval) for r in maybe):
            effect, reason = "conditional", "depends on the call's arguments or request"
        elif effect == "ask" and approval == "never":
            effect, reason = "deny", f"{reason}, and approval is pinned to `never`, so the ask is a denial"
            extra = (("approval never", approval_source),)
        # positional: keywords cost more
        return Decision(effect, reason, (), _new_listing(_Listing, (self, parts, extra)), "allowed", matched)

    def _fallback(self) -> tuple:
        default = self.policy.default
        if default is not None:
            return ((f"{self.policy.name}/default", default.span),)
        return ((self.policy.name, self.policy.decl.span),)


def _widens_default(effect: str, approval: str) -> bool:
    """Would a rule with this effect, once it holds, let a call through that the default denies?"""
    return effect == "allow" or effect == "ask" and approval != "never"


class _Listing(tuple):
    """A decision's deciding rules, listed when first read: the matched groups merged in source
    order, named as decisions name rules (else the policy's default), then what approval added.
    (core, parts, extra) as a tuple: made on every decision and read on few, and a tuple is made
    without running a Python constructor."""

    __slots__ = ()

    def __call__(self) -> tuple:
        core, parts, extra = self
        rules = heapq.merge(*parts, key=position) if len(parts) > 1 else parts[0] if parts else ()
        ids, last = [], None
        for rule in rules:  # a rule indexed under several globs (an `or`) may be in more than one group
            if rule is not last:
                ids.append((core.rule_id(rule), rule.span))
            last = rule
        return tuple(ids or core._fallback()) + extra


_new_listing = tuple.__new__


def rule_id(policy: EffectivePolicy, item) -> str:
    """How decisions name a rule or guard: `policy/effect@line` or `policy/guard:name`."""
    if isinstance(item, ast.Guard):
        return f"{policy.name}/guard:{item.name.text}"
    return f"{policy.name}/{item.effect}@{item.span.line}" if item.span else f"{policy.name}/{item.effect}"


def position(rule):
    span = rule.span
    return (span.path, span.line, span.col) if span else ("", 0, 0)
