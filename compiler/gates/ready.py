"""Gate 5 — ready: the provider behind the tool is present; otherwise listed but unavailable."""

from __future__ import annotations

from ..facts import CODE_WORKER
from ..resolve import RESERVED_TOOL
from ..upstream import PREFIX as UPSTREAM_PREFIX
from .base import GateContext, GateResult

GATE = "ready"


def check(ctx: GateContext, name: str) -> GateResult:
    tool = ctx.tool_for(name)
    origin = ctx.resolved.catalog.package_by_id[tool.package].origin if tool else None
    if origin is not None:
        # the runtime carries bodies for shipped definitions only; an overlay package declares a schema
        return GateResult(
            GATE,
            "fail",
            f"listed, but `{tool.definition}` comes from the catalog overlay `{origin}` "
            "and has no local body: calls answer unavailable",
            None,
            "run it where its package is implemented",
            value="unavailable",
        )
    provider = tool.provider if tool else None
    if name == RESERVED_TOOL:
        if CODE_WORKER in ctx.composition.services:
            return GateResult(GATE, "pass", f"provider service `{CODE_WORKER}` is present", value="ready")
        return GateResult(
            GATE,
            "fail",
            f"listed, but service `{CODE_WORKER}` is not present: no worker runs "
            "programs here (Node.js and the worker's npm dependency); calls answer unavailable",
            None,
            "install Node.js, then reinstall dshc where `npm` is on PATH",
            value="unavailable",
        )
    if provider is None:
        return GateResult(GATE, "pass", "no provider needed beyond the registered package", value="ready")
    if provider in ctx.composition.services:
        return GateResult(GATE, "pass", f"provider service `{provider}` is present", value="ready")
    if provider.startswith(UPSTREAM_PREFIX):  # the service of an upstream MCP server is present while it answers
        return GateResult(
            GATE,
            "fail",
            f"listed, but the upstream MCP server `{provider[len(UPSTREAM_PREFIX) :]}` is "
            "not answering: calls answer unavailable until it is back",
            _mount_span(ctx, name),
            f"`dshc serve` connects to it (a command that reads declarations never starts it: "
            f"`--with {provider}` reads it as answering)",
            value="unavailable",
        )
    return GateResult(
        GATE,
        "fail",
        f"listed, but service `{provider}` is not present: calls answer unavailable",
        ctx.composition.host.name.span,
        f"--with {provider}",
        value="unavailable",
    )


def _mount_span(ctx: GateContext, name: str):
    registration = ctx.registration(name)
    return registration.source if registration else None
