"""`dshc ui`: the explorer, a local web page (`cli/ui/`); its modules load only for it."""

from __future__ import annotations

from ..flags import load_flags


def add_parser(sub) -> None:
    from ..ui.command import add_parser

    add_parser(sub, load_flags)


def run(args, out, err) -> int:
    from ..ui.command import cmd_ui

    return cmd_ui(args, out, err)
