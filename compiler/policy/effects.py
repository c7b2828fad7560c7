"""The one order of policy effects (strictest first) and what follows from it.

Everything that ranks effects — strictest-wins, widening in `diff` and `verify`, the lint
for shadowed rules, the tests — imports it from here.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable

# strictest first; `conditional` (a static verdict: some calls may be allowed) sits just below allow
EFFECTS = ("deny", "ask", "conditional", "allow")
RULE_EFFECTS = ("deny", "ask", "allow")  # what a rule can say

RANK = {effect: len(EFFECTS) - 1 - i for i, effect in enumerate(EFFECTS)}  # higher is stricter
PERMISSIVENESS = {effect: i for i, effect in enumerate(EFFECTS)}  # higher is wider


def stricter(a: str, b: str) -> bool:
    return RANK[a] > RANK[b]


def strictest(effects: Iterable[str]) -> str | None:
    """Strictest wins, whatever the order; None for no effects at all."""
    return max(effects, key=RANK.__getitem__, default=None)


def widens(before: str, after: str) -> bool:
    """Does going from `before` to `after` let more through?"""
    return PERMISSIVENESS[after] > PERMISSIVENESS[before]


def widens_fail_closed(before: str, after: str) -> bool:
    """`widens` for concrete calls, where `conditional` should not occur: if it does, it counts
    as allowing on the side being checked and as denying on the baseline."""
    return widens("deny" if before == "conditional" else before, "allow" if after == "conditional" else after)
