"""The policy core's target index finds exactly the rules and guards a pass over all of them finds, in order."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dshc.compiler.catalog import load_catalog
from dshc.compiler.policy.core import PolicyCore, targets
from dshc.compiler.program import Program
from dshc.compiler.request import Request

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
from bench import workload  # noqa: E402 - the benchmark's random policy: names, aliases, packages, risks, globs

EXTRA = """policy idx extends workspace-write {
  deny todo_*, *_open, w?ite
  ask risk(any-process), package(tool-fs)
  allow read, bash
  guard g1: deny write when args.file_path matches "*.env"
  guard g2: deny risk(external-data)
}
"""


def _linear(core, name, tool):
    return (
        [r for r in core.policy.rules if targets(r, name, tool)],
        [g for g in core.policy.guards if targets(g, name, tool)],
    )


@pytest.mark.parametrize("source", ["workload", "extra"])
def test_the_index_agrees_with_a_pass_over_every_rule(source, tmp_path):
    if source == "workload":
        text = workload(400)[0]
        policy_name = "bench"
    else:
        text, policy_name = EXTRA, "idx"
    program = Program.load(texts={"p.dsh": text})
    core = PolicyCore(program.resolved.policies[policy_name])
    catalog = load_catalog()
    tools = list(catalog.definitions.values())
    checked = 0
    for tool in tools:
        for name in (tool.name, *tool.aliases):
            assert core.relevant(name, tool) == _linear(core, name, tool), name
            checked += 1
    for name in ("made_up_tool", "todo_x", "x_open", "wXite"):  # names no catalog tool has: only name targets apply
        assert core.relevant(name, None) == _linear(core, name, None), name
    assert checked > 50 and any(core.relevant(t.name, t)[0] for t in tools)


def test_views_of_new_request_contexts_share_one_target_index(monkeypatch):
    # a view decides every visible tool statically; each decision building its own index over all
    # N rules made a new request context cost O(tools x N)
    made = []
    build = PolicyCore.__init__
    monkeypatch.setattr(PolicyCore, "__init__", lambda self, policy: (made.append(policy), build(self, policy))[1])
    program = Program.load(texts={"idx.dsh": EXTRA})
    for flag in range(5):
        assert program.view(Request(preset="standard", policy="idx", flags=[f"f{flag}"])).tools
    assert len(made) == 1
