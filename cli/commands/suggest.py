"""`dshc suggest`: the narrowest scope and policy that allow what logged sessions did (`cli/suggest.py`)."""

from __future__ import annotations

from ..flags import context_flags

# what `--format` takes, for the parser without loading the readers (`cli.evidence.FORMATS`, held equal by a test)
FORMATS = ("auto", "log", "calls", "claude-code")


def add_parser(sub) -> None:
    p = sub.add_parser("suggest", help="the narrowest scope and policy that allow what recorded sessions did")
    p.add_argument(
        "--from",
        dest="sources",
        action="append",
        default=[],
        metavar="FILE|DSN",
        help="a record of calls (repeatable): an event log (JSONL or postgresql:// DSN, a gateway's too), "
        "a `dshc run` calls file, or a Claude Code session transcript",
    )
    p.add_argument(
        "--from-log",
        dest="logs",
        action="append",
        default=[],
        metavar="LOG|DSN",
        help="an event log (repeatable), read as one whatever --format says",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="what the --from files are (default: told from each file's first record)",
    )
    p.add_argument(
        "--workspace", metavar="DIR", help="the workspace of calls files and transcripts (default: a transcript's cwd)"
    )
    p.add_argument(
        "--generalize",
        choices=("exact", "shape", "tool"),
        default="exact",
        help="exact: pin every argument but free text to the values seen; shape: to the class they share (array "
        "items, a number range, a date's shape, a shared beginning or e-mail domain); tool: allow the tool",
    )
    p.add_argument("-o", dest="output", metavar="FILE", help="write the suggestion here (default: stdout)")
    context_flags(p)  # the context of calls files and transcripts; --policy names the policy in force


def run(args, out, err) -> int:
    from ..suggest import cmd_suggest

    return cmd_suggest(args, out, err)
