"""`dshc init`: set a project up under the `guarded` policy (`cli/init.py`)."""
from __future__ import annotations


def add_parser(sub) -> None:
    from ..init import add_parser
    add_parser(sub)


def run(args, out, err) -> int:
    from ..init import cmd_init
    return cmd_init(args, out, err)
