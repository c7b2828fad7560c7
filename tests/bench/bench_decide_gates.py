"""What running every gate and the argument limits costs a call: Program.decide against the
request's indexed decider looked up and called directly (what decide did before), in the same
run, as a ratio.

    python tests/bench/bench_decide_gates.py [--calls N]
"""

from __future__ import annotations

import argparse
import time

from dshc.compiler.program import Program
from dshc.compiler.request import Request

CALLS = [
    ("bash", {"command": "git status", "description": "d"}),
    ("bash", {"command": "ls -la && echo done", "description": "d"}),
    ("write", {"file_path": "src/a.py", "content": "x"}),
    ("read", {"file_path": "README.md"}),
    ("glob", {"pattern": "**/*.py"}),
    ("edit", {"file_path": "/etc/hosts", "old_string": "a", "new_string": "b"}),
]


def per_call(fns, calls: int, rounds: int = 9) -> list[float]:
    """The fastest round's seconds per call for each function, rounds interleaved so load hits both alike."""
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for fn, found in zip(fns, samples):
            start = time.perf_counter()
            for i in range(calls):
                name, args = CALLS[i % len(CALLS)]
                fn(name, args)
            found.append((time.perf_counter() - start) / calls)
    return [min(found) for found in samples]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    options = parser.parse_args()
    program = Program.load()
    request = Request(preset="standard", host="web", policy="workspace-write")
    full = lambda name, args: program.decide(request, name, args, workspace="/ws")  # noqa: E731
    for name, args in CALLS:
        full(name, args)  # fill the memos on both paths

    def bare(name, args):
        decider, tool, _ = program._decider_for(request, name)
        return decider.decide(name, tool, args, "/ws")

    base, gated = per_call([bare, full], options.calls)
    print(f"decider, no gates      {base * 1e6:7.2f} µs/call")
    print(f"Program.decide (gates) {gated * 1e6:7.2f} µs/call")
    print(f"ratio                  {gated / base:7.2f}×")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
