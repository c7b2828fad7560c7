"""`dshc test`: run policy test files, `*.test.toml` (`cli/test_runner.py`)."""
from __future__ import annotations

from ..flags import load_flags


def add_parser(sub) -> None:
    from ..test_runner import add_parser
    add_parser(sub, load_flags)


def run(args, out, err) -> int:
    from ..test_runner import cmd_test
    return cmd_test(args, out, err)
