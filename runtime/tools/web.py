"""tool-web: web_search and web_fetch through a web provider. In: the call and the configured
provider id (`DSHC_WEB_PROVIDER`, None for "pick the one usable provider"); out: the provider's
answer, or the reference's WebError code saying why no provider could take the call.
No provider ships with dshc, so on a stock install every call fails WEB_PROVIDER_UNAVAILABLE."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .base import ToolContext, ToolError, fail


@dataclass(frozen=True)
class WebProvider:
    id: str
    usable: bool  # e.g. an API key could be resolved
    search: Callable[[Mapping[str, Any], ToolContext], dict] | None = None
    fetch: Callable[[Mapping[str, Any], ToolContext], dict] | None = None


PROVIDERS: dict[str, WebProvider] = {}  # id -> provider; an embedding application registers its own


def choose(configured: str | None, registered: Mapping[str, WebProvider]) -> WebProvider:
    """The configured provider when it is registered and usable; with none configured, the only
    usable one. Ambiguity is an error, never a guess."""
    if configured:
        provider = registered.get(configured)
        if provider is None:
            raise fail("web-configured-missing", provider=configured)
        if not provider.usable:
            raise fail("web-configured-unavailable", provider=configured)
        return provider
    usable = sorted(p.id for p in registered.values() if p.usable)
    if not usable:
        raise fail("web-unavailable")
    if len(usable) > 1:
        raise fail("web-ambiguous", providers=", ".join(usable))
    return registered[usable[0]]


def _call(operation: str) -> Callable[[Mapping[str, Any], ToolContext], dict]:
    def body(args: Mapping[str, Any], ctx: ToolContext) -> dict:
        provider = choose(ctx.web_provider, PROVIDERS)
        run = getattr(provider, operation)
        if run is None:
            raise fail("web-provider-error", provider=provider.id, reason=f"it offers no {operation}")
        try:
            return run(args, ctx)
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - a provider failure is the call's error, with its code
            raise fail("web-provider-error", provider=provider.id, reason=str(exc) or type(exc).__name__) from None

    body.__name__ = body.__qualname__ = f"web_{operation}"
    return body


def ready(configured: str | None) -> bool:
    try:
        choose(configured, PROVIDERS)
    except ToolError:
        return False
    return True


BODIES = {"tool-web/web_search": _call("search"), "tool-web/web_fetch": _call("fetch")}
RENDERERS: dict = {}
