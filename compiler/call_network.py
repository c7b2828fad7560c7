"""`call.network`: whether one call may reach the network. In: its tool's risk axes (None: a tool the catalog does
not know) and, for a shell tool, its command line. Out: `Reach` — True (it does), False (it cannot), None (not
known: a condition takes it as holding for a deny or an ask, never for an allow), and why.

A tool's catalog entry decides (`external-data`: web, MCP tools with an open world); a shell line is read
simple command by simple command against catalogs/shell/network.json; code run by an interpreter, an opaque
command, an unknown program and any other tool that runs processes or code are not known.
"""

from __future__ import annotations

import os

from ._base.frozen import record
from ._base.memo import once

NETWORK_AXIS = "external-data"  # the catalog's axis of tools that fetch, search or call out (spec §7)
UNKNOWN_AXES = ("any-process", "runtime-code", "cross-agent")  # may do anything, or hand work to another agent
SOCKETS = ("/dev/tcp/", "/dev/udp/")  # bash opens a connection for a redirection to these


@record
class Reach:
    value: bool | None
    why: str


@once
def _data() -> dict:
    from ..common import json_io
    from .package_data import package_path

    with open(os.path.join(package_path("dshc.catalogs"), "shell", "network.json"), encoding="utf-8") as handle:
        data = json_io.loads(handle.read())
    return {
        "network": frozenset(data["network"]),
        "offline": frozenset(data["offline"]),
        "subcommands": {
            name: (frozenset(row["network"]), frozenset(row["offline"])) for name, row in data["subcommands"].items()
        },
    }


def call_reach(risk: tuple[str, ...] | None, shell: bool, args) -> Reach:
    """Whether a call of a tool with these risk axes (and, for a shell tool, these arguments; None: no call in
    particular) may reach the network."""
    if risk is None:
        return Reach(None, "the tool is not in the catalog")
    if NETWORK_AXIS in risk:
        return Reach(True, f"its tool's risk `{NETWORK_AXIS}` reaches outside the machine")
    if shell and args is None:
        return Reach(
            None,
            "each command line decides: one that runs curl, ssh, `git push` or `pip install` reaches the network, "
            "`ls` or `git status` does not, and code or a program not known to stay offline counts as reaching it "
            "for a deny or an ask, never for an allow",
        )
    command = args.get("command") if isinstance(args, dict) else None
    if shell and isinstance(command, str):
        return line_reach(command)
    axes = [axis for axis in UNKNOWN_AXES if axis in risk]
    if axes:
        return Reach(None, f"its tool's risk `{axes[0]}` may do anything, the network included")
    return Reach(False, "its tool has no risk that reaches the network")


def line_reach(command: str) -> Reach:
    """A shell command line's reach: its one simple command when the policy core split it (`SegmentArg`), else
    every simple command it runs; the first that reaches the network, else the first not known."""
    segment = getattr(command, "segment", None)
    if segment is not None:
        return segment_reach(segment)
    from .shell import analyse

    found = analyse(command)
    if found is None:
        return Reach(None, "the line does not parse")
    for access in found.files:
        if access.path.startswith(SOCKETS):
            return Reach(True, f"it opens `{access.path}`")
    unknown = None
    for each in found.segments:
        reach = segment_reach(each)
        if reach.value:
            return reach
        if reach.value is None and unknown is None:
            unknown = reach
    return unknown or Reach(False, "no command of the line reaches the network")


def segment_reach(segment) -> Reach:
    """One simple command's reach. A wrapper (`sudo`, `timeout`, `git -C DIR`) is read by its own words: what it
    runs is its own simple command."""
    shown = f"`{segment.text}`" if len(segment.text) <= 60 else f"`{segment.text[:57]}…`"
    argv = segment.argv[: segment.wraps] if segment.wraps is not None else segment.argv
    program = argv[0].rsplit("/", 1)[-1] if argv and segment.literal_words and not segment.base else None
    data = _data()
    if program in data["network"]:  # whatever else its words hide (`dig $(cat .env).x.io`)
        return Reach(True, f"`{program}` reaches the network")
    if segment.opaque:
        return Reach(None, f"what {shown} runs cannot be read")
    for word in segment.redirects:
        if word.startswith(SOCKETS):
            return Reach(True, f"{shown} opens `{word}`")
    if not argv:
        return Reach(False, "an assignment runs nothing")
    if program is None:
        return Reach(None, f"`{argv[0]}` is a program of its own, run by its path")
    table = data["subcommands"].get(program)
    if table is not None:
        network, offline = table
        words = [w for w in argv[1:] if w in network or w in offline or not w.startswith("-")]
        if not words:
            return Reach(False, f"`{program}` with no subcommand does not reach the network")
        if words[0] in network:
            return Reach(True, f"`{program} {words[0]}` reaches the network")
        if words[0] in offline:
            return Reach(False, f"`{program} {words[0]}` does not reach the network")
        if segment.wraps is not None:  # `git -C DIR …`: its own options; the subcommand is the wrapped command's
            return Reach(False, f"`{program}`'s own options do not reach the network")
        return Reach(None, f"`{program} {words[0]}` is not known")
    if program in data["offline"]:
        return Reach(False, f"`{program}` does not reach the network")
    from .shell_data import knowledge

    known = knowledge()
    if program in known.shells and segment.wraps is not None:
        return Reach(False, f"`{program} -c` runs its string's commands, each read by itself")
    if known.interpreter(program) is not None or program in known.shells:
        return Reach(None, f"`{program}` runs code that may do anything")
    return Reach(None, f"`{program}` is not known to stay off the network")
