"""The tool lists of the upstream MCP servers the sources declare, as remembered in the user's cache.

In: source files. Out: their `upstream` Endpoints, and the catalog with one `mcp:NAME` package per upstream
built from the list each last answered. Nothing here starts or reaches a server: a command that reads
declarations (`check`, `diff`, `verify`, `explain` …) must not run the code a file under review names. The
lists are written by `dshc upstream refresh` (which runs the command in the sandbox) and by `dshc serve`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import sys

from ..compiler import upstream
from ..compiler.diagnostics import Diagnostic, DshError
from ..compiler.program import parse_files
from ..compiler.render import human

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import Callable, Iterable

    from ..compiler.catalog import Catalog
    from ..compiler.program import SourceFile

REFRESH = "dshc upstream refresh"


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


def cache_file(endpoint: upstream.Endpoint) -> str:
    """Where the list of this very endpoint (name, command, args, env, url) is kept: another command is a miss."""
    root = os.environ.get("DSHC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "dshc"
    )
    key = json.dumps([endpoint.name, endpoint.command, endpoint.args, endpoint.env, endpoint.url])
    return os.path.join(root, "upstreams", f"{endpoint.name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json")


def known_tools(endpoint: upstream.Endpoint, live: list | None) -> list | None:
    """The live tool list (remembered on disk), else the last one this endpoint answered, else None.

    A server that is down keeps its tools listed (the wire list does not move) and gate 5 fails them."""
    path = cache_file(endpoint)
    if live is not None:
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            # a temporary name of this process's own: two refreshing at once never write into one file
            temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with os.fdopen(
                os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8"
            ) as handle:
                json.dump(live, handle)
            os.replace(temporary, path)
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


def build_catalog(catalog: Catalog, endpoints, tool_lists: dict[str, list | None], warn: Callable | None = None):
    """The catalog with a package per endpoint (one whose list is not known has none of its tools yet)."""
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


def remembered(files: list[SourceFile], catalog: Catalog, err=None) -> Catalog:
    """For the commands that read declarations: the catalog with every declared upstream's package, from the
    remembered lists only. An upstream with none has no tools, and a warning names the command that lists
    them; none is said to answer (gate 5 fails its tools: whether it answers is known only to `serve`)."""
    endpoints = source_endpoints(files)
    if not endpoints:
        return catalog
    stream = err or sys.stderr
    lists = {e.name: known_tools(e, None) for e in endpoints}
    unknown = [e for e in endpoints if lists[e.name] is None]
    if unknown:
        stream.write(
            human(
                [
                    Diagnostic(
                        "DSH522",
                        f"no tool list of upstream `{e.name}` is known here; it was not started, as reading a file "
                        "never runs its `upstream` command",
                        e.span,
                        f"`{REFRESH}` lists its tools (starting the command in the sandbox) and remembers them",
                    )
                    for e in unknown
                ]
            )
            + "\n"
        )
    return build_catalog(
        catalog, endpoints, {**lists, **{e.name: [] for e in unknown}}, lambda diags: stream.write(human(diags) + "\n")
    )
