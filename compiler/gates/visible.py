"""Gate 2 — visible: the scope chain lets this scope see the tool."""

from __future__ import annotations

from ..resolve import RESERVED_TOOL
from .base import GateContext, GateResult

GATE = "visible"


def check(ctx: GateContext, name: str) -> GateResult:
    comp = ctx.composition
    scope = comp.chain[-1].name
    if name == RESERVED_TOOL:
        return GateResult(GATE, "pass", "`run_code` cannot be restricted")
    reg = ctx.registration(name)
    if reg is not None:
        if reg.layer == ctx.own_layer:
            return GateResult(
                GATE, "pass", f"own registration of scope `{scope}`; restrictions do not reach it", reg.source
            )
        return GateResult(GATE, "pass", f"inherited by scope `{scope}` and admitted by every restriction on its chain")
    if name not in ctx.registrations and name in comp.own_elsewhere:
        owner, span = comp.own_elsewhere[name]
        return GateResult(
            GATE,
            "fail",
            f"`{name}` exists only as the own registration of scope `{owner}`, which is not on the chain of `{scope}`",
            span,
            f"--scope {owner}",
        )
    blocking = ctx.restriction_blocking(name)
    owner, kind, span = blocking
    if kind == "only":
        return GateResult(
            GATE,
            "fail",
            f"scope `{owner.name}` allows only "
            + ", ".join(f"`{p.text}`" for p in owner.only)
            + f", which does not admit `{name}`",
            span,
            f"add `{name}` to `only` in scope `{owner.name}`",
        )
    return GateResult(
        GATE,
        "fail",
        f"scope `{owner.name}` hides it (`hide`)",
        span,
        f"remove the pattern from `hide` in scope `{owner.name}`",
    )
