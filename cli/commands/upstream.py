"""`dshc upstream`: list and remember the tools of the declared upstream MCP servers (`cli/upstream_refresh.py`)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser(
        "upstream",
        help="list the tools of the declared upstream MCP servers, started in the "
        "sandbox, and remember them for the commands that read declarations",
    )
    p.add_argument(
        "action",
        choices=["refresh"],
        help="refresh: start each upstream once, confined, and keep the tool list it answers",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="declaration files or folders")
    p.add_argument(
        "--network",
        action="store_true",
        help="let the started commands reach the network (e.g. `uvx` fetching its package); off by default",
    )
    p.add_argument("--load", action="append", default=[], metavar="PATH", help="also read the upstreams of PATH")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args, out, err) -> int:
    from ..upstream_refresh import cmd_upstream

    return cmd_upstream(args, out, err)
