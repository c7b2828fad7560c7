"""`dshc hook AGENT …`: decide a tool call from the agent's hook JSON on stdin. `dshc hook` itself goes to
`cli/hook.py` before argparse; this row is reached as `dshc --debug hook …` and gives the command its help."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    p = sub.add_parser(
        "hook",
        help="agent hook: decide a tool call from the agent's hook JSON on stdin",
        description="dshc hook claude-code|gemini|codex|cursor [PRESET] [--config .dshc] [--load PATH]… [--preset P] [--host H] "
        "[--platform P] [--scope S] [--policy P] [--log EVENTS.jsonl] [--workspace DIR]",
    )
    p.add_argument("hook_args", nargs=argparse.REMAINDER, metavar="claude-code|gemini|codex|cursor …")


def run(args, out, err) -> int:
    from ..hook import main

    return main(args.hook_args, None, out, err)
