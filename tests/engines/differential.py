"""What the differential export tests share: dshc's decisions for a table's shell lines, and how two
decisions compare (deny > ask > allow)."""

from __future__ import annotations

import json
from pathlib import Path

from dshc.compiler.program import Program
from dshc.compiler.request import Request

HERE = Path(__file__).parent
RANK = {None: -1, "allow": 0, "ask": 1, "deny": 2}
TABLE = json.loads((HERE / "table.json").read_text())
REGRESSION = json.loads((HERE / "corpus.json").read_text())
CORPUS_POLICIES = json.loads((HERE.parent / "fixtures" / "bypass" / "corpus.json").read_text())["policies"]


def relation(ours: str, theirs: str) -> str:
    return "same" if ours == theirs else "dshc-stricter" if RANK[ours] > RANK[theirs] else "agent-stricter"


def policy(program: Program, name: str):
    return program.composition(Request(policy=name)).policy


def dshc_decisions(program: Program, name: str, commands: list[str]) -> list[str]:
    request = Request(preset="standard", host="web", policy=name)
    return [
        program.decide(request, "bash", {"command": c, "description": "d"}, workspace="/ws").effect for c in commands
    ]


def tables(table: dict, policies: str | None = None) -> tuple[Program, dict[str, list[dict]]]:
    """The program of a table's policies and its rows by policy."""
    rows: dict[str, list[dict]] = {}
    for row in table["rows"]:
        rows.setdefault(row["policy"], []).append(row)
    return Program.load(texts={"table.dsh": policies or table["policies"]}), rows
