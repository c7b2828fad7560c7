"""`dshc suggest`: the narrowest scope and policy that allow what logged sessions did (`cli/suggest.py`)."""
from __future__ import annotations

from ..flags import context_flags, load_flags


def add_parser(sub) -> None:
    from ..suggest import add_parser
    add_parser(sub, context_flags, load_flags)


def run(args, out, err) -> int:
    from ..suggest import cmd_suggest
    return cmd_suggest(args, out, err)
