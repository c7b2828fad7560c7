"""Gate 3 — projected: the presentation mode puts the tool on the wire."""

from __future__ import annotations

from ..resolve import RESERVED_TOOL
from .base import GateContext, GateResult

GATE = "projected"


def check(ctx: GateContext, name: str) -> GateResult:
    mode = ctx.composition.mode
    source = ctx.composition.mode_source
    if name == RESERVED_TOOL:
        if mode == "native":
            return GateResult(
                GATE, "fail", "`run_code` is on the wire only in code or both mode", source, "--mode both"
            )
        return GateResult(GATE, "pass", f"`{mode}` mode puts `run_code` on the wire", source)
    if mode == "code":
        return GateResult(
            GATE,
            "fail",
            f"in code mode only `run_code` is on the wire; `{name}` is reachable only "
            "through `run_code` (declared in its SDK)",
            source,
            "--mode both",
        )
    return GateResult(GATE, "pass", f"`{mode}` mode lists every visible tool on the wire", source)
