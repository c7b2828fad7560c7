"""Gemini CLI's own PolicyEngine (the pinned @google/gemini-cli-core in this folder, driven by
gemini_check.mjs), for the differential tests of `dshc export gemini`: one node process decides a table."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).parent
GEMINI_EFFECT = {"allow": "allow", "ask_user": "ask", "deny": "deny"}


def gemini_engine() -> tuple[list[str] | None, str]:
    """The command that runs the driver, or None and why not."""
    node = shutil.which("node")
    package = HERE / "node_modules" / "@google" / "gemini-cli-core" / "package.json"
    if node is None:
        return None, "node is not installed: Gemini CLI's engine cannot run"
    if not package.exists():
        return None, "Gemini CLI's engine is not installed: `npm ci --prefix tests/engines` (.ci/run does it)"
    pinned = json.loads((HERE / "package.json").read_text())["dependencies"]["@google/gemini-cli-core"]
    if json.loads(package.read_text())["version"] != pinned:
        return None, f"installed @google/gemini-cli-core is not the pinned {pinned}: run `npm ci`"
    return [node, str(HERE / "gemini_check.mjs")], ""


def decide_tables(engine: list[str], tables: list[tuple[Path, list[dict]]]) -> list[list[str]]:
    """The engine's decisions (allow | ask | deny) for each table of `{"name", "args"}` calls under its policy
    file, all in one process."""
    request = {"tables": [{"policy": str(policy), "calls": calls} for policy, calls in tables]}
    done = subprocess.run(engine, input=json.dumps(request), capture_output=True, text=True, timeout=300, cwd=HERE)
    assert done.returncode == 0, done.stderr[-2000:]
    answers = json.loads(done.stdout)["tables"]
    assert all("errors" not in answer for answer in answers), [a.get("errors") for a in answers]
    return [[GEMINI_EFFECT[d] for d in answer["decisions"]] for answer in answers]
