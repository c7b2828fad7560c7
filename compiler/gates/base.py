"""What every gate reads: the composition, plus per-name lookups computed once per request."""

from __future__ import annotations

from ..compose import Composition, Registration
from .._base.frozen import record
from .._base.memo import cached_property
from ..patterns import fnmatchcase
from ..resolve import RESERVED_TOOL, Resolved

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import Any


@record(slots=False)
class GateResult:
    """One availability gate's verdict on a tool, with its reason."""

    gate: str
    status: str  # pass | fail | not-reached
    reason: str
    source: Any = None  # Span of the deciding declaration
    counterfactual: str | None = None
    value: str | None = None  # gate-specific outcome: the policy decision, the readiness
    detail: Any = None  # gate-specific facts for explain: a conditional tool's per-call rules


class GateContext:
    def __init__(self, resolved: Resolved, composition: Composition, cores=None):
        self.resolved = resolved
        self.composition = composition
        self._cores = cores  # policy -> the PolicyCore its Program keeps; None: a new one per decision

    def policy_core(self):
        """The composition's policy's shared PolicyCore (its target index built once per Program), or None."""
        policy = self.composition.policy
        return self._cores(policy) if policy is not None and self._cores is not None else None

    @cached_property
    def registrations(self) -> dict[str, list[Registration]]:
        """name → registrations on the chain, nearest layer first."""
        found: dict[str, list[Registration]] = {}
        for _, regs in reversed(self.composition.layers):
            for reg in regs:
                found.setdefault(reg.name, []).append(reg)
        return found

    @cached_property
    def own_layer(self) -> str:
        return f"scope:{self.composition.chain[-1].name}"

    @cached_property
    def visible(self) -> dict[str, Registration]:
        """The scope view: inherited names that every restriction admits, then own registrations."""
        view: dict[str, Registration] = {}
        for name, regs in self.registrations.items():
            if self._admitted(name, regs[0]):
                view[name] = regs[0]
        return view

    def _admitted(self, name: str, nearest: Registration) -> bool:
        """An own registration is always seen; an inherited one when no restriction on the chain hides it."""
        return nearest.layer == self.own_layer or self.restriction_blocking(name) is None

    def restriction_blocking(self, name: str):
        """The (scope, kind, span) of the first restriction on the chain that excludes an inherited name."""
        if name == RESERVED_TOOL:
            return None
        for scope in self.composition.chain:
            if scope.only and not any(fnmatchcase(name, p.text) for p in scope.only):
                return scope, "only", scope.only[0].span
            for pattern in scope.hide:
                if fnmatchcase(name, pattern.text):
                    return scope, "hide", pattern.span
        return None

    def registration(self, name: str) -> Registration | None:
        """`visible.get(name)`, without building the whole view when one call asks about one name."""
        if "visible" in self.__dict__:
            return self.visible.get(name)
        regs = self.registrations.get(name)
        return regs[0] if regs and self._admitted(name, regs[0]) else None

    def tool_for(self, name: str):
        reg = self.registrations.get(name)
        if reg:
            return reg[0].tool
        tools = self.resolved.catalog.by_name.get(name)
        if tools:
            return tools[0]
        return next((t for t in self.resolved.catalog.definitions.values() if name in t.aliases), None)
