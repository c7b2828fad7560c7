"""Gate 1 — registered: a row mounts the package, enabled, condition true, services present."""

from __future__ import annotations

from ..facts import PLATFORMS
from ..conditions import Env, evaluate
from ..resolve import RESERVED_TOOL, tool_name
from .base import GateContext, GateResult

GATE = "registered"


def check(ctx: GateContext, name: str) -> GateResult:
    comp = ctx.composition
    if name == RESERVED_TOOL:
        return GateResult(
            GATE, "pass", "the tool registry owns `run_code`; the presentation mode decides if it appears"
        )
    regs = ctx.registrations.get(name)
    if regs:
        reg = regs[0]
        where = "its own registration in" if reg.row == "own" else f"mount row `{reg.row}` of"
        return GateResult(GATE, "pass", f"registered by {where} {reg.origin}", reg.source)
    if name in comp.own_elsewhere:
        scope, span = comp.own_elsewhere[name]
        return GateResult(GATE, "pass", f"registered into the own scope of `{scope}` only", span)
    return _why_not(ctx, name)


def named_by_a_row(ctx: GateContext, name: str) -> bool:
    """Would some row of this request name a tool `name` (a naming knob's alias), registered or not?"""
    return next(_candidates(ctx, name), None) is not None


def _candidates(ctx: GateContext, name: str):
    """Rows whose package defines a tool that this row would name `name`."""
    catalog = ctx.resolved.catalog
    for row in ctx.composition.rows:
        if row.mount is None:
            continue
        package = catalog.package_by_id[row.package]
        for tool in package.tools:
            if tool_name(tool, row.mount) == name:
                yield row, tool


def _missing_services(ctx: GateContext, tool) -> list[str]:
    if tool is None:
        return []
    package = ctx.resolved.catalog.package_by_id.get(tool.package)
    needed = (*(package.requires if package else ()), *tool.requires)
    present = ctx.composition.env().services
    return sorted({m for m in needed if m not in present})


def _why_not(ctx: GateContext, name: str) -> GateResult:
    comp = ctx.composition
    rows = list(_candidates(ctx, name))
    order = {"registered": 0, "pending": 1, "condition-false": 2, "disabled": 3}
    rows.sort(key=lambda rt: order[rt[0].status])
    if not rows:
        tool = ctx.tool_for(name)
        package = tool.package if tool else "?"
        target = comp.preset.name if comp.preset else (comp.host_rows.name if comp.host_rows else None)
        decl = comp.preset.decl if comp.preset else (comp.host_rows.decl if comp.host_rows else comp.host)
        fix = f"add `mount {package}` to preset `{target}`" if target else f"mount `{package}`"
        # the mount alone registers nothing while the package waits for a service: name that too
        missing = _missing_services(ctx, tool)
        if missing:
            fix += " and run with " + " ".join(f"`--with {m}`" for m in missing)
        return GateResult(GATE, "fail", f"no row mounts package `{package}`", decl.name.span, fix)
    row, tool = rows[0]
    mount = row.mount
    if row.status == "registered":
        for dropped_tool, dropped_name, why, span in row.dropped:
            if dropped_name != name:
                continue
            if why.startswith("missing:"):
                missing = why.split(":", 1)[1].split(",")
                return GateResult(
                    GATE,
                    "fail",
                    f"`{name}` needs service {', '.join(f'`{m}`' for m in missing)}, "
                    f"which this request does not provide",
                    mount.span,
                    " ".join(f"--with {m}" for m in missing) + f" would register `{name}`",
                )
            return GateResult(
                GATE,
                "fail",
                f"package `{row.package}` is mounted with {why}, which removes `{name}`",
                span,
                f"set `{why.strip('`').split(' =')[0]} = true` in that mount",
            )
    if row.status == "pending":
        waiting = ", ".join(f"`{m}`" for m in row.missing)
        return GateResult(
            GATE,
            "fail",
            f"package `{row.package}` waits for service {waiting}, which host "
            f"`{comp.host.name.text}` does not provide (the preset cannot be composed)",
            mount.span,
            " ".join(f"--with {m}" for m in row.missing),
        )
    if row.status == "disabled":
        return GateResult(
            GATE, "fail", f"mount row `{mount.row_name}` is disabled", mount.span, "remove `disabled` from that mount"
        )
    # condition false: find a platform that would make it hold
    env = comp.env()
    fixes = [
        p
        for p in PLATFORMS
        if p != comp.request.platform
        and evaluate(mount.condition, Env({**env.facts, "platform": p}, env.services, env.flags), False) is True
    ]
    hint = f"--platform {fixes[0]}" if fixes else "change the condition"
    return GateResult(
        GATE,
        "fail",
        f"the mount condition of `{mount.row_name}` is false for platform `{comp.request.platform}`",
        mount.condition.span or mount.span,
        hint,
    )
