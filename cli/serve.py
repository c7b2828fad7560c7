"""`dshc serve`: one compiled context as an MCP server (official SDK), over stdio or streamable HTTP.

In: sources (+ upstream MCP servers they declare), a Request, a workspace. Out: `tools/list` is the
frozen view; `tools/call` runs the ten-stage pipeline with the durable event log (an `ask` becomes an
elicitation); with --watch a changed fingerprint sends `notifications/tools/list_changed`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socket
import sys
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import anyio
import anyio.to_thread
import anyio.from_thread
import mcp_types as types
from mcp.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..compiler.catalog import Catalog, load_catalog
from ..compiler.diagnostics import DshError
from ..compiler.program import Program, SourceFile, read_paths, shipped_sources
from ..compiler.render import human
from ..compiler.request import Request
from ..runtime.scheduler import run_batch
from ..runtime.types import ToolCall
from . import gateway
from .host import session

WATCH_EVERY_S = 0.3
STRUCTURED_OUTPUT = "structured_output"
APPROVAL_KEY = "dshc-approval"
NO_ELICITATION = (
    "this MCP client did not declare the elicitation capability, so dshc could not ask anyone; "
    "an ask without an answer is a deny"
)


@dataclass(frozen=True)
class ServeOptions:
    load: tuple[str, ...]
    shipped: bool
    catalog_dir: str | None
    request: Request
    workspace: str
    log_path: str | None
    timeout_s: float
    watch: bool
    bundle: Any = None  # a bundle.BundleHolder: serve its current Program and hot-swap to newer bundles
    output_schema: dict | None = None  # what `structured_output` must be called with (a child's result)
    caller_context: bool = False  # the decision API lets a request name its policy and workspace
    reuse_port: bool = False  # --http on a port other `dshc serve` processes listen on too


@dataclass
class _Session:
    """The pipeline session of one (sources, upstream readiness) state; replaced when either changes."""

    program: Program
    request: Request
    ctx: Any
    state: Any
    responders: dict = field(default_factory=dict)  # call id -> (call, reason) -> approval outcome
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False

    @property
    def view(self):
        return self.program.view(self.request)


class Served:
    """What `dshc serve` serves: the Program (rebuilt on change), the upstreams, the current session."""

    def __init__(self, options: ServeOptions, warn: Callable[[str], object]):
        self.options = options
        self.warn = warn
        self.base_catalog: Catalog = load_catalog(options.catalog_dir) if options.catalog_dir else load_catalog()
        self.files = self._read()
        self.endpoints = gateway.source_endpoints(self.files)
        self.pool = gateway.UpstreamPool(self.endpoints, self.upstreams_changed)
        self.program: Program | None = None
        self._session: _Session | None = None
        self._lock = threading.Lock()
        self.bus = InMemorySubscriptionBus()
        self.legacy_sessions: set = set()
        self.fingerprint: str | None = None
        self.secret = secrets.token_bytes(32)  # signs the approval questions of 2026-07-28 connections

    # --- sources ---
    def _read(self) -> list[SourceFile]:
        if self.options.bundle is not None:
            return []  # the bundle's Program is already built; it declares no upstreams to start
        return (shipped_sources() if self.options.shipped else []) + read_paths(self.options.load)

    def _build(self, files: list[SourceFile]) -> Program:
        if self.options.bundle is not None:
            return self.options.bundle.current().program
        lists = self.pool.tool_lists
        catalog = gateway.build_catalog(
            self.base_catalog, gateway.source_endpoints(files), lists, lambda diags: self.warn(human(diags))
        )
        return Program.from_files(files, catalog)

    def start(self) -> None:
        self.program = self._build(self.files)
        self.fingerprint = self.current().view.fingerprint  # composes now: a bad request fails at startup

    # --- the session of the current state ---
    def _program(self) -> Program:
        if self.program is None:  # `start` builds it before anything asks
            raise RuntimeError("dshc serve: the sources are not loaded yet")
        return self.program

    def request(self) -> Request:
        # only services the program knows: an upstream that just answered has no tools until the rebuild
        up = self.pool.up & self._program().catalog.services
        base = self.options.request
        return base.model_copy(update={"with_services": base.with_services | up})

    def current(self) -> _Session:
        with self._lock:
            request = self.request()
            found = self._session
            if found is not None and found.program is self.program and found.request == request:
                return found
            if found is not None:
                self._close(found)
            self._session = self._open(self._program(), request)
            return self._session

    def close(self) -> None:
        """At shutdown: the open session's log is closed, so a database log ships its last records now."""
        with self._lock:
            if self._session is not None:
                self._close(self._session)
                self._session = None

    @staticmethod
    def _close(found: _Session) -> None:
        with found.lock:  # a call in flight finishes on the session first
            if found.closed:
                return
            found.closed = True
            found.state.close()
            found.ctx.log.close()

    def _open(self, program: Program, request: Request) -> _Session:
        holder: dict = {}

        def approver(call, reason: str) -> str:
            responder = holder["session"].responders.get(call.id)
            return responder(call, reason) if responder else "unavailable"

        ctx, state = session(
            program,
            request,
            self.options.workspace,
            self.options.log_path,
            approver,
            self.options.timeout_s,
            output_schema=self.options.output_schema,
        )
        ctx.implementations = {**ctx.implementations, **gateway.upstream_bodies(self.pool, self.options.timeout_s)}
        ctx.render = gateway.render_upstream(ctx.render)
        holder["session"] = found = _Session(program, request, ctx, state)
        return found

    # --- changes ---
    async def upstreams_changed(self) -> None:
        """An upstream came or went, or its tool list changed: rebuild, and tell clients if the list moved."""
        if self.program is None:
            return  # still starting: start() builds from what the first round found
        await self.rebuild(self.files)

    async def rebuild(self, files: list[SourceFile]) -> None:
        try:
            changed = self.pool.keep(await anyio.to_thread.run_sync(gateway.source_endpoints, files))
            if changed:
                self.warn(
                    "dshc serve: the declaration of upstream "
                    + ", ".join(f"`{n}`" for n in changed)
                    + " changed; it keeps its first one until dshc serve restarts"
                )
            program = await anyio.to_thread.run_sync(self._build, files)
            with self._lock:
                self.files, self.program = files, program
            fingerprint = (await anyio.to_thread.run_sync(self.current)).view.fingerprint
        except DshError as exc:
            self.warn(
                "dshc serve: the changed sources cannot be used; still serving the last good ones\n"
                + human(exc.diagnostics, sources=exc.sources)
            )
            return
        if fingerprint != self.fingerprint:
            self.fingerprint = fingerprint
            await self.notify_list_changed()

    async def notify_list_changed(self) -> None:
        await self.bus.publish(ToolsListChanged())  # 2026-07-28 clients: their `subscriptions/listen` streams
        for legacy in list(self.legacy_sessions):  # handshake-era clients: on their session
            try:
                await legacy.send_tool_list_changed()
            except Exception:  # noqa: BLE001 - a client that went away just stops hearing about changes
                self.legacy_sessions.discard(legacy)

    async def watch_bundle(self) -> None:
        while True:
            await anyio.sleep(WATCH_EVERY_S)
            if await anyio.to_thread.run_sync(self.options.bundle.poll):
                await self.rebuild(self.files)  # the new session opens; calls in flight finish on the old one

    async def watch(self) -> None:
        seen = _digest(self.files)
        while True:
            await anyio.sleep(WATCH_EVERY_S)
            try:
                files = await anyio.to_thread.run_sync(self._read)
            except DshError as exc:  # a file vanished mid-edit: try again next round
                self.warn(human(exc.diagnostics))
                continue
            digest = _digest(files)
            if digest != seen:
                seen = digest
                await self.rebuild(files)

    # --- calls ---
    def run_call(self, call: ToolCall, responder):
        while True:
            found = self.current()
            with found.lock:
                if found.closed:
                    continue  # replaced between current() and the lock: run on the new one
                if responder is not None:
                    found.responders[call.id] = responder
                try:
                    outcomes, _ = run_batch([call], found.ctx)
                finally:
                    found.responders.pop(call.id, None)
                return outcomes[0]

    def pre_decision(self, name: str, arguments: dict) -> tuple[str, str]:
        """(effect, reason) of a call before it runs: the pipeline's own listener decides it the same way."""
        from .call_decision import decide_call

        found = self.current()
        request = found.request
        if found.program.reads_session(request):  # as the listener will: the facts of this session's records
            from .session_log import session_of_records

            log = found.ctx.log
            request = request.model_copy(update={"session": session_of_records(list(log.records), log.session)})
        decided = decide_call(found.program, request, name, arguments, self.options.workspace, include_guards=False)
        return decided.effect, decided.text()


def _digest(files: list[SourceFile]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.path.encode() + b"\0" + hashlib.sha256(f.data).digest())
    return h.hexdigest()


def _call_digest(secret: bytes, name: str, arguments: dict) -> str:
    """Binds an approval answer to a question this server asked about this very call (the retry carries it back)."""
    text = json.dumps([name, arguments], sort_keys=True, default=str).encode()
    return hmac.new(secret, text, hashlib.sha256).hexdigest()


def _approval_request(name: str, reason: str) -> types.ElicitRequest:
    return types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=f"dshc: allow `{name}` once? {reason}", requested_schema={"type": "object", "properties": {}}
        )
    )


def _outcome(action: str | None) -> str:
    outcomes: dict[str | None, str] = {"accept": "allowed-once", "decline": "rejected"}
    return outcomes.get(action, "cancelled")


def _can_elicit(ctx) -> bool:
    caps = ctx.session.client_capabilities
    return caps is not None and caps.elicitation is not None


def _input_schema(entry, options: ServeOptions) -> dict:
    """What a client sees as a tool's parameters: the view's, except that `structured_output` takes the
    result itself, so with --output-schema its parameters are that schema (the catalog's says so)."""
    if entry.name == STRUCTURED_OUTPUT and options.output_schema is not None:
        return options.output_schema
    return entry.parameters


def build_server(served: Served) -> Server:
    async def list_tools(ctx, params) -> types.ListToolsResult:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            served.legacy_sessions.add(ctx.session)
        view = (await anyio.to_thread.run_sync(served.current)).view
        return types.ListToolsResult(
            tools=[
                types.Tool(name=e.name, description=e.description, input_schema=_input_schema(e, served.options))
                for e in view.tools
            ]
        )

    async def call_tool(ctx, params: types.CallToolRequestParams):
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if not modern:
            served.legacy_sessions.add(ctx.session)
        name, arguments = params.name, dict(params.arguments or {})
        call = ToolCall.from_model(f"mcp-{uuid.uuid4().hex[:12]}", name, arguments)
        elicit = _can_elicit(ctx)
        responder = None
        if elicit and modern:
            answer = (params.input_responses or {}).get(APPROVAL_KEY)
            if answer is None:
                effect, reason = await anyio.to_thread.run_sync(served.pre_decision, name, arguments)
                if effect == "ask":
                    return types.InputRequiredResult(
                        input_requests={APPROVAL_KEY: _approval_request(name, reason)},
                        request_state=_call_digest(served.secret, name, arguments),
                    )
            else:
                bound = hmac.compare_digest(params.request_state or "", _call_digest(served.secret, name, arguments))
                action = getattr(answer, "action", None)
                responder = lambda call, reason: _outcome(action) if bound else "rejected"  # noqa: E731
        elif elicit:

            async def ask(reason: str) -> str:
                result = await ctx.session.elicit_form(
                    f"dshc: allow `{name}` once? {reason}", {"type": "object", "properties": {}}, ctx.request_id
                )
                return _outcome(result.action)

            responder = lambda call, reason: anyio.from_thread.run(ask, reason)  # noqa: E731
        outcome = await anyio.to_thread.run_sync(served.run_call, call, responder)
        result = outcome.result
        text = result.content
        if not elicit and any(r.stage == "approval" and r.note == "unavailable" for r in outcome.state.records):
            text += f" ({NO_ELICITATION})"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=result.is_error)

    return Server(
        "dshc",
        version=_version(),
        instructions="Tools compiled by dshc: every call passes its gates "
        "and policy; `dshc explain TOOL` says why a tool is missing.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(served.bus),
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dshc")
    except PackageNotFoundError:
        return "0"


async def serve(options: ServeOptions, http: tuple | None, ready: Callable[[str], None]) -> None:
    warn = lambda text: sys.stderr.write(text.rstrip("\n") + "\n")  # noqa: E731 - stdout may be the protocol
    served = Served(options, warn)
    server = build_server(served)
    failed: list[DshError] = []
    async with anyio.create_task_group() as group:
        group.start_soon(served.pool.run)
        await served.pool.settled()
        try:
            await anyio.to_thread.run_sync(served.start)
        except DshError as exc:  # reported like any unusable input, after the upstreams are stopped
            failed.append(exc)
        else:
            try:
                await _serve_transport(served, server, options, http, ready, group)
            finally:
                await anyio.to_thread.run_sync(served.close)
        group.cancel_scope.cancel()
    if failed:
        raise failed[0]


async def _serve_transport(served: Served, server: Server, options: ServeOptions, http, ready, group) -> None:
    if options.bundle is not None:
        group.start_soon(served.watch_bundle)
    elif options.watch:
        group.start_soon(served.watch)
    if http is None:
        ready("stdio")
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options(NotificationOptions(tools_changed=True)))
        return
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from .decision_api import routes
    from .listener import Guard, timely_protocol

    sock, token, hosts = http
    # the Guard checks Host and Origin on every route, /mcp and /v1/* alike; the SDK's own check would
    # only know the loopback names, so it is off rather than a second, narrower list
    app = server.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    app.router.routes.extend(routes(served))  # the decision API beside /mcp
    web = uvicorn.Server(
        uvicorn.Config(Guard(app, token, hosts), log_level="warning", lifespan="on", http=timely_protocol())
    )
    host, port = sock.getsockname()[:2]
    ready(f"http://{'[' + host + ']' if ':' in host else host}:{port}/mcp")
    await web.serve(sockets=[sock])


def cmd_serve(args, out, err) -> int:
    from .command_context import request_of as _request
    from .extras import require

    require("serve", "`dshc serve`")  # all of it now: a module first imported inside a task would fail there
    http = None
    if args.http:
        from .listener import listener_token, parse_address

        bind = parse_address(args.http)
        token = listener_token(bind, args.allow_remote, args.token_file)
        http = (bind, token, tuple(args.allow_host))
    elif args.allow_remote or args.token_file or args.allow_host:
        from ..compiler.diagnostics import invalid_request

        raise DshError(
            [
                invalid_request(
                    "--allow-remote, --token-file and --allow-host apply to --http only", "add --http HOST:PORT"
                )
            ]
        )
    if args.reuse_port and (http is None or not hasattr(socket, "SO_REUSEPORT")):
        from ..compiler.diagnostics import invalid_request

        raise DshError(
            [
                invalid_request(
                    "--reuse-port needs --http, on a system with SO_REUSEPORT (Linux, BSD, macOS)",
                    "e.g. --http 127.0.0.1:8765 --reuse-port, one per process",
                )
            ]
        )
    if not os.path.isdir(args.workspace):
        from ..compiler.diagnostics import Diagnostic

        raise DshError([Diagnostic("DSH405", f"workspace `{args.workspace}` is not a folder")])
    holder = None
    if args.bundle:
        from .bundle import serve_holder

        holder = serve_holder(args.bundle, args.trust, err)
    output_schema = None
    if args.output_schema:
        from .output_schema import read_output_schema as _output_schema

        output_schema = _output_schema(args.output_schema)  # refused before serving, like `dshc run`
    request = _request(args)
    if args.policy is None and not args.no_shipped and not args.bundle:
        from .hook import DEFAULT_POLICY  # the same protective default as the hook's

        request = request.model_copy(update={"policy": DEFAULT_POLICY})
    options = ServeOptions(
        tuple(args.load),
        not args.no_shipped,
        args.catalog,
        request,
        os.path.abspath(args.workspace),
        args.log,
        args.timeout,
        args.watch,
        holder,
        output_schema,
        args.caller_context,
        args.reuse_port,
    )

    def ready(where: str) -> None:
        err.write(f"dshc serve: serving {where}\n")
        err.flush()

    listening = None
    if http is not None:
        from .listener import listen

        # bound before the sources load: a busy port is refused at once
        listening = (listen(http[0], reuse_port=args.reuse_port), *http[1:])
    try:
        anyio.run(serve, options, listening, ready)
    except KeyboardInterrupt:
        pass
    finally:
        if listening is not None:
            listening[0].close()
    return 0
