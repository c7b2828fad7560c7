"""Upstream MCP servers: connect as a client (official SDK), list their tools, forward allowed calls.

In: the `upstream` Endpoints of the loaded sources. Out: a catalog with one `mcp:NAME` package per
upstream, the set of upstreams that answer (each is the provider service `mcp:NAME` gate 5 reads),
and, for `dshc serve`, an UpstreamPool that keeps them connected and tool bodies that forward calls.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import sys
import threading
from typing import Any, Callable, Iterable

import anyio
from mcp import Client, StdioServerParameters

from ..compiler import upstream
from ..compiler.catalog import Catalog
from ..compiler.diagnostics import DshError
from ..compiler.program import SourceFile, parse_files
from ..compiler.render import human

LIST_TIMEOUT_S = 20.0  # a cold `uvx`/`python -m` start of an upstream can take seconds
PING_EVERY_S = 1.0  # how often a connected upstream is asked for its tools (liveness and changes)
LIVENESS_TIMEOUT_S = 5.0
RETRY_EVERY_S = 0.5


def _client(endpoint: upstream.Endpoint) -> Client:
    if endpoint.url is not None:
        return Client(endpoint.url, cache=None)
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


def _cache_file(endpoint: upstream.Endpoint) -> str:
    root = os.environ.get("DSHC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "dshc")
    key = json.dumps([endpoint.name, endpoint.command, endpoint.args, endpoint.env, endpoint.url])
    return os.path.join(root, "upstreams", f"{endpoint.name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json")


def known_tools(endpoint: upstream.Endpoint, live: list | None) -> list | None:
    """The live tool list (remembered on disk), else the last one this endpoint answered, else None.

    A server that is down keeps its tools listed (the wire list does not move) and gate 5 fails them."""
    path = _cache_file(endpoint)
    if live is not None:
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with os.fdopen(os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                           encoding="utf-8") as handle:
                json.dump(live, handle)
            os.replace(path + ".tmp", path)
        return live
    try:
        if not _private(path) or not _private(os.path.dirname(path)):
            return None  # descriptions reach the model: never from a file someone else could have written
        with open(path, encoding="utf-8") as handle:
            remembered = json.load(handle)
    except (OSError, ValueError):
        return None
    return remembered if isinstance(remembered, list) else None


def _private(path: str) -> bool:
    info = os.lstat(path)
    return info.st_uid == os.getuid() and not info.st_mode & 0o022 and not os.path.islink(path)


async def fetch_all(endpoints) -> dict[str, list | None]:
    """Every endpoint's live tool list (None: no answer), fetched side by side."""
    found: dict[str, list | None] = {}

    async def one(endpoint) -> None:
        found[endpoint.name] = await fetch_tools(endpoint)

    async with anyio.create_task_group() as group:
        for endpoint in endpoints:
            group.start_soon(one, endpoint)
    return found


def source_endpoints(files: Iterable[SourceFile]) -> tuple[upstream.Endpoint, ...]:
    """The upstreams the files declare; only files that mention `upstream` are parsed here."""
    candidates = [f for f in files if b"upstream" in f.data]
    if not candidates:
        return ()
    documents, diags, _ = parse_files(candidates)
    if any(d.severity == "error" for d in diags):
        return ()  # the Program reports syntax errors with every other file
    found, problems = upstream.endpoints(documents)
    if problems:
        raise DshError(problems)
    return found


def build_catalog(catalog: Catalog, endpoints, tool_lists: dict[str, list | None], warn: Callable | None = None):
    """The catalog with a package per endpoint (an unreachable one has none of its tools yet)."""
    packages = []
    for endpoint in endpoints:
        package, diags = upstream.package(endpoint, tool_lists.get(endpoint.name))
        errors = [d for d in diags if d.severity == "error"]
        if errors:
            raise DshError(errors)
        if diags and warn is not None:
            warn(diags)
        packages.append(package)
    return upstream.with_packages(catalog, packages)


def with_upstreams(files: list[SourceFile], catalog: Catalog, err=None) -> tuple[Catalog, frozenset[str]]:
    """For the one-shot commands: connect to every declared upstream once.

    Returns the catalog with their packages and the services of those that answered."""
    endpoints = source_endpoints(files)
    if not endpoints:
        return catalog, frozenset()
    live = anyio.run(fetch_all, endpoints)
    tool_lists = {e.name: known_tools(e, live.get(e.name)) for e in endpoints}
    stream = err or sys.stderr
    catalog = build_catalog(catalog, endpoints, tool_lists, lambda diags: stream.write(human(diags) + "\n"))
    # a server that answers with no tools provides no service a request could name
    return catalog, frozenset(e.service for e in endpoints if live.get(e.name) is not None) & catalog.services


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
        self._group = None
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

