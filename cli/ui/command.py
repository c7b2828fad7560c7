"""`dshc ui [PATH…] [--port P] [--against TREE…]`: load and watch declarations, serve the explorer on the
loopback address.

Prints the address once it listens (the port is known even with `--port 0`), then serves until
interrupted; a port that cannot be bound is unusable input (exit 2).
"""

from __future__ import annotations

import argparse
import os

from ...compiler.diagnostics import DshError, invalid_request

DEFAULT_PORT = 8765


def add_parser(sub, load_flags) -> None:
    p = sub.add_parser("ui", help="explore the tool surface in a local web page (matrix, explain, diff, graph)")
    p.add_argument("paths", nargs="*", metavar="PATH", help="declaration files or folders to add and watch")
    p.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"port on 127.0.0.1 (default: {DEFAULT_PORT}; 0 picks a free one)",
    )
    p.add_argument(
        "--against",
        action="append",
        default=[],
        metavar="TREE",
        help="a further declaration tree the diff tab may compare with (repeatable); the page reads no other path",
    )
    load_flags(p)


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"`{text}` is not a port number (0-65535)")
    return int(text)


def cmd_ui(args, out, err) -> int:
    import signal  # here, not at the top: `dshc --help` builds this parser

    import uvicorn

    from ..command_context import catalog_of as _catalog
    from .live import LiveProgram
    from ..listener import Bind, listen, timely_protocol
    from .server import build_app

    catalog = _catalog(args)
    paths = list(args.paths) + list(args.load)
    for path in paths + list(args.against):  # a typo in a path is a usage error now, not an empty page later
        if not os.path.exists(path):
            raise DshError([invalid_request(f"`{path}` does not exist", "name .dsh files or folders holding them")])
    sock = listen(
        Bind("127.0.0.1", args.port, False),  # before loading: a busy port is refused at once
        "choose another port with --port, or --port 0 for any free one",
    )
    port = sock.getsockname()[1]
    from ...compiler.program import Program  # the page's program: not loaded to build `dshc --help`

    live = LiveProgram(lambda: Program.load(paths, catalog=catalog, shipped=not args.no_shipped), paths)
    if live.error:
        err.write(live.error + "\n")
        err.write("dshc ui: serving anyway; fix the file and the page updates\n")
    running: dict = {}  # the app reads the server's stop flag, and the server needs the app
    app = build_app(live, catalog, stopping=lambda: running["server"].should_exit, trees=args.against)
    server = running["server"] = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2, http=timely_protocol())
    )
    out.write(f"dshc ui: serving http://127.0.0.1:{port}/ (Ctrl-C to stop)\n")
    out.flush()
    live.start()
    try:
        # uvicorn shuts down gracefully, then raises the signal again: SIGTERM ends the process
        # as a signal (status 143), SIGINT arrives here as KeyboardInterrupt
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    finally:
        live.stop()
        sock.close()
    return 0
