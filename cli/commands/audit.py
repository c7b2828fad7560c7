"""`dshc audit`: denials by rule, tools never used, a session's timeline, from a log (`cli/audit.py`)."""
from __future__ import annotations

from ..flags import load_flags


def add_parser(sub) -> None:
    from ..audit import add_parser
    add_parser(sub, load_flags)


def run(args, out, err) -> int:
    from ..audit import cmd_audit
    return cmd_audit(args, out, err)
