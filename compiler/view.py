"""GateTable → ToolView: frozen entries in canonical order, canonical JSON, fingerprint.

The fingerprint is the SHA-256 of the RFC 8785 canonical JSON of what reaches the model
(names, descriptions, parameter schemas, and the SDK declarations in code/both mode), so it
is the request-cache prefix: plan mode, readiness and policy never change it.
"""

from __future__ import annotations

from ..common import json_io
from ..common.digest import sha256
from ._base.frozen import record
from .lru import LRU, MISSING
from ._base.memo import cached_property

# id(parameters) -> (parameters, canonical text): schemas are shared between views. Process-wide and shared by
# threads as compose's caches are: the entry holds the schema, so its id names it while the entry lives, and
# threads serialising one schema at once store equal texts (`LRU.put` keeps the first).
_PARAMETER_TEXT: LRU[tuple] = LRU(4096)


def canonical(value) -> bytes:
    """RFC 8785 canonical JSON: by the C encoder where its form is the same (`json_io.canonical`: no float,
    no string beyond the Basic Multilingual Plane), else by rfc8785 (with `re` and `typing`, ~4 ms to load)."""
    text = json_io.canonical(value)
    if text is not None:
        return text
    import rfc8785

    return rfc8785.dumps(value)


@record
class ToolEntry:
    """One tool of a view: its name, where it comes from, its schema and its policy and readiness."""

    name: str
    package: str
    definition: str
    execution: str  # parallel | exclusive
    parameters_json: str  # canonical JSON text: the entry stays immutable all the way down
    description: str
    policy: str  # allow | ask | deny | conditional
    ready: str  # ready | unavailable | unknown

    @property
    def parameters(self) -> dict:
        return json_io.loads(self.parameters_json)

    def wire(self) -> dict:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "package": self.package,
            "definition": self.definition,
            "execution": self.execution,
            "parameters": self.parameters,
            "description": self.description,
            "policy": self.policy,
            "ready": self.ready,
        }


@record(slots=False)
class ToolView:
    """The frozen tool view of one request: the tools a model sees (and code mode's SDK)."""

    preset: str | None
    host: str
    platform: str
    scope: str
    mode: str
    policy: str | None
    tools: tuple[ToolEntry, ...]
    sdk: tuple[ToolEntry, ...] | None

    @cached_property
    def fingerprint(self) -> str:
        wire = {"tools": [t.wire() for t in self.tools]}
        if self.sdk is not None:
            wire["sdk"] = [t.wire() for t in self.sdk]
        return "sha256:" + sha256(canonical(wire)).hexdigest()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)

    def entry(self, name: str) -> ToolEntry | None:
        return next((t for t in (*self.tools, *(self.sdk or ())) if t.name == name), None)

    def to_json(self) -> dict:
        out = {
            "preset": self.preset,
            "host": self.host,
            "platform": self.platform,
            "scope": self.scope,
            "mode": self.mode,
            "policy": self.policy,
            "fingerprint": self.fingerprint,
            "tools": [t.to_json() for t in self.tools],
        }
        if self.sdk is not None:
            out["sdk"] = [t.to_json() for t in self.sdk]
        return out

    def canonical_json(self) -> bytes:
        return canonical(self.to_json())


def make_entry(name: str, registration, tool, policy: str, ready: str) -> ToolEntry:
    parameters = registration.parameters if registration is not None else tool.parameters
    description = registration.description if registration is not None else tool.description
    return ToolEntry(
        name=name,
        package=tool.package,
        definition=tool.definition,
        execution="parallel" if tool.parallel_safe is True else "exclusive",  # only an exact true is parallel
        parameters_json=_parameter_text(parameters),
        description=description,
        policy=policy,
        ready=ready,
    )


def _parameter_text(parameters: dict) -> str:
    """Canonical JSON of a schema, once per schema object: compositions share their shaped schemas and
    never mutate them (`compose._shape`), so a new request context does not re-serialise every tool."""
    found = _PARAMETER_TEXT.find(id(parameters))
    if found is MISSING or found[0] is not parameters:  # the id is of this very object, not one since collected
        found = _PARAMETER_TEXT.put(id(parameters), (parameters, canonical(parameters).decode("utf-8")))
    return found[1]
