"""`dshc lsp`: its arguments, and the run that serves LSP over stdin/stdout until the editor exits."""

from __future__ import annotations

TYPE_CHECKING = False  # `dshc --help` builds this parser: no `import typing` for annotations
if TYPE_CHECKING:
    import argparse
    from typing import TextIO


def add_parser(sub) -> None:
    p = sub.add_parser("lsp", help="serve the language server protocol over stdio (for editors)")
    p.add_argument("--stdio", action="store_true", help="accepted for editor clients; stdio is the only transport")
    p.add_argument(
        "--load",
        action="append",
        default=[],
        metavar="PATH",
        help="also load declarations from PATH (besides a project's and each file's folder)",
    )
    p.add_argument(
        "--catalog",
        metavar="DIR",
        action="append",
        default=[],
        help="add a catalog overlay, as every other command does (repeatable)",
    )


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .server import build_server  # pygls loads only for this command

    server = build_server(tuple(args.catalog), tuple(args.load))
    server.start_io()
    return 0
