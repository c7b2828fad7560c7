"""Decision: an effect with its reason and the rules that made it (listed lazily)."""
from __future__ import annotations


class Decision:
    """An effect (allow | ask | deny | conditional) with its reason and deciding rules.

    The deciding rules — ((rule id, span), …) in source order — may be listed only when first
    read: a call's effect is known from the index without walking every rule that agreed.
    A gate that stopped the call before the policy is named in `gate`.
    """

    __slots__ = ("effect", "reason", "gate", "matched", "_deciding", "_build")

    def __init__(self, effect: str, reason: str, deciding=(), build=None, gate: str = "allowed", matched: bool = True):
        self.effect = effect
        self.reason = reason
        self.gate = gate
        self.matched = matched  # False: no rule matched, the policy's default (or its absence) decided
        self._deciding = None if build is not None else tuple(deciding)
        self._build = build

    @property
    def deciding(self) -> tuple:
        deciding = self._deciding
        if deciding is None:
            build = self._build
            if build is None:  # another thread listed them between the two reads (it sets them first)
                return self._deciding
            deciding = self._deciding = tuple(build())
            self._build = None
        return deciding

    @property
    def allowed(self) -> bool:
        return self.effect == "allow"

    def __eq__(self, other) -> bool:
        return isinstance(other, Decision) and (self.effect, self.reason, self.gate, self.deciding) == \
            (other.effect, other.reason, other.gate, other.deciding)

    def __repr__(self) -> str:
        return f"Decision({self.effect!r}, {self.reason!r}, {self.deciding!r})"


NO_POLICY = Decision("allow", "no policy applies", ())
