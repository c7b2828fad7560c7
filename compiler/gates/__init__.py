"""The five availability gates, checked in this order for every tool name of a request.

Each gate module exposes `check(ctx, name) -> GateResult`; a gate runs only when every gate
before it passed, so the first failure is the answer to "why can't my agent see this?".
"""

from __future__ import annotations

from . import allowed, projected, ready, registered, visible
from .base import GateContext, GateResult

GATES = (
    ("registered", registered.check),  # mounted, enabled, condition true, services present
    ("visible", visible.check),  # scope chain: shadowing, restrictions, own registrations
    ("projected", projected.check),  # presentation mode: native / code / both
    ("allowed", allowed.check),  # policy rules, guards, approval pin
    ("ready", ready.check),  # provider behind the tool present
)

GATE_NAMES = tuple(name for name, _ in GATES)


def run_gates(ctx: GateContext, name: str) -> tuple[GateResult, ...]:
    results: list[GateResult] = []
    failed = False
    for gate, check in GATES:
        if failed:
            results.append(GateResult(gate, "not-reached", "an earlier gate failed"))
            continue
        result = check(ctx, name)
        results.append(result)
        failed = result.status == "fail"
    return tuple(results)


__all__ = ["GATES", "GATE_NAMES", "GateContext", "GateResult", "run_gates"]
