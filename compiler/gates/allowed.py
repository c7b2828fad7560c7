"""Gate 4 — allowed: the static policy decision for the tool (per call: `Program.decide`).

A tool some calls may use and others not is `conditional`: the gate passes, naming the rules that
can let a call through and what decides every other call (`detail`, for explain)."""

from __future__ import annotations

from ..policy import RANK, Decision, decide
from ..policy.core import PolicyCore, is_shell, rule_id
from ..policy.reference import per_call
from .base import GateContext, GateResult

GATE = "allowed"


def check(ctx: GateContext, name: str) -> GateResult:
    comp = ctx.composition
    decision = decide(
        comp.policy, comp.approval, comp.approval_source, name, ctx.tool_for(name), comp.env(), core=ctx.policy_core()
    )
    own = decision
    if decision.effect in ("allow", "ask") and comp.policy is not None and is_shell(ctx.tool_for(name)):
        decision = _with_file_parts(ctx, decision)
    span = decision.deciding[0][1] if decision.deciding else None
    policy = f"policy `{comp.policy.name}`" if comp.policy else "no policy"
    if decision.effect == "deny":
        return GateResult(
            GATE,
            "fail",
            f"{policy}: {decision.reason}",
            span,
            "change the deciding rule, or use a wider policy with --policy",
            value="deny",
        )
    if decision.effect == "conditional":
        detail = _per_call(ctx, name)
        text = _per_call_text(detail) if own.effect == "conditional" else decision.reason  # (its files decide)
        return GateResult(GATE, "pass", f"{policy}: {text}", span, value="conditional", detail=detail)
    if decision.effect == "ask":
        reason = f"{policy}: {decision.reason}; each call asks for approval"
    else:
        reason = f"{policy}: {decision.reason}"
    return GateResult(GATE, "pass", reason, span, value=decision.effect)


def _with_file_parts(ctx: GateContext, decision):
    """A shell tool's calls are also decided as the files their lines write (and read, where the policy has a rule on
    `read`: `policy.split`): where that is stricter than the tool's own word, some calls get it, so the tool is
    `conditional` (`allow bash` under a policy with no default denies `rm -rf build`'s write of `build`)."""
    comp = ctx.composition
    core = ctx.policy_core()
    for part in ("write", "read"):
        tool = ctx.tool_for(part)
        if part == "read" and not any((core or PolicyCore(comp.policy)).relevant(part, tool)):  # type: ignore[arg-type]  # `check` tests it is set
            continue
        found = decide(comp.policy, comp.approval, comp.approval_source, part, tool, comp.env(), core=core)
        if RANK[found.effect] > RANK[decision.effect]:
            verdict = "is decided call by call" if found.effect == "conditional" else f"is `{found.effect}`"
            return Decision(
                "conditional",
                f"{decision.reason}; but a file a line {part}s is decided as a `{part}` call, which {verdict} "
                f"({found.reason})",
                build=lambda: decision.deciding,
                gate=decision.gate,
            )
    return decision


def _per_call(ctx: GateContext, name: str) -> dict:
    """{"rules": what a call may match ({effect, rule, when, source}), "otherwise": {effect, reason, rules}}."""
    from ..fmt import expr_text  # only a conditional tool's explanation prints conditions

    comp = ctx.composition
    maybe, guards, otherwise = per_call(
        comp.policy,  # type: ignore[arg-type]  # set: only a policy's decision is conditional
        comp.approval,
        comp.approval_source,
        name,
        ctx.tool_for(name),
        comp.env(),
        core=ctx.policy_core(),
    )
    items = [*maybe, *guards]
    rules = [
        {
            "effect": "deny" if item in guards else item.effect,
            "rule": rule_id(comp.policy, item),  # type: ignore[arg-type]  # as above
            "when": expr_text(item.condition) if item.condition is not None else None,
            "source": str(item.span) if item.span else None,
        }
        for item in items
    ]
    detail = {
        "rules": rules,
        "otherwise": {
            "effect": otherwise.effect,
            "reason": otherwise.reason,
            "rules": [{"rule": rid, "source": str(at) if at else None} for rid, at in otherwise.deciding],
        },
    }
    if any(atom.fact.dotted == "call.network" for item in items for atom in _fact_atoms(item.condition)):
        detail["call_network"] = _network(comp.policy, ctx.tool_for(name))
    return detail


def _fact_atoms(condition):
    from .. import ast

    return (atom for atom in ast.atoms(condition) if not isinstance(atom, ast.Flag))


def _network(policy, tool) -> dict:
    """What `call.network` is for the tool's calls ({value: true | false | null (each call's own, or not known),
    why, sandbox: what the policy's sandbox does to the network of the processes it starts, or null}). The fact
    is about the call: a sandbox with the network off does not change it."""
    from ..call_network import call_reach
    from ..enforcement import network_state
    from ..policy.protected import sandbox_hides

    reach = call_reach(tool.risk if tool is not None else None, is_shell(tool), None)
    sandbox = None
    if is_shell(tool) and sandbox_hides(policy):
        state = network_state(policy)
        if state != "on":
            sandbox = (
                f"the `{policy.name}` sandbox runs its processes with the network "
                + ("on for the `network allow` hosts only" if state == "listed" else "off (loopback only)")
                + " where the host can confine them; `call.network` still says what the call may try"
            )
    return {"value": reach.value, "why": reach.why, "sandbox": sandbox}


_VERB = {"allow": "available for", "ask": "asks approval for", "deny": "denies"}


def _per_call_text(detail: dict) -> str:
    """e.g. available for calls where `args.command matches "git status *"` at team.dsh:3:3; other calls: …"""
    parts = [
        f"{_VERB[r['effect']]} calls where `{r['when']}` ({r['rule']}" + (f" at {r['source']})" if r["source"] else ")")
        for r in detail["rules"]
    ]
    other = detail["otherwise"]
    by = ", ".join(f"{r['rule']} at {r['source']}" if r["source"] else r["rule"] for r in other["rules"])
    text = "; ".join(parts) + f"; other calls: `{other['effect']}` ({other['reason']}" + (f"; {by})" if by else ")")
    network = detail.get("call_network")
    if network is not None:
        text += f"; `call.network`: {network['why']}" + (f"; {network['sandbox']}" if network["sandbox"] else "")
    return text
