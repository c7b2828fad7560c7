"""`dshc audit`: denials by rule, tools never used, a session's timeline, from a log (`cli/audit.py`)."""

from __future__ import annotations

from ..flags import load_flags
from ..preset_argument import add_preset


def add_parser(sub) -> None:
    p = sub.add_parser("audit", help="denials by rule, tools never used, a session's timeline, from a log or DSN")
    p.add_argument(
        "log",
        metavar="EVENTS.jsonl|DSN",
        help="a JSONL event log or a postgresql:// DSN; or `verify`, "
        "then the log: check its hash chain (exit 1 at the first edited, missing, moved or cut record)",
    )
    p.add_argument("target", nargs="?", metavar="LOG|DSN", help="after `verify`: the log whose chain is checked")
    p.add_argument(
        "--head",
        action="append",
        metavar="SHA256",
        help="with `verify`: a head an earlier verify printed, which the log must still hold (repeatable)",
    )
    add_preset(p, help="list the tools of this preset's view that no call used")
    p.add_argument("--session", metavar="ID", help="show this session's timeline")
    load_flags(p)


def run(args, out, err) -> int:
    from ..audit import cmd_audit

    return cmd_audit(args, out, err)
