"""Request: the context of one model request. Frozen, hashable: it is the cache key of a view.

Keyword fields in, a checked value out; a wrong field raises InvalidRequest (a ValueError whose
`errors()` lists `{"loc", "msg"}` like a validation error). A plain record, so a `dshc`
process that only decides never pays for a validation library's import.
"""

from __future__ import annotations

from ._base.frozen import fields, record, replace

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import Any

    from .session import Session

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


def _names(field: str, value) -> frozenset[str]:
    if isinstance(value, (str, bytes, dict)):  # iterable, but a string is not a set of names: "abc" is not {a, b, c}
        raise InvalidRequest(field, "Input should be a set of strings")
    try:
        names = value if type(value) is frozenset else frozenset(value or ())
    except TypeError:  # not iterable, or holds unhashable items
        raise InvalidRequest(field, "Input should be a set of strings") from None
    for name in names:
        if not isinstance(name, str):
            raise InvalidRequest(field, "Input should be a set of strings")
    return names


def _flag(value) -> bool:
    # the lenient booleans a JSON or TOML context may carry: true/false, 0/1, "yes"/"no" …
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    raise InvalidRequest("plan", "Input should be a valid boolean")


def _one_of(field: str, value, choices: tuple[str, ...]) -> None:
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(f"'{c}'" for c in choices[:-1]) + f" or '{choices[-1]}'"
        raise InvalidRequest(field, f"Input should be {listed}")


def _text(field: str, value, optional: bool = False) -> None:
    if not isinstance(value, str) and not (optional and value is None):
        raise InvalidRequest(field, "Input should be a valid string")


# the names a caller gives a context by (a `key=value` side, a test file's [context], the decision API)
# -> the Request field each sets; `with`/`without` as the CLI flags spell them
CONTEXT_FIELDS: dict[str, str] = {
    "preset": "preset",
    "host": "host",
    "platform": "platform",
    "scope": "scope",
    "mode": "mode",
    "policy": "policy",
    "plan": "plan",
    "with": "with_services",
    "without": "without_services",
    "flags": "flags",
}


@record(slots=False, init=False)
class Request:
    """The context a view or a decision is for: host, preset, platform, services, flags, scope and policy."""

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
    # what earlier calls of the session did (`session.Session`), for `session.*` conditions; None: not known (no
    # log), the strictest state. Not part of the context a log or a caller writes: the log itself is its source.
    session: Session | None = None

    def __init__(
        self,
        *,
        host: str = "web",
        preset: str | None = None,
        platform: str = "linux",
        with_services=frozenset(),
        without_services=frozenset(),
        flags=frozenset(),
        scope: str = "root",
        mode: str | None = None,
        policy: str | None = None,
        plan: bool = False,
        session=None,
        **unknown: Any,
    ) -> None:
        # built for every request context: plain checks and one dict update, no per-field machinery
        if unknown:
            raise InvalidRequest(sorted(unknown)[0], "Extra inputs are not permitted")
        _text("host", host)
        _text("preset", preset, optional=True)
        _one_of("platform", platform, PLATFORM_VALUES)
        _text("scope", scope)
        if mode is not None:
            _one_of("mode", mode, MODE_VALUES)
        _text("policy", policy, optional=True)
        if session is not None:
            from .session import Session  # loaded only where a policy reads the session

            if not isinstance(session, Session):
                raise InvalidRequest("session", "Input should be a session's facts")
        self.__dict__.update(
            session=session,
            host=host,
            preset=preset,
            platform=platform,
            with_services=_names("with_services", with_services),
            without_services=_names("without_services", without_services),
            flags=_names("flags", flags),
            scope=scope,
            mode=mode,
            policy=policy,
            plan=plan if type(plan) is bool else _flag(plan),
        )

    def composition_key(self) -> "Request":
        """Plan mode and the session never change what is composed, only decisions: drop them for view caching."""
        if self.plan or self.session is not None:
            return self.model_copy(update={"plan": False, "session": None})
        return self

    def model_copy(self, update: dict[str, Any] | None = None) -> "Request":
        """A copy with `update` applied (and checked)."""
        return replace(self, **(update or {}))

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """The fields as a dict; mode="json" gives sorted lists for the sets (JSON has no sets)."""
        fields = {name: getattr(self, name) for name in _FIELDS}
        if mode == "json":
            fields.update({name: sorted(fields[name]) for name in ("with_services", "without_services", "flags")})
        return fields


_FIELDS = tuple(field.name for field in fields(Request) if field.name != "session")
