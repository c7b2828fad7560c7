"""`dshc decide TOOL --args JSON`: one call's decision. Its function, and the plain command line it reads
without argparse, live in `cli/decide.py`, which a per-call process loads alone."""

from __future__ import annotations

from ..flags import context_flags


def add_parser(sub) -> None:
    p = sub.add_parser("decide", help="decide one tool call under a policy")
    p.add_argument("tool", metavar="TOOL")
    p.add_argument("--args", default="{}", metavar="JSON", help="the call's arguments as a JSON object")
    p.add_argument("--workspace", metavar="DIR", help="workspace root for path tests (default: the current directory)")
    context_flags(p)


def run(args, out, err) -> int:
    from ..decide import cmd_decide

    return cmd_decide(args, out, err)
