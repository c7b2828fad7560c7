"""A LiveProgram → the Starlette app: the page, its static assets, a JSON API and a server-sent event stream.

Requests only read: nothing on disk is written, and only the declaration trees `dshc ui` was given are read.
The listeners' Guard answers only to this server's own loopback names and origin, and the POST routes take only
`application/json`, so another site's page can neither read nor drive it.
"""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path
from typing import Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request as HttpRequest
from starlette.responses import FileResponse, JSONResponse, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ...compiler.diagnostics import DshError
from ...compiler.graph import composition_graph
from ...compiler.render import diagnostics_json, human
from ..listener import Guard
from ..request_body import strict_json
from . import diffs, surface, svg
from .live import LiveProgram

STATIC = Path(str(resources.files("dshc.cli.ui") / "static"))
EVENT_POLL_SECONDS = 0.2
HEARTBEAT_SECONDS = 15.0


class _BadInput(Exception):
    pass


def build_app(live: LiveProgram, catalog=None, stopping: Callable[[], bool] = lambda: False, trees=()) -> Starlette:
    """`stopping()` turns true when the server shuts down: event streams then end instead of holding it up;
    `trees`: further declaration trees the diff may compare with (beside the watched ones)."""
    comparable = diffs.given_trees([*live.watched, *trees])

    def current():
        program = live.program
        if program is None:
            raise _BadInput(live.state()["error"] or "the declarations did not load")
        return program

    def api(compute):
        """An endpoint over a JSON body; a DshError is the user's input (400) with its caret excerpts."""

        async def endpoint(request: HttpRequest):
            if request.method == "POST" and request.headers.get("content-type", "").split(";")[0] != "application/json":
                return JSONResponse({"error": "send the body as application/json"}, status_code=415)
            try:
                body = strict_json(await request.body()) if request.method == "POST" else {}
            except (ValueError, RecursionError) as exc:
                return JSONResponse(
                    {"error": f"the body is not usable JSON: {getattr(exc, 'msg', exc)}"}, status_code=400
                )
            try:
                if not isinstance(body, dict):
                    raise _BadInput("the body must be a JSON object")
                return JSONResponse(await run_in_threadpool(compute, body))
            except _BadInput as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)
            except DshError as exc:
                program = live.program
                sources = {**(program.sources if program else {}), **exc.sources}
                return JSONResponse(
                    {
                        "error": human(exc.diagnostics, sources=sources),
                        "diagnostics": diagnostics_json(exc.diagnostics),
                    },
                    status_code=400,
                )

        return endpoint

    def meta(body):
        program = current()
        return {
            "values": surface.axis_values(program),
            "axes": list(surface.AXES),
            "classes": surface.argument_classes(program),
            "state": live.state(),
        }

    def matrix(body):
        args = body.get("args")
        if args is not None and not isinstance(args, dict):
            raise _BadInput("args must be a JSON object")
        colour = body.get("colour", "gate")
        if colour not in ("gate", "decision"):
            raise _BadInput("colour is `gate` or `decision`")
        vary = body.get("vary") or []
        if not isinstance(vary, list) or not set(vary) <= set(surface.AXES):
            raise _BadInput(f"vary is a list of axes: {', '.join(surface.AXES)}")
        return surface.matrix(current(), _object(body, "base"), vary, colour, args)

    def explain(body):
        tool = body.get("tool")
        if not isinstance(tool, str):
            raise _BadInput("name the tool")
        args = body.get("args")
        return surface.explain(current(), _object(body, "context"), tool, args if isinstance(args, dict) else None)

    def diff(body):
        old, new = body.get("old"), body.get("new")
        if not isinstance(old, str) or not isinstance(new, str) or not old.strip() or not new.strip():
            raise _BadInput("give both sides: a tree (`@current`, `@shipped`, a path) or a context `key=value,…`")
        only = surface.to_request(body["only"]) if isinstance(body.get("only"), dict) else None
        return diffs.diff(current(), old, new, catalog, only, comparable)

    def graph(body):
        program = current()
        request = surface.to_request(_object(body, "context"))
        g = composition_graph(program.gate_context(request))
        title = (
            f"composition of preset {request.preset or '(host default)'} on host {request.host}, "
            f"{request.platform}, scope {request.scope}"
        )
        return {"svg": svg.to_svg(g, title), "cuts": svg.cut_list(g), "title": title}

    def state(body):
        return live.state()

    async def events(request: HttpRequest):
        async def stream():
            seen, quiet = None, 0.0
            while not stopping():
                if await request.is_disconnected():
                    return
                now = live.state()
                if now["version"] != seen:
                    seen, quiet = now["version"], 0.0
                    yield f"event: state\ndata: {json.dumps(now)}\n\n"
                elif quiet >= HEARTBEAT_SECONDS:
                    quiet = 0.0
                    yield ": still here\n\n"
                await asyncio.sleep(EVENT_POLL_SECONDS)
                quiet += EVENT_POLL_SECONDS

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        )

    async def index(request: HttpRequest):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    routes = [
        Route("/", index),
        Route("/api/meta", api(meta)),
        Route("/api/state", api(state)),
        Route("/api/matrix", api(matrix), methods=["POST"]),
        Route("/api/explain", api(explain), methods=["POST"]),
        Route("/api/diff", api(diff), methods=["POST"]),
        Route("/api/graph", api(graph), methods=["POST"]),
        Route("/api/events", events),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, middleware=[Middleware(Guard)])


def _object(body: dict, key: str) -> dict:
    value = body.get(key) or {}
    if not isinstance(value, dict):
        raise _BadInput(f"{key} must be a JSON object")
    return value
