"""`dshc ls`: list presets, hosts, scopes, policies, command classes, packages or tools (`cli/ls.py`)."""
from __future__ import annotations

from ..flags import load_flags


def add_parser(sub) -> None:
    from ..ls import add_parser
    add_parser(sub, load_flags)


def run(args, out, err) -> int:
    from ..ls import cmd_ls
    return cmd_ls(args, out, err)
