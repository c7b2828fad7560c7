"""`dshc serve`: the compiled view as an MCP server (stdio or streamable HTTP), with the decision API."""

from __future__ import annotations

from ..flags import context_flags


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="serve the compiled view as an MCP server (stdio, or --http HOST:PORT)")
    context_flags(p)
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="streamable HTTP on HOST:PORT instead of stdio (an IP address or localhost; IPv6 in brackets)",
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="let --http bind a non-loopback address (needs a token: --token-file or $DSHC_TOKEN)",
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help="every HTTP request must carry `Authorization: Bearer "
        "TOKEN`, TOKEN read from FILE (default: $DSHC_TOKEN, if set)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="a further Host header value to answer (a proxy's name); repeatable",
    )
    p.add_argument(
        "--caller-context",
        action="store_true",
        help="the decision API lets each request name its `policy` and `workspace` (default: the server's own)",
    )
    p.add_argument(
        "--reuse-port",
        action="store_true",
        help="with --http: let several `dshc serve` processes listen on one port (SO_REUSEPORT); "
        "the kernel spreads connections among them",
    )
    p.add_argument("--watch", action="store_true", help="recompile when the loaded files change; notify clients")
    p.add_argument(
        "--bundle", metavar="FILE|DIR", help="serve a signed bundle (the newest in DIR); hot-swap to newer ones"
    )
    p.add_argument("--trust", metavar="PUBKEY", help="the key --bundle must be signed by")
    p.add_argument(
        "--output-schema",
        metavar="FILE.json",
        help="the JSON Schema `structured_output` results must match, listed as its parameters "
        "(workflow and ralph children)",
    )
    p.add_argument(
        "--log", metavar="EVENTS.jsonl|DSN", help="append the durable event log here (a file, or postgresql://…)"
    )
    p.add_argument("--workspace", metavar="DIR", default=".", help="workspace root (default: the current directory)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS", help="per-call timeout")


def run(args, out, err) -> int:
    from ..serve import cmd_serve

    return cmd_serve(args, out, err)
