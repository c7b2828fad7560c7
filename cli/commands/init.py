"""`dshc init`: set a project up under the `guarded` policy (`cli/init.py`)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("init", help="set a project up under the `guarded` policy (.dshc, team.dsh, team.test.toml)")
    p.add_argument("folder", nargs="?", default=".", help="the project folder (default: the current one)")
    p.add_argument("--claude-code", action="store_true", help="also register the hook in .claude/settings.json")
    p.add_argument(
        "--from-claude-code",
        action="store_true",
        help="start from the project's Claude Code permissions: import .claude/settings.json (and "
        "settings.local.json) as claude-code.dsh, whose rules team.dsh includes",
    )
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.add_argument("--json", action="store_true")


def run(args, out, err) -> int:
    from ..init import cmd_init

    return cmd_init(args, out, err)
