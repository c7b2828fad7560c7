"""Request: the context of one model request. Frozen, hashable: it is the cache key of a view.

Keyword fields in, a checked value out; a wrong field raises InvalidRequest (a ValueError whose
`errors()` lists `{"loc", "msg"}` like a validation error). A plain dataclass, so a `dshc`
process that only decides never pays for a validation library's import.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

PLATFORM_VALUES = ("linux", "darwin", "win32")
MODE_VALUES = ("native", "code", "both")
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


class InvalidRequest(ValueError):
    """A field of a Request that is not what the field takes."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message

    def errors(self) -> list[dict[str, Any]]:
        return [{"loc": (self.field,), "msg": self.message}]


def _text(value, optional: bool = False):
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValueError("Input should be a valid string")
    return value


def _choice(choices: tuple[str, ...], optional: bool = False):
    listed = ", ".join(f"'{c}'" for c in choices[:-1]) + f" or '{choices[-1]}'"

    def check(value):
        if value is None and optional:
            return None
        if value not in choices or not isinstance(value, str):
            raise ValueError(f"Input should be {listed}")
        return value
    return check


def _names(value) -> frozenset[str]:
    names = frozenset(value or ())
    if not all(isinstance(name, str) for name in names):
        raise ValueError("Input should be a set of strings")
    return names


def _flag(value) -> bool:
    # the lenient booleans a JSON or TOML context may carry: true/false, 0/1, "yes"/"no" …
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    raise ValueError("Input should be a valid boolean")


_CHECKS = {
    "host": _text,
    "preset": lambda v: _text(v, optional=True),
    "platform": _choice(PLATFORM_VALUES),
    "with_services": _names,
    "without_services": _names,
    "flags": _names,
    "scope": _text,
    "mode": _choice(MODE_VALUES, optional=True),
    "policy": lambda v: _text(v, optional=True),
    "plan": _flag,
}


@dataclass(frozen=True, init=False)
class Request:
    host: str = "web"
    preset: str | None = None
    platform: str = "linux"  # one of PLATFORM_VALUES
    with_services: frozenset[str] = frozenset()
    without_services: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    scope: str = "root"
    mode: str | None = None  # one of MODE_VALUES, or None: the preset's or host's
    policy: str | None = None
    plan: bool = False

    def __init__(self, **fields: Any) -> None:
        unknown = sorted(set(fields) - set(_CHECKS))
        if unknown:
            raise InvalidRequest(unknown[0], "Extra inputs are not permitted")
        for name, check in _CHECKS.items():
            try:
                value = check(fields[name]) if name in fields else _DEFAULTS[name]
            except ValueError as exc:
                raise InvalidRequest(name, str(exc)) from None
            object.__setattr__(self, name, value)

    def composition_key(self) -> "Request":
        """Plan mode never changes what is composed, only decisions: drop it for view caching."""
        return self.model_copy(update={"plan": False}) if self.plan else self

    def model_copy(self, update: dict[str, Any] | None = None) -> "Request":
        """A copy with `update` applied (and checked)."""
        return dataclasses.replace(self, **(update or {}))

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """The fields as a dict; mode="json" gives sorted lists for the sets (JSON has no sets)."""
        fields = {name: getattr(self, name) for name in _CHECKS}
        if mode == "json":
            fields.update({name: sorted(fields[name]) for name in ("with_services", "without_services", "flags")})
        return fields


_DEFAULTS = {field.name: field.default for field in dataclasses.fields(Request)}
