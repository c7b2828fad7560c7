"""A policy parses each shell command once: splitting a call into its simple commands and matching a
line that did not split share the policy's cache, and decisions stay those of the reference."""

from __future__ import annotations

from dshc.compiler import shell
from dshc.compiler.program import Program
from dshc.compiler.request import Request

POLICY = """policy p "P" {
  default allow
  deny bash when args.command matches "rm *"
  ask bash when args.command matches "git push*"
  allow bash when args.command matches "git status*"
}
"""
COMMANDS = [
    "git status --short",
    "git status && rm -rf build",
    "git push origin main | tee log",
    "cd x && git status",
    "echo $(rm -rf /)",
    "sudo rm -rf /",
    "ls > out.txt",
]


def test_each_command_is_parsed_once_per_policy(monkeypatch, tmp_path):
    parsed = []
    real = shell.analyse
    monkeypatch.setattr(shell, "analyse", lambda command: parsed.append(command) or real(command))
    program = Program.load(texts={"p.dsh": POLICY})
    request = Request(preset="standard", policy="p")
    first = [program.decide(request, "bash", {"command": c, "description": "d"}, str(tmp_path)) for c in COMMANDS]
    assert sorted(set(parsed)) == sorted(COMMANDS) and len(parsed) == len(COMMANDS)
    for command, decision in zip(COMMANDS, first):
        fresh = program._decider(request)[0]  # a new request's decider: its memos are empty, the policy's cache is not
        tool = program.catalog.definitions["tool-bash/bash"]
        again = fresh.decide("bash", tool, {"command": command, "description": "d"}, str(tmp_path))
        assert again.effect == decision.effect
        reference = program.decide_unindexed(request, "bash", {"command": command, "description": "d"}, str(tmp_path))
        assert reference.effect == decision.effect, command
    assert len([c for c in parsed if c in COMMANDS]) >= len(COMMANDS)  # the reference parses on its own
    counted = len(parsed)
    program.decide(request, "bash", {"command": COMMANDS[1], "description": "d"}, str(tmp_path))
    assert len(parsed) == counted
