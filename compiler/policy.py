"""Gate 4: what a policy decides for a tool, statically (per view entry) or for one call.

Strictest wins (deny > ask > allow) whatever the order; no rule matched → the policy's
default, and no default → deny. Guards can only deny. Under `approval never` an ask is a
deny. Every decision names the rules that made it.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import ast
from .catalog import ToolDef
from .conditions import Env, evaluate, mentions_args
from .resolve import EffectivePolicy, target_matches_tool

RANK = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True)
class Decision:
    effect: str  # allow | ask | deny | conditional (static only)
    reason: str
    deciding: tuple  # ((rule id, span), …)

    @property
    def allowed(self) -> bool:
        return self.effect == "allow"


def rule_id(policy: EffectivePolicy, item) -> str:
    if isinstance(item, ast.Guard):
        return f"{policy.name}/guard:{item.name.text}"
    return f"{policy.name}/{item.effect}@{item.span.line}" if item.span else f"{policy.name}/{item.effect}"


def _targets(item, name: str, tool: ToolDef | None) -> bool:
    aliases = tool.aliases if tool is not None else ()
    return any(target_matches_tool(t, name, tool, aliases) for t in item.targets)


def decide(policy: EffectivePolicy | None, approval: str, approval_source, name: str, tool: ToolDef | None,
           env: Env, include_guards: bool = True) -> Decision:
    """Decide for a call (env.args set) or statically (env.args None → may be `conditional`).

    The runtime asks for rules and guards separately (`include_guards=False`, then
    `guard_denial`), because guards run as their own pipeline stage after approval.
    """
    if policy is None:
        return Decision("allow", "no policy applies", ())
    relevant = [r for r in policy.rules if _targets(r, name, tool)]
    guards = [g for g in policy.guards if _targets(g, name, tool)] if include_guards else []
    shell = tool is not None and "any-process" in tool.risk

    def holds(item, lenient):
        if item.condition is None:
            return True
        return evaluate(item.condition, Env(env.facts, env.services, env.flags, env.args, env.workspace, shell),
                        lenient)

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
    if matched:
        effect = max((r.effect for r in matched), key=RANK.__getitem__)
        deciding = sorted((r for r in matched if r.effect == effect), key=_position)
        reason = f"rule `{effect}` matched"
    else:
        effect = policy.default.text if policy.default is not None else "deny"
        deciding = []
        reason = f"no rule matched; the policy default is `{effect}`" if policy.default is not None else \
            "no rule matched and the policy has no default, so it denies"
    ids = tuple((rule_id(policy, r), r.span) for r in deciding) or (
        ((f"{policy.name}/default", policy.default.span),) if policy.default is not None
        else ((f"{policy.name}", policy.decl.span),))
    if effect != "deny" and (unsure or any(RANK[r.effect] > RANK[effect] or not matched for r in maybe)):
        return Decision("conditional", "depends on the call's arguments or request", ids)
    if effect == "ask" and approval == "never":
        return Decision("deny", f"{reason}, and approval is pinned to `never`, so the ask is a denial",
                        ids + (("approval never", approval_source),))
    return Decision(effect, reason, ids)


def _position(rule):
    span = rule.span
    return (span.path, span.line, span.col) if span else ("", 0, 0)


def static_arguments_free(policy: EffectivePolicy | None) -> bool:
    if policy is None:
        return True
    return not any(mentions_args(item.condition) for item in (*policy.rules, *policy.guards))


def guard_denial(policy: EffectivePolicy | None, name: str, tool: ToolDef | None, env: Env) -> Decision | None:
    """The first guard that fires for this call, as a deny; None when every guard abstains."""
    if policy is None:
        return None
    shell = tool is not None and "any-process" in tool.risk
    for guard in policy.guards:
        if not _targets(guard, name, tool):
            continue
        if guard.condition is None or evaluate(guard.condition, Env(env.facts, env.services, env.flags, env.args,
                                                                    env.workspace, shell), True) is not False:
            return guard_decision(policy, guard)
    return None
