"""The decision API served beside MCP by `dshc serve --http`: JSON requests in, decisions out.

POST /v1/decide, /v1/view, /v1/explain answer from the Program `Served` holds (so --watch reloads
apply), in the server's context (its policy and workspace unless --caller-context); /healthz, /readyz and
Prometheus /metrics. A bad request is a 400 with diagnostics JSON.
"""

from __future__ import annotations

import logging
import time

import anyio.to_thread

from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..compiler.diagnostics import DshError, invalid_request
from ..compiler.policy import MAX_DEPTH, shape_problem
from ..compiler.render import diagnostics_json
from ..compiler.request import CONTEXT_FIELDS, Request
from .request_body import strict_json

MAX_BODY = 256 * 1024  # bytes: a decision request is small; a larger body is refused unread
CONTEXT_KEYS = frozenset(CONTEXT_FIELDS)
VIEW_FORMATS = ("openai", "anthropic", "gemini", "mcp", "json")
CALLER_CONTEXT_HELP = "start `dshc serve` with --caller-context to let each request name its policy and workspace"
_log = logging.getLogger("dshc.decision_api")


class _Metrics:
    """Decision counts by effect and deciding rule, and latency per endpoint, in a private registry."""

    def __init__(self):
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry()
        self.decisions = Counter(
            "dshc_decisions", "Decisions answered by /v1/decide", ("effect", "rule"), registry=self.registry
        )
        self.latency = Histogram(
            "dshc_request_seconds",
            "Time to answer a decision API request",
            ("endpoint",),
            registry=self.registry,
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
        )
        self.rejected = Counter("dshc_bad_requests", "Requests answered 400", ("endpoint",), registry=self.registry)


def _bad(message: str, help: str) -> DshError:
    return DshError([invalid_request(message, help)])


def _as_request(context, base: Request, caller_context: bool) -> Request:
    """The body's `context` object over the server's own Request; an unknown key or a bad value is refused,
    and so is a `policy` unless the server lets callers choose it (--caller-context)."""
    if context is None:
        context = {}
    if not isinstance(context, dict):
        raise _bad("`context` must be a JSON object", f"keys: {', '.join(sorted(CONTEXT_KEYS))}")
    unknown = sorted(set(context) - CONTEXT_KEYS)
    if unknown:
        raise _bad(f"unknown context key `{unknown[0]}`", f"keys: {', '.join(sorted(CONTEXT_KEYS))}")
    if "policy" in context and not caller_context:
        raise _bad(
            f"this server decides under its own policy `{base.policy or '(the host default)'}`; "
            "a request cannot name another",
            CALLER_CONTEXT_HELP,
        )
    fields = {CONTEXT_FIELDS[key]: value for key, value in context.items()}
    try:
        return base.model_copy(update=fields)
    except (ValueError, TypeError) as exc:
        first = exc.errors()[0] if hasattr(exc, "errors") else {"loc": (), "msg": str(exc)}
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise _bad(f"context `{where}`: {first.get('msg')}", "see `dshc compile --help` for each option's values")


async def _body(http: HttpRequest) -> dict:
    """The request's JSON object, refused when too large, not JSON, too deep or not an object."""
    size = http.headers.get("content-length")
    if size is not None and size.isdigit() and int(size) > MAX_BODY:
        raise _bad(f"request body is over {MAX_BODY} bytes", "send one call per request")
    raw = b""
    async for chunk in http.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise _bad(f"request body is over {MAX_BODY} bytes", "send one call per request")
    try:
        value = strict_json(raw)
    except RecursionError:
        raise _bad(f"request body nests deeper than {MAX_DEPTH} levels", "flatten the call's arguments")
    except ValueError as exc:
        raise _bad(f"request body is not valid JSON: {exc}", 'e.g. {"tool": "bash", "args": {"command": "ls"}}')
    if not isinstance(value, dict):
        raise _bad("request body must be a JSON object", 'e.g. {"tool": "bash", "args": {}, "context": {}}')
    return value


def _tool(body: dict) -> str:
    tool = body.get("tool")
    if not isinstance(tool, str) or not tool:
        raise _bad("`tool` must be a tool name", 'e.g. {"tool": "bash"}')
    return tool


def _args(body: dict) -> dict:
    args = body.get("args", {})
    if not isinstance(args, dict):
        raise _bad("`args` must be a JSON object", 'e.g. {"args": {"command": "ls"}}')
    problem = shape_problem(args, text=True)  # a NUL or a lone surrogate, refused as the runtime refuses it
    if problem is not None:
        raise _bad(f"`args`: {problem}", "flatten the call's arguments")
    return args


def routes(served) -> list[Route]:
    """The API's routes over `served` (its `.program` is read per request, so reloads apply)."""
    metrics = _Metrics()

    caller_context = served.options.caller_context

    def request_of(body: dict) -> Request:
        return _as_request(body.get("context"), served.request(), caller_context)

    def decide(body: dict) -> dict:
        program, request, tool, args = served.program, request_of(body), _tool(body), _args(body)
        workspace = body.get("workspace", served.options.workspace)
        if "workspace" in body and not caller_context:
            raise _bad("this server decides for its own workspace; a request cannot name another", CALLER_CONTEXT_HELP)
        if not isinstance(workspace, str):
            raise _bad("`workspace` must be a path", 'e.g. {"workspace": "/srv/project"}')
        program.require_tool(request, tool)
        from .call_decision import decide_call, invalid_text

        decided = decide_call(program, request, tool, args, workspace)
        if decided.invalid is not None:  # not a call the runtime would run: a bad request
            raise _bad(
                f"`args`: {invalid_text(tool, decided.invalid, hint=False)}",
                decided.invalid.hint or "send the arguments the tool's schema names (`POST /v1/view`)",
            )
        rules = [rule for rule, _ in decided.deciding]
        metrics.decisions.labels(decided.effect, rules[0] if rules else decided.gate).inc()
        return {**decided.to_json(), "fingerprint": program.view(request).fingerprint}

    def view(body: dict):
        fmt = body.get("format", "json")
        if fmt not in VIEW_FORMATS:
            raise _bad(f"unknown format `{fmt}`", f"formats: {', '.join(VIEW_FORMATS)}")
        frozen = served.program.view(request_of(body))
        if fmt == "json":
            return Response(frozen.canonical_json(), media_type="application/json")
        from ..compiler.interop.exports import export

        data, notes = export(frozen, fmt, False)
        return {"format": fmt, "tools": data, "notes": list(notes)}

    def explain(body: dict) -> dict:
        from .explanation import explain_json

        tool = _tool(body)
        return explain_json(tool, served.program.explain(request_of(body), tool))

    def endpoint(name: str, answer):
        async def handle(http: HttpRequest) -> Response:
            started = time.perf_counter()
            try:
                body = await _body(http)
                # on a worker thread, as MCP calls are: a cold context's first decision (a composition, a
                # policy's index) does not hold up the requests and streams the event loop is serving
                result = await anyio.to_thread.run_sync(answer, body)
                return result if isinstance(result, Response) else JSONResponse(result)
            except DshError as exc:
                metrics.rejected.labels(name).inc()
                return JSONResponse({"diagnostics": diagnostics_json(exc.diagnostics)}, status_code=400)
            except Exception:  # fail closed: no traceback leaves the server, the log keeps it
                _log.exception("decision API %s failed", name)
                return JSONResponse({"error": "internal error; the call is not decided"}, status_code=500)
            finally:
                metrics.latency.labels(name).observe(time.perf_counter() - started)

        return handle

    async def healthz(_http: HttpRequest) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(_http: HttpRequest) -> Response:
        ready = served.program is not None
        return JSONResponse({"ready": ready}, status_code=200 if ready else 503)

    async def metrics_text(_http: HttpRequest) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return [
        Route("/v1/decide", endpoint("decide", decide), methods=["POST"]),
        Route("/v1/view", endpoint("view", view), methods=["POST"]),
        Route("/v1/explain", endpoint("explain", explain), methods=["POST"]),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics_text),
    ]
