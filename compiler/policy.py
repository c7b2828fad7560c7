"""Gate 4: what a policy decides for a tool, statically (per view entry) or for one call.

Strictest wins (deny > ask > allow) whatever the order; no rule matched → the policy's
default, and no default → deny. Guards can only deny. Under `approval never` an ask is a
deny. Every decision names the rules that made it.
"""
from __future__ import annotations

import heapq

from . import ast
from .catalog import ToolDef
from .conditions import Env, evaluate
from .resolve import EffectivePolicy, target_matches_tool

RANK = {"allow": 0, "ask": 1, "deny": 2}


class Decision:
    """An effect (allow | ask | deny | conditional) with its reason and deciding rules.

    The deciding rules — ((rule id, span), …) in source order — may be listed only when first
    read: a call's effect is known from the index without walking every rule that agreed.
    """

    __slots__ = ("effect", "reason", "_deciding", "_build")

    def __init__(self, effect: str, reason: str, deciding=(), build=None):
        self.effect = effect
        self.reason = reason
        self._deciding = None if build is not None else tuple(deciding)
        self._build = build

    @property
    def deciding(self) -> tuple:
        if self._deciding is None:
            self._deciding, self._build = tuple(self._build()), None
        return self._deciding

    @property
    def allowed(self) -> bool:
        return self.effect == "allow"

    def __eq__(self, other) -> bool:
        return isinstance(other, Decision) and (self.effect, self.reason, self.deciding) == \
            (other.effect, other.reason, other.deciding)

    def __repr__(self) -> str:
        return f"Decision({self.effect!r}, {self.reason!r}, {self.deciding!r})"


_RULE_IDS: dict = {}


def rule_id(policy: EffectivePolicy, item) -> str:
    """`policy/effect@line` (or `policy/guard:name`); memoised, as decisions name rules on every call."""
    key = (policy.name, id(item))
    found = _RULE_IDS.get(key)
    if found is None or found[0] is not item:
        if isinstance(item, ast.Guard):
            text = f"{policy.name}/guard:{item.name.text}"
        else:
            text = f"{policy.name}/{item.effect}@{item.span.line}" if item.span else f"{policy.name}/{item.effect}"
        found = _RULE_IDS[key] = (item, text)  # the item is kept so its id can never be reused
    return found[1]


def _targets(item, name: str, tool: ToolDef | None) -> bool:
    aliases = tool.aliases if tool is not None else ()
    return any(target_matches_tool(t, name, tool, aliases) for t in item.targets)


def decide(policy: EffectivePolicy | None, approval: str, approval_source, name: str, tool: ToolDef | None,
           env: Env, include_guards: bool = True) -> Decision:
    """Decide for a call (env.args set) or statically (env.args None → may be `conditional`).

    The runtime asks for rules and guards separately (`include_guards=False`, then
    `Program.guard`), because guards run as their own pipeline stage after approval.
    """
    if policy is None:
        return Decision("allow", "no policy applies", ())
    relevant = [r for r in policy.rules if _targets(r, name, tool)]
    guards = [g for g in policy.guards if _targets(g, name, tool)] if include_guards else []
    shell = tool is not None and "any-process" in tool.risk
    scoped = Env({**env.facts, "tool": name}, env.services, env.flags, env.args, env.workspace, shell)

    def holds(item, lenient):
        return True if item.condition is None else evaluate(item.condition, scoped, lenient)

    # guards first: a guard that surely fires is final
    for guard in guards:
        if holds(guard, lenient=True) is True:
            return guard_decision(policy, guard)
    unsure = [g for g in guards if holds(g, lenient=True) is None]
    matched, maybe = [], []
    for rule in relevant:
        value = holds(rule, lenient=rule.effect != "allow")
        if value is True:
            matched.append(rule)
        elif value is None:
            maybe.append(rule)
    return conclude(policy, approval, approval_source, matched, maybe, bool(unsure))


def guard_decision(policy: EffectivePolicy, guard) -> Decision:
    return Decision("deny", f"guard `{guard.name.text}` denies it", ((rule_id(policy, guard), guard.span),))


def conclude(policy: EffectivePolicy, approval: str, approval_source, matched, maybe=(), unsure=False) -> Decision:
    """Strictest matched rule, else the default (else deny); an ask under `approval never` is a deny."""
    if not matched:
        return finish(policy, approval, approval_source, None, (), maybe, unsure)
    effect = max((r.effect for r in matched), key=RANK.__getitem__)
    deciding = sorted((r for r in matched if r.effect == effect), key=position)
    return finish(policy, approval, approval_source, effect, (deciding,), maybe, unsure)


_MATCHED = {effect: f"rule `{effect}` matched" for effect in RANK}


def finish(policy: EffectivePolicy, approval: str, approval_source, effect: str | None, parts=(), maybe=(),
           unsure=False) -> Decision:
    """The decision from the strictest matched effect (None: nothing matched).

    `parts` are lists of the rules with that effect, each in source order; they are merged
    into the deciding list only when someone reads it.
    """
    matched = effect is not None
    if matched:
        reason = _MATCHED[effect]
    else:
        effect = policy.default.text if policy.default is not None else "deny"
        parts = ()
        reason = f"no rule matched; the policy default is `{effect}`" if policy.default is not None else \
            "no rule matched and the policy has no default, so it denies"
    fallback = ((f"{policy.name}/default", policy.default.span),) if policy.default is not None \
        else ((f"{policy.name}", policy.decl.span),)
    extra = ()
    if effect != "deny" and (unsure or any(RANK[r.effect] > RANK[effect] or not matched for r in maybe)):
        effect, reason = "conditional", "depends on the call's arguments or request"
    elif effect == "ask" and approval == "never":
        effect, reason = "deny", f"{reason}, and approval is pinned to `never`, so the ask is a denial"
        extra = (("approval never", approval_source),)

    def build():
        ids = [(rule_id(policy, r), r.span) for r in (heapq.merge(*parts, key=position) if len(parts) > 1
                                                      else parts[0] if parts else ())]
        return tuple(ids or fallback) + extra

    return Decision(effect, reason, build=build)


def position(rule):
    span = rule.span
    return (span.path, span.line, span.col) if span else ("", 0, 0)
