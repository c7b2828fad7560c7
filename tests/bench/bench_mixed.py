"""Decisions on a workload the peers cannot express: shell-command globs (decided per simple command),
workspace inside/outside tests on path arguments, and guards — next to the peer workload's figures.

Part `mixed` of bench_peer.py; every decision is cross-checked against the reference evaluator
(every rule tried as written). Also: a new Request equal to one seen before (built, then looked up).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time

from bench import EFFECTS, ENDS, WORDS

PROGRAMS = ["git", "npm", "rm", "curl", "make", "python", "ls", "cat", "sudo", "docker"]
WORDS_AFTER = ["status", "install", "-rf", "build", "test", "run", "log", "push", "--version", "x"]
PATH_TOOLS = ["read", "write", "edit"]


def mixed_policy(n: int, seed: int = 13) -> str:
    """N rules: 40 % shell-command globs, 30 % inside/outside the workspace (some with a glob too),
    5 % guards, the rest on request facts only."""
    rng = random.Random(seed)
    lines = ['policy mixed "Mixed workload" {', "  approval ask", "  default ask"]
    for index in range(n):
        effect, draw = rng.choice(EFFECTS), rng.random()
        if draw < 0.4:
            lines.append(
                f'  {effect} bash when args.command matches "{rng.choice(PROGRAMS)} {rng.choice(WORDS_AFTER)}*"'
            )
        elif draw < 0.7:
            place = rng.choice(["inside", "outside"])
            glob = f' and args.file_path matches "*{rng.choice(ENDS)}"' if rng.random() < 0.5 else ""
            lines.append(f"  {effect} {rng.choice(PATH_TOOLS)} when args.file_path {place} workspace{glob}")
        elif draw < 0.75:
            lines.append(
                f'  guard g{index}: deny {rng.choice(PATH_TOOLS)} when args.file_path matches "*{rng.choice(ENDS)}"'
            )
        else:
            lines.append(
                f'  {effect} {rng.choice(PATH_TOOLS + ["bash"])} when platform == "{rng.choice(["linux", "darwin"])}"'
            )
    lines.append("}")
    return "\n".join(lines) + "\n"


def mixed_calls(count: int, seed: int = 17):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        if rng.random() < 0.5:
            first = f"{rng.choice(PROGRAMS)} {rng.choice(WORDS_AFTER)} {rng.choice(WORDS)}"
            command = first if rng.random() < 0.6 else f"{first} && {rng.choice(PROGRAMS)} {rng.choice(WORDS_AFTER)}"
            out.append(("bash", {"command": command, "description": "d"}))
        else:
            where = rng.choice(["", "", "../", "/etc/", "~/", "src/../../"])
            out.append(
                (
                    rng.choice(PATH_TOOLS),
                    {
                        "file_path": f"{where}{rng.choice(WORDS)}/{rng.choice(WORDS)}{rng.choice(ENDS)}",
                        "content": "x",
                        "old_string": "a",
                        "new_string": "b",
                    },
                )
            )
    return out


def bench_mixed(sizes, call_count: int, rows: list, checks: dict) -> None:
    from dshc.compiler.program import Program
    from dshc.compiler.request import Request

    timer = time.perf_counter_ns
    with tempfile.TemporaryDirectory() as workspace:
        for n in sizes:
            program = Program.load(texts={"mixed.dsh": mixed_policy(n)})
            request = Request(preset="standard", policy="mixed")
            batch = mixed_calls(call_count)
            for name, args in batch[:200]:  # every tool's index and the commands' shell parses: compiling
                program.decide(request, name, args, workspace)
            cold, warm = [], []
            for name, args in batch:
                tool = program._decider_for(request, name)[1]
                fresh = program._decider(request)[0]  # a new decider: every per-request memo empty
                start = timer()
                decision = fresh.decide(name, tool, args, workspace)
                cold.append((timer() - start) / 1000)
                if n <= 1000 or len(cold) % 10 == 0:  # the reference tries every rule: a tenth at N = 10,000
                    reference = program.decide_unindexed(request, name, args, workspace)
                    checks["mixed_disagreements"] += decision.effect != reference.effect
                    checks["mixed_checked"] += 1
            for sink in ([], warm):  # the first pass fills the memos; the second is measured
                for name, args in batch:
                    start = timer()
                    program.decide(request, name, args, workspace)
                    sink.append((timer() - start) / 1000)
            p99 = statistics.quantiles(cold, n=100)[98]
            rows.append(
                (
                    f"mixed decide N = {n:,} (shell, inside/outside, guards), empty memos (p99 {p99:.0f} µs)",
                    statistics.median(cold),
                    "µs",
                    "no peer expresses these rules",
                )
            )
            rows.append((f"mixed decide N = {n:,}, warm memos, through the gates", statistics.median(warm), "µs", ""))
        # a new Request equal to one seen before: built, then looked up (its decider and memos are found). The
        # call is a glob: a grep is also a read of its path where the policy has read rules (a decision of its
        # own on every call, timed beside them), which would hide the lookup these rows are for
        seen = Request(preset="standard", policy="mixed", platform="darwin", scope="root")
        program.decide(seen, "glob", {"pattern": "x"}, workspace)
        same, equal, searched = [], [], []
        for _ in range(call_count):
            start = timer()
            program.decide(seen, "glob", {"pattern": "x"}, workspace)
            same.append((timer() - start) / 1000)
            start = timer()
            again = Request(preset="standard", policy="mixed", platform="darwin", scope="root")
            program.decide(again, "glob", {"pattern": "x"}, workspace)
            equal.append((timer() - start) / 1000)
            start = timer()
            program.decide(seen, "grep", {"pattern": "x"}, workspace)
            searched.append((timer() - start) / 1000)
        rows.append(("decide, warm, the same Request object again", statistics.median(same), "µs", ""))
        rows.append(
            (
                "decide, warm, a new Request equal to one seen before (built + looked up)",
                statistics.median(equal),
                "µs",
                "",
            )
        )
        rows.append(
            ("decide, warm, a grep (its path also a read: two decisions)", statistics.median(searched), "µs", "")
        )
