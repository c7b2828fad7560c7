"""Upstream MCP servers: connect as a client (official SDK), list their tools, forward allowed calls.

In: the `upstream` Endpoints of the loaded sources. Out: one connection's tool list (`fetch_tools`, for
`dshc upstream refresh`), and, for `dshc serve`, an UpstreamPool that keeps them connected (the set of
upstreams that answer: each is the provider service `mcp:NAME` gate 5 reads) and tool bodies that forward calls.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, Callable

import anyio
from mcp import Client, StdioServerParameters

from ..compiler import upstream
from .upstream_lists import build_catalog, known_tools, source_endpoints  # noqa: F401 - `serve` reads them here

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

LIST_TIMEOUT_S = 20.0  # a cold `uvx`/`python -m` start of an upstream can take seconds
PING_EVERY_S = 1.0  # how often a connected upstream is asked for its tools (liveness and changes)
LIVENESS_TIMEOUT_S = 5.0
RETRY_EVERY_S = 0.5


def _client(endpoint: upstream.Endpoint) -> Client:
    if endpoint.url is not None:
        return Client(endpoint.url, cache=None)
    if endpoint.command is None:  # `upstream` gives each endpoint one or the other; the parameters would refuse it
        raise ValueError(f"upstream `{endpoint.name}` has neither a command nor a url")
    params = StdioServerParameters(command=endpoint.command, args=list(endpoint.args), env=dict(endpoint.env) or None)
    return Client(params, cache=None)


def _tool_json(tools) -> list[dict]:
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


async def _list_tools(client: Client, refresh: bool = False) -> list[dict]:
    found, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="refresh" if refresh else "use")
        found += _tool_json(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return found


async def fetch_tools(endpoint: upstream.Endpoint, timeout_s: float = LIST_TIMEOUT_S) -> list[dict] | None:
    """One connection: the upstream's tool list, or None if it does not answer in time."""
    try:
        with anyio.fail_after(timeout_s):
            async with _client(endpoint) as client:
                return await _list_tools(client)
    except Exception:  # noqa: BLE001 - any failure to connect or list means: not reachable now
        return None


class UpstreamDown(Exception):
    """The upstream did not answer a forwarded call; the call's result says which and why."""


class UpstreamPool:
    """Keeps one client per upstream connected on the server's event loop, reconnecting when one drops.

    `up` is the set of services (`mcp:NAME`) whose server answers now; `on_change()` runs (on the loop)
    whenever that set or a tool list changes. Bodies call `call()` from worker threads.
    """

    def __init__(self, endpoints, on_change: Callable[[], Any]):
        self.endpoints = {e.name: e for e in endpoints}
        self.tool_lists = {e.name: known_tools(e, None) for e in endpoints}  # until each answers
        self.up: frozenset[str] = frozenset()
        self._tried = {e.name: anyio.Event() for e in endpoints}
        self._clients: dict[str, Client] = {}
        self._on_change = on_change
        self._loop: asyncio.AbstractEventLoop | None = None
        self._group: TaskGroup | None = None
        self._lock = threading.Lock()

    async def run(self) -> None:
        """Run until cancelled: one keeper task per upstream."""
        self._loop = asyncio.get_running_loop()
        async with anyio.create_task_group() as group:
            self._group = group
            for endpoint in self.endpoints.values():
                group.start_soon(self._keep, endpoint)

    def keep(self, endpoints) -> list[str]:
        """Start keeping the upstreams an edit declared (on the loop); returns the names whose declaration
        changed, which keep their first one until a restart."""
        changed = []
        for endpoint in endpoints:
            known = self.endpoints.get(endpoint.name)
            if known is not None:
                if known != endpoint:
                    changed.append(endpoint.name)
                continue
            self.endpoints[endpoint.name] = endpoint
            self.tool_lists[endpoint.name] = known_tools(endpoint, None)
            self._tried[endpoint.name] = anyio.Event()
            if self._group is not None:
                self._group.start_soon(self._keep, endpoint)
        return changed

    async def settled(self, timeout_s: float = LIST_TIMEOUT_S + 5) -> None:
        """Wait until every upstream has answered or failed once (bounded)."""
        with anyio.move_on_after(timeout_s):
            for event in self._tried.values():
                await event.wait()

    async def _keep(self, endpoint: upstream.Endpoint) -> None:
        while True:
            try:
                async with _client(endpoint) as client:
                    with anyio.fail_after(LIST_TIMEOUT_S):
                        tools = await _list_tools(client)
                    self._clients[endpoint.name] = client
                    await self._mark(endpoint, True, tools)
                    while True:  # a fresh tools/list (ping is gone in 2026-07-28) that fails or hangs: gone
                        await anyio.sleep(PING_EVERY_S)
                        with anyio.fail_after(LIVENESS_TIMEOUT_S):
                            tools = await _list_tools(client, refresh=True)
                        await self._mark(endpoint, True, tools)
            except Exception:  # noqa: BLE001 - any failure: down until a reconnect succeeds
                pass
            self._clients.pop(endpoint.name, None)
            await self._mark(endpoint, False, None)
            await anyio.sleep(RETRY_EVERY_S)

    async def _mark(self, endpoint: upstream.Endpoint, alive: bool, tools: list | None) -> None:
        with self._lock:
            before = (self.up, self.tool_lists.get(endpoint.name))
            self.up = self.up | {endpoint.service} if alive else self.up - {endpoint.service}
            if tools is not None:
                self.tool_lists[endpoint.name] = known_tools(endpoint, tools)
            changed = before != (self.up, self.tool_lists.get(endpoint.name))
        self._tried[endpoint.name].set()
        if changed:
            await self._on_change()

    def mark_down(self, name: str) -> None:
        """A forwarded call found the server gone: drop it now, before the next ping notices."""
        endpoint = self.endpoints[name]
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self._mark(endpoint, False, None), self._loop)

    def call(self, name: str, tool: str, arguments: dict, timeout_s: float) -> dict:
        """Forward one call (from a worker thread) and wait for its result as JSON."""
        client, loop = self._clients.get(name), self._loop
        if client is None or loop is None:
            raise UpstreamDown(f"upstream `{name}` is not connected")

        async def forward():
            with anyio.fail_after(timeout_s):
                return await client.call_tool(tool, arguments)

        try:
            result = asyncio.run_coroutine_threadsafe(forward(), loop).result(timeout_s + 1)
        except Exception as exc:  # noqa: BLE001 - a dropped connection, a timeout, a protocol error
            self.mark_down(name)
            raise UpstreamDown(f"upstream `{name}` failed during the call: {exc.__class__.__name__}: {exc}") from None
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def upstream_bodies(pool: UpstreamPool, timeout_s: float) -> dict[str, Callable]:
    """definition id (`mcp:NAME/tool`) → a body that forwards the call; an upstream error is an error result."""
    from ..runtime.tools.base import ToolError

    def body_for(name: str, tool: str):
        def body(arguments, ctx) -> dict:
            try:
                value = pool.call(name, tool, arguments, timeout_s)
            except UpstreamDown as exc:
                raise ToolError(str(exc)) from None
            if value.get("isError"):
                raise ToolError(_text(value) or f"upstream `{name}` reported an error")
            return value

        return body

    bodies = {}
    for name, tools in pool.tool_lists.items():
        for tool in tools or ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                bodies[f"{upstream.package_id(name)}/{tool['name']}"] = body_for(name, tool["name"])
    return bodies


def _text(value: dict) -> str:
    return "\n".join(block.get("text", "") for block in value.get("content") or () if block.get("type") == "text")


def render_upstream(render: Callable) -> Callable:
    """The text a model reads for an upstream result: its text blocks (else the JSON), as the upstream sent it."""

    def rendered(definition: str, args, value) -> str:
        if definition.startswith(upstream.PREFIX) and isinstance(value, dict):
            text = _text(value)
            if text:
                return text
        return render(definition, args, value)

    return rendered
