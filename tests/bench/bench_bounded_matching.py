"""Decisions in bounded time: adversarial globs and the shell limits (issue 19).

Run from a clone:  python tests/bench/bench_bounded_matching.py
Prints the decide time of `read` under `deny read when args.file_path matches
"*secret*key*id*.pem"` for file_path = "secretkeyid" * N (N = 100 … 800, and a longer
ratio) and of shell commands near and past the limits, then each target as met / not met:
  - time at N = 800 ≤ 10 × time at N = 100 (linear, not the backtracking blow-up);
  - a command past MAX_COMMAND_CHARS or MAX_SEGMENTS is opaque (never allowed) and decided
    in well under a second, whatever its size.
"""

from __future__ import annotations

import sys
from timing import fastest  # tests/bench/timing.py, beside this script

from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.compiler.shell import MAX_COMMAND_CHARS, MAX_SEGMENTS, analyse

POLICY = """
policy bounded "Adversarial globs" {
  default allow
  deny read when args.file_path matches "*secret*key*id*.pem"
  deny read when args.file_path matches "*secret?key*id*.pem"
  deny bash when args.command matches "*secret*key*id*.pem"
}
policy shell-allow "An allow-list" {
  default deny
  allow bash when args.command matches "ls *"
}
"""
REPEATS = 15


def timed(fn) -> float:
    return fastest(fn, REPEATS)


def main() -> int:
    program = Program.load(texts={"bounded.dsh": POLICY})
    read = Request(preset="standard", host="web", policy="bounded")
    allow_list = Request(preset="standard", host="web", policy="shell-allow")
    results: list[tuple[str, bool]] = []

    # the second guard has a `?`, so it runs on the bit-parallel automaton rather than `str.find`
    print(
        'adversarial globs `*secret*key*id*.pem`, `*secret?key*id*.pem`, file_path = "secretkeyid" * N (unique per run: no memo)'
    )
    times = {}
    for n in (100, 200, 400, 800, 3200):
        counter = iter(range(10**9))

        def one(n=n):
            path = "secretkeyid" * n + str(next(counter))  # a fresh value each run defeats any per-value cache
            decision = program.decide(read, "read", {"file_path": path}, workspace="/ws")
            assert decision.effect == "allow", decision

        times[n] = timed(one)
        print(f"  N = {n:5d}  len = {11 * n:6d}  {times[n] * 1e3:8.3f} ms")
    ratio = times[800] / times[100]
    results.append((f"time(N=800) / time(N=100) = {ratio:.2f} ≤ 10", ratio <= 10))

    print("shell limits")
    over_chars = "ls " + "a" * MAX_COMMAND_CHARS
    over_segments = " && ".join(["ls"] * (MAX_SEGMENTS + 1))
    huge = "ls " + "a " * 1_000_000  # the 2 MB, million-word command from the issue
    for label, command in (
        ("just under the segment limit", " && ".join(["ls"] * MAX_SEGMENTS)),
        ("over MAX_COMMAND_CHARS", over_chars),
        ("over MAX_SEGMENTS", over_segments),
        ("2 MB, 1,000,000 words", huge),
    ):
        seconds = timed(lambda c=command: analyse(c))
        found = analyse(command)
        opaque = found is not None and len(found.segments) == 1 and found.segments[0].opaque
        effect = program.decide(allow_list, "bash", {"command": command, "description": "d"}, workspace="/ws").effect
        print(
            f"  {label:32s} {len(command):9d} chars  analyse {seconds * 1e3:9.3f} ms  opaque={opaque}  "
            f"allow-list verdict={effect}"
        )
        if label != "just under the segment limit":
            results.append((f"{label}: opaque, denied, analysed in < 1 s", opaque and effect == "deny" and seconds < 1))
        else:
            results.append((f"{label}: every segment allowed by `ls *`", effect == "allow"))

    print()
    for text, met in results:
        print(f"{'met    ' if met else 'NOT MET'}  {text}")
    return 0 if all(met for _, met in results) else 1


if __name__ == "__main__":
    sys.exit(main())
