"""Cost of starting a command confined: median wall time of a one-shot `/bin/true` started
bare (no launcher, the baseline), under the supervisor only (danger-full-access), and under
Landlock + a network namespace (workspace-write), all measured in the same run.

    python tests/bench/bench_sandbox_launch.py [--runs 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from dshc.runtime.sandbox import Confinement, probe
from dshc.runtime.tools.procs import ProcessRun


def one(conf: Confinement | None, workspace: str) -> float:
    started = time.perf_counter()
    run = ProcessRun(["/bin/true"], cwd=workspace, max_chars=1000, confinement=conf)
    run.pump(lambda: None)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    runs = parser.parse_args().runs
    print(f"probe: {probe()}")
    with tempfile.TemporaryDirectory(prefix="dshc-bench-") as workspace:
        cases = {
            "bare": None,
            "supervised": Confinement("danger-full-access", workspace, workspace),
            "landlock+netns": Confinement("workspace-write", workspace, workspace),
        }
        medians = {}
        for name, conf in cases.items():
            one(conf, workspace)  # warm: the probe and the page cache
            medians[name] = statistics.median(one(conf, workspace) for _ in range(runs))
    base = medians["bare"]
    print(f"{'start':<16}{'median ms':>10}{'x bare':>8}")
    for name, value in medians.items():
        print(f"{name:<16}{value * 1000:>10.1f}{value / base:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
