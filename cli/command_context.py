"""The flags most commands share → the Program their sources make and the Request they describe.

Kept apart from the command modules (`commands/`) so that `dshc decide`, spawned once per call, loads
these and not every command's imports.
"""

from __future__ import annotations

from ..compiler.catalog import load_catalog
from ..compiler.catalog_overlay import overlaid_catalog
from ..compiler.facts import CODE_WORKER
from ..compiler.program import Program, read_paths, shipped_sources
from ..compiler.request import Request
from .outcome import write_json  # noqa: F401 - where the commands look for it

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from argparse import Namespace


def catalog_of(args: Namespace):
    """The shipped catalog with each --catalog overlay added, or None for the shipped one alone."""
    return overlaid_catalog(getattr(args, "catalog", None) or ())


def program_of(args: Namespace, paths=()) -> Program:
    files = (shipped_sources() if not args.no_shipped else []) + read_paths(list(paths) + list(args.load))
    return from_files(files, catalog_of(args))


def from_files(files, catalog) -> Program:
    """A Program whose catalog also holds the packages of the upstream MCP servers the files declare, from the
    tool lists remembered for them: reading a file never starts the command it names (`upstream_lists`)."""
    if any(b"upstream" in f.data for f in files):
        from .upstream_lists import remembered

        catalog = remembered(files, catalog or load_catalog())
    return Program.from_files_cached(files, catalog)


def request_of(args: Namespace, code_worker_matters: bool = True) -> Request:
    """The request the flags describe; `code_worker_matters=False` skips probing this machine for
    run_code's worker (a decision about another tool, which must not pay for the look-up)."""
    without = local_without(args) if code_worker_matters else args.without_services
    return Request(
        host=args.host,
        preset=args.preset,
        platform=args.platform,
        with_services=args.with_services,
        without_services=without,
        flags=args.flags,
        scope=args.scope,
        mode=args.mode,
        policy=args.policy,
        plan=args.plan,
    )


def local_without(args: Namespace) -> list[str]:
    """--without, plus the code worker where this machine cannot run programs (unless --with names it)."""
    from ..runtime.code.node_runtime import missing_runtime

    if CODE_WORKER in args.with_services or CODE_WORKER in args.without_services or missing_runtime() is None:
        return list(args.without_services)
    return [*args.without_services, CODE_WORKER]


def line_diagnostics(path: str, problems) -> list:
    """(line, message) problems of a JSONL file; a problem without a line is the file unreadable."""
    from ..compiler.diagnostics import Diagnostic
    from ..compiler.source import Span

    return [
        Diagnostic("DSH107", message, path=path)
        if line is None
        else Diagnostic("DSH405", message, Span(path, line, 1, line, 1) if line else None, path=path)
        for line, message in problems
    ]


def usage_error(message: str):
    """A DshError for arguments that cannot be used together (exit 2)."""
    from ..compiler.diagnostics import Diagnostic, DshError

    return DshError([Diagnostic("DSH405", message)])
