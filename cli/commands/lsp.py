"""`dshc lsp`: the language server over stdio (`cli/lsp/`); pygls loads only for it."""

from __future__ import annotations


def add_parser(sub) -> None:
    from ..lsp.command import add_parser

    add_parser(sub)


def run(args, out, err) -> int:
    from ..lsp.command import run

    return run(args, out, err)
