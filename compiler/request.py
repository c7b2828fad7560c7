"""Request: the context of one model request. Frozen, hashable: it is the cache key of a view."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator


class Request(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "web"
    preset: str | None = None
    platform: Literal["linux", "darwin", "win32"] = "linux"
    with_services: frozenset[str] = frozenset()
    without_services: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    scope: str = "root"
    mode: Literal["native", "code", "both"] | None = None
    policy: str | None = None
    plan: bool = False

    @field_validator("with_services", "without_services", "flags", mode="before")
    @classmethod
    def _as_frozenset(cls, value):
        return frozenset(value or ())

    def composition_key(self) -> "Request":
        """Plan mode never changes what is composed, only decisions: drop it for view caching."""
        return self.model_copy(update={"plan": False})
