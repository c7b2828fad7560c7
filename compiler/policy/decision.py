"""Decision: an effect with its reason and the rules that made it (listed lazily)."""

from __future__ import annotations

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import ClassVar


class Verdict:
    """What every decision offers: an effect (allow | ask | deny | conditional), its reason, the gate that
    stopped the call (`gate`), whether a rule matched (`matched`) and the deciding rules — ((rule id, span),
    …) in source order — in `deciding`. `Decision` holds them; `LaterDeny` lists its rules when first read."""

    __slots__ = ()
    # stored by `Decision`, class attributes of a `LaterDeny` (annotations only: no slot, no value here)
    effect: str
    reason: str
    gate: str
    matched: bool

    if TYPE_CHECKING:  # each subclass reads it its own way

        @property
        def deciding(self) -> tuple: ...

    @property
    def allowed(self) -> bool:
        return self.effect == "allow"

    def __eq__(self, other) -> bool:
        return isinstance(other, Verdict) and (self.effect, self.reason, self.gate, self.deciding) == (
            other.effect,
            other.reason,
            other.gate,
            other.deciding,
        )

    def __ne__(self, other) -> bool:  # said here: `LaterDeny` would otherwise compare as a tuple
        return not self == other

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # equal decisions are equal by value; none is a key

    def __repr__(self) -> str:
        return f"Decision({self.effect!r}, {self.reason!r}, {self.deciding!r})"


class Decision(Verdict):
    """A verdict whose fields are stored. The deciding rules may be listed only when first read (`build`):
    a call's effect is known from the index without walking every rule that agreed.
    A gate that stopped the call before the policy is named in `gate`.
    """

    __slots__ = ("effect", "reason", "gate", "matched", "_deciding", "_build")

    def __init__(
        self,
        effect: str,
        reason: str,
        deciding: Iterable = (),
        build: Callable[[], Iterable] | None = None,
        gate: str = "allowed",
        matched: bool = True,
    ):
        self.effect = effect
        self.reason = reason
        self.gate = gate
        self.matched = matched  # False: no rule matched, the policy's default (or its absence) decided
        self._deciding: tuple | None = None if build is not None else tuple(deciding)
        self._build = build

    @property
    def deciding(self) -> tuple:
        deciding = self._deciding
        if deciding is None:
            build = self._build
            if build is None:  # another thread listed them between the two reads (it sets them first)
                return self._deciding  # type: ignore[return-value]  # set, by that thread, before _build is cleared
            deciding = self._deciding = tuple(build())
            self._build = None
        return deciding


class LaterDeny(Verdict, tuple):  # type: ignore[misc]  # unhashable as every Verdict: its __hash__ = None comes first
    """A deny by rules whose deciding rules are listed when first read (`_list`), from the tuple it is made
    of. A tuple, so making one runs no Python code: the most common call of a large policy is denied
    without condition, and few of its decisions are ever read. A subclass names its `reason` and `_list`;
    what it holds must not change afterwards (a call's own mapping is copied)."""

    effect, gate, matched = "deny", "allowed", True
    reason: str

    def _list(self):
        raise TypeError(f"{type(self).__name__} does not say how its rules are listed")

    @property
    def deciding(self) -> tuple:
        listed = self.__dict__.get("listed")  # set once, whole: threads reading first each list them alike
        if listed is None:
            listed = self.__dict__["listed"] = tuple(self._list())
        return listed


NO_POLICY = Decision("allow", "no policy applies", ())
