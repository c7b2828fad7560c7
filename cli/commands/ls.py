"""`dshc ls`: list presets, hosts, scopes, policies, command classes, packages or tools (`cli/ls.py`)."""

from __future__ import annotations

from ..flags import load_flags

# what `dshc ls` lists, for its help without loading the listing (`cli.ls.KINDS`, held equal by a test)
KINDS = ("presets", "hosts", "scopes", "policies", "commands", "packages", "tools")


def add_parser(sub) -> None:
    p = sub.add_parser("ls", help="list presets, hosts, scopes, policies, command classes, packages or tools")
    p.add_argument("kind", nargs="?", metavar="KIND", help=f"one of {', '.join(KINDS)} (default: all)")
    p.add_argument("name", nargs="?", metavar="NAME", help="only this one (an unknown name lists the candidates)")
    load_flags(p)


def run(args, out, err) -> int:
    from ..ls import cmd_ls

    return cmd_ls(args, out, err)
