"""Where the run_code worker's files are and whether this machine can run them: `node` on PATH and
the npm dependency the package build placed beside runner.js. Imports only the standard library, so
a command that only compiles or decides can ask without loading the worker."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parent / "node"
RUNNER = NODE_DIR / "runner.js"
TRANSPILER = NODE_DIR / "node_modules" / "sucrase" / "package.json"


class CodeRuntimeMissing(Exception):
    """This host cannot run programs: `node` or the worker's npm dependencies are missing."""


def node_executable() -> str | None:
    return shutil.which(os.environ.get("DSHC_NODE", "node"))


def check_runtime() -> str:
    """The node executable; raises CodeRuntimeMissing with what to install."""
    node = node_executable()
    if node is None:
        raise CodeRuntimeMissing("Node.js (`node` on PATH)")
    if not TRANSPILER.is_file():
        raise CodeRuntimeMissing(
            f"the worker's npm dependencies (reinstall dshc where `npm` is on PATH, or run `npm ci` in {NODE_DIR})"
        )
    return node


def missing_runtime() -> str | None:
    """What this machine lacks to run programs, or None when it can."""
    try:
        check_runtime()
    except CodeRuntimeMissing as exc:
        return str(exc)
    return None
