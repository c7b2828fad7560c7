"""The cost of `dshc hook claude-code` per tool call, against `python3 -c pass` in the same run.

Run from a clone after `pip install .`:  python tests/bench/bench_hook.py [--rounds N]
Claude Code spawns the hook once per tool call, so the figure that matters is a whole process:
interpreter start, imports, loading the declarations, one decision, the JSON answer. The rounds
alternate the two commands so machine load hits both alike; medians and p90 of wall time and of
the child's CPU time are printed, with the ratio to the baseline. The hook runs with its Program
cache warm (the common case: the same declarations every call) and, for comparison, without it.
Python's bytecode cache is set, not inherited: every command gets a private PYTHONPYCACHEPREFIX that
the priming run fills, as an installed package has its .pyc files (a shell exporting
PYTHONDONTWRITEBYTECODE would otherwise make dshc compile its modules from source on every run
while the baseline reads the standard library's .pyc).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

POLICY = (
    'policy team "Team" {\n  approval ask\n  default ask\n  allow bash when args.command matches "git status *"\n}\n'
)


def _measure(argv: list[str], stdin: bytes, env: dict | None = None) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr.decode()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "team.dsh"), "w") as handle:
            handle.write(POLICY)
        with open(os.path.join(root, ".dshc"), "w") as handle:
            handle.write('load = ["team.dsh"]\npolicy = "team"\n')
        payload = json.dumps(
            {
                "session_id": "bench",
                "cwd": root,
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "git status"},
                "tool_use_id": "toolu_bench",
            }
        ).encode()
        hook = [sys.executable, "-c", "from dshc.cli.entry import entry; entry()", "hook", "claude-code"]
        cache = os.path.join(root, "cache")
        # the hook's default event log goes to the user's state folder: here, the run's own
        bytecode = {
            "PYTHONPYCACHEPREFIX": os.path.join(root, "pyc"),
            "PYTHONDONTWRITEBYTECODE": "",
            "XDG_STATE_HOME": os.path.join(root, "state"),
        }
        commands = {  # name: (argv, extra environment)
            "python3 -c pass": ([sys.executable, "-c", "pass"], bytecode),
            "dshc hook claude-code": (hook, {**bytecode, "XDG_CACHE_HOME": cache}),
            "  … without its cache": (hook, {**bytecode, "DSHC_NO_CACHE": "1"}),
        }
        for argv, env in commands.values():  # priming: the program cache and the bytecode cache fill
            subprocess.run(argv, input=payload, capture_output=True, env={**os.environ, **env})
        answer = subprocess.run(
            hook, input=payload, capture_output=True, env={**os.environ, **commands["dshc hook claude-code"][1]}
        ).stdout
        assert json.loads(answer)["hookSpecificOutput"]["permissionDecision"] == "allow", answer
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, (argv, env) in commands.items():
                samples[name].append(_measure(argv, payload, env))
    print(
        f"{rounds} rounds · {os.cpu_count()} CPUs · load average {os.getloadavg()[0]:.2f} · Python {sys.version.split()[0]}"
    )
    base_wall = statistics.median(w for w, _ in samples["python3 -c pass"])
    base_cpu = statistics.median(c for _, c in samples["python3 -c pass"])
    for name, values in samples.items():
        walls = sorted(w for w, _ in values)
        cpus = sorted(c for _, c in values)
        p90 = lambda xs: xs[min(len(xs) - 1, int(0.9 * len(xs)))]
        print(
            f"  {name:<24} wall p50 {statistics.median(walls) * 1000:7.1f} ms  p90 {p90(walls) * 1000:7.1f} ms · "
            f"cpu p50 {statistics.median(cpus) * 1000:7.1f} ms · ×{statistics.median(walls) / base_wall:5.1f} wall, "
            f"×{statistics.median(cpus) / base_cpu:5.1f} cpu of the baseline"
        )


if __name__ == "__main__":
    main()
