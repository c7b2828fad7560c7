"""Values that travel through the pipeline: calls, verdicts, results. All frozen.

Arguments are materialised once as JSON and deep-frozen, so history, audit, UI and the tool
body all see one value that nobody can rewrite.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union


class FrozenDict(dict):
    """A JSON object that refuses every mutation (json.dumps still sees a dict)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("tool-call arguments are frozen")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse

    def __hash__(self):  # frozen, so hashable like a tuple of items
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))


def thaw(value: Any) -> Any:
    """A mutable deep copy, for validators and tools that need plain containers."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


# no tool takes arguments nested this deep; the cap keeps every recursive walk (freezing, JSON
# encoding, schema validation) far inside Python's recursion limit
MAX_ARGUMENT_DEPTH = 100


class ArgumentsTooDeep(ValueError):
    def __init__(self) -> None:
        super().__init__(f"tool-call arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels")


def deep_freeze(value: Any, room: int | None = None) -> Any:
    """`value` frozen; with `room`, more than that many nested containers raise ArgumentsTooDeep
    (checked on the way down, so the recursion never goes deeper than `room`)."""
    if isinstance(value, (dict, list, tuple)):
        if room is not None:
            if room <= 0:
                raise ArgumentsTooDeep()
            room -= 1
        if isinstance(value, dict):
            return FrozenDict((k, deep_freeze(v, room)) for k, v in value.items())
        return tuple(deep_freeze(v, room) for v in value)
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def materialise(raw: Any) -> Any:
    """The model's argument text (or an already-parsed object) → one frozen JSON value.

    An empty string is `{}`; text that is not JSON stays the raw string (validation rejects it).
    Python's ints are exact and its floats are IEEE doubles, so nothing is lost on the way.
    Nesting deeper than MAX_ARGUMENT_DEPTH raises ArgumentsTooDeep.
    """
    if isinstance(raw, str):
        if not raw.strip():
            return FrozenDict()
        try:
            raw = json.loads(raw)
        except RecursionError:
            raise ArgumentsTooDeep() from None
        except ValueError:
            return raw
    return deep_freeze(raw, MAX_ARGUMENT_DEPTH)  # one walk freezes and bounds the nesting


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Any  # frozen JSON (normally a FrozenDict)
    parent: str | None = None  # the outer call of a nested `run_code` dispatch

    @classmethod
    def from_model(cls, id: str, name: str, raw_arguments: Any, parent: str | None = None) -> "ToolCall":
        return cls(str(id), str(name), materialise(raw_arguments), parent)


@dataclass(frozen=True)
class Allow:
    reason: str = ""
    decided_by: tuple = ()


@dataclass(frozen=True)
class Ask:
    reason: str = ""
    decided_by: tuple = ()


@dataclass(frozen=True)
class Deny:
    reason: str
    decided_by: tuple = ()
    code: str | None = None  # denials carry no code, except where a caller must tell this one apart
    name: str = (
        "ToolDenied"  # the error's class: a tool's own where the denial is the tool's error (its provider absent)
    )


PreDecision = Union[Allow, Ask, Deny]


@dataclass(frozen=True)
class Abstain:
    """A guard that has nothing to say. Guards return Deny or Abstain — never an allow."""


GuardVerdict = Union[Deny, Abstain]

APPROVAL_OUTCOMES = ("allowed-once", "rejected", "cancelled", "unavailable")


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    name: str
    is_error: bool
    content: str
    value: Any = None
    error: dict | None = None  # {"name", "code"?, "message"}
    decided_by: tuple = ()  # ((rule id, "path:line:col"), …)
    additional_contexts: tuple[str, ...] = ()

    def to_json(self) -> dict:
        out = {"id": self.call_id, "name": self.name, "isError": self.is_error, "content": self.content}
        if self.value is not None:
            out["value"] = thaw(self.value)
        if self.error is not None:
            out["error"] = {k: v for k, v in self.error.items() if v is not None}
        if self.decided_by:
            out["decided_by"] = [{"rule": rule, "source": source} for rule, source in self.decided_by]
        return out


@dataclass(frozen=True)
class StageRecord:
    stage: str
    note: str


@dataclass(frozen=True)
class CallState:
    """What one call has become so far; each stage returns a new state."""

    call: ToolCall
    entry: Any = None  # the view's ToolEntry, when the name is on the view
    decision: str | None = None  # allow | ask | deny
    reason: str = ""
    decided_by: tuple = ()
    result: ToolResult | None = None
    final: bool = False  # a final error: skip to normalisation, no post-execute
    contexts: tuple[str, ...] = ()
    records: tuple[StageRecord, ...] = field(default_factory=tuple)
