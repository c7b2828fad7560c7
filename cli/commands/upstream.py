"""`dshc upstream`: list and remember the tools of the declared upstream MCP servers (`cli/upstream_refresh.py`)."""
from __future__ import annotations


def add_parser(sub) -> None:
    from ..upstream_refresh import add_parser
    add_parser(sub)


def run(args, out, err) -> int:
    from ..upstream_refresh import cmd_upstream
    return cmd_upstream(args, out, err)
