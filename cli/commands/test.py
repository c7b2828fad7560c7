"""`dshc test`: run policy test files, `*.test.toml` (`cli/test_runner.py`)."""

from __future__ import annotations

from ..flags import load_flags


def add_parser(sub) -> None:
    p = sub.add_parser("test", help="run policy test files (*.test.toml): expected views, gates and decisions")
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="test files, or folders searched for *.test.toml (default: the current folder)",
    )
    p.add_argument(
        "--coverage",
        action="store_true",
        help="also list the rules, guards, mounts and restrictions no test exercised: in the files the "
        "tests load, or in the shipped files when they load none",
    )
    p.add_argument("--cover-shipped", action="store_true", help="with --coverage: report on the shipped files too")
    load_flags(p)


def run(args, out, err) -> int:
    from ..test_runner import cmd_test

    return cmd_test(args, out, err)
