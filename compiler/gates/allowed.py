"""Gate 4 — allowed: the static policy decision for the tool (per call: `Program.decide`)."""
from __future__ import annotations

from ..policy import decide
from .base import GateContext, GateResult

GATE = "allowed"


def check(ctx: GateContext, name: str) -> GateResult:
    comp = ctx.composition
    decision = decide(comp.policy, comp.approval, comp.approval_source, name, ctx.tool_for(name), comp.env(),
                      core=ctx.policy_core())
    span = decision.deciding[0][1] if decision.deciding else None
    policy = f"policy `{comp.policy.name}`" if comp.policy else "no policy"
    if decision.effect == "deny":
        return GateResult(GATE, "fail", f"{policy}: {decision.reason}", span,
                          "change the deciding rule, or use a wider policy with --policy", value="deny")
    if decision.effect == "conditional":
        reason = f"{policy}: decided per call from its arguments"
    elif decision.effect == "ask":
        reason = f"{policy}: {decision.reason}; each call asks for approval"
    else:
        reason = f"{policy}: {decision.reason}"
    return GateResult(GATE, "pass", reason, span, value=decision.effect)
