"""The flag groups several commands share: the request's context (`--host`, `--policy`, …) and the
sources it reads (`--load`, `--catalog`, …)."""

from __future__ import annotations

import argparse
import os

from ..compiler.facts import MODES
from .preset_argument import add_preset


def context_flags(p: argparse.ArgumentParser) -> None:
    add_preset(p)
    p.add_argument("--host", default="web", help="host profile (default: web)")
    p.add_argument("--platform", default="linux", choices=["linux", "darwin", "win32"])
    p.add_argument(
        "--with",
        dest="with_services",
        action="append",
        default=[],
        metavar="SVC",
        help="add a service to the host (repeatable)",
    )
    p.add_argument(
        "--without",
        dest="without_services",
        action="append",
        default=[],
        metavar="SVC",
        help="remove a host service (repeatable)",
    )
    p.add_argument("--flag", dest="flags", action="append", default=[], metavar="NAME", help="turn a feature flag on")
    p.add_argument("--scope", default="root", help="agent scope (default: root)")
    p.add_argument(
        "--mode",
        choices=MODES,
        type=_mode,
        default=os.environ.get("DSH_TOOLS_MODE") or None,
        help="presentation mode override (default: $DSH_TOOLS_MODE, else the preset's or host's)",
    )
    p.add_argument("--policy", help="approval policy (default: the host's)")
    p.add_argument("--plan", action="store_true", help="the request is in plan mode")
    load_flags(p)


def _mode(value: str) -> str:
    # argparse checks `choices` on the command line only; the DSH_TOOLS_MODE default is checked here
    if value not in MODES:
        raise argparse.ArgumentTypeError(
            f"mode must be one of {', '.join(MODES)}, not `{value}` (from --mode or DSH_TOOLS_MODE)"
        )
    return value


def load_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--load", action="append", default=[], metavar="PATH", help="also load declarations from PATH")
    p.add_argument("--no-shipped", action="store_true", help="do not load the shipped presets and policies")
    p.add_argument(
        "--catalog",
        metavar="DIR",
        action="append",
        default=[],
        help="add the packages and services of the catalog in DIR to the shipped one (repeatable)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
