"""Gate 5 — ready: the provider behind the tool is present; otherwise listed but unavailable."""
from __future__ import annotations

from .base import GateContext, GateResult

GATE = "ready"


def check(ctx: GateContext, name: str) -> GateResult:
    tool = ctx.tool_for(name)
    provider = tool.provider if tool else None
    if provider is None:
        return GateResult(GATE, "pass", "no provider needed beyond the registered package", value="ready")
    if provider in ctx.composition.services:
        return GateResult(GATE, "pass", f"provider service `{provider}` is present", value="ready")
    return GateResult(GATE, "fail", f"listed, but service `{provider}` is not present: calls answer unavailable",
                      ctx.composition.host.name.span, f"--with {provider}", value="unavailable")
