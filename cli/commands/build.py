"""`dshc build`: a signed policy bundle (`cli/bundle.py`)."""
from __future__ import annotations

from ..flags import load_flags


def add_parser(sub) -> None:
    from ..bundle import add_parser
    add_parser(sub, load_flags)


def run(args, out, err) -> int:
    from ..bundle import cmd_build
    return cmd_build(args, out, err)
