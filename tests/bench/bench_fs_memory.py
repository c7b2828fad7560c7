"""Memory of the file tools on large payloads: a 150 MB `write` and a `read` with `limit: 3`
of a 300 MB file, each in a fresh child process whose peak RSS (ru_maxrss) is read before and
after the tool body. The baseline, measured in the same run, is the plain whole-buffer
approach (encode the text / read the file into memory).

    python tests/bench/bench_fs_memory.py [--write-mb 150] [--read-mb 300]

Targets: write peak (payload string included) within 2x the payload; read extra under 32 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, resource, sys, threading
from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext, ToolState

def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

scenario, workspace, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
ctx = ToolContext(workspace=workspace, sandbox="workspace-write", owner="bench", state=ToolState(),
                  abort=threading.Event())
start = rss_mb()
if scenario.startswith("write"):
    payload = "x" * (size_mb << 20)
    ready = rss_mb()
    if scenario == "write-tool":
        IMPLEMENTATIONS["tool-fs/write"]({"file_path": "big.txt", "content": payload}, ctx)
    else:
        with open(os.path.join(workspace, "big.txt"), "wb") as handle:
            handle.write(payload.encode("utf-8"))
else:
    ready = rss_mb()
    if scenario == "read-tool":
        IMPLEMENTATIONS["tool-fs/read"]({"file_path": "big.txt", "limit": 3}, ctx)
    else:
        with open(os.path.join(workspace, "big.txt"), "rb") as handle:
            handle.read().decode("utf-8", "replace").splitlines()[:3]
print(json.dumps({"start": start, "ready": ready, "peak": rss_mb()}))
"""


def measure(scenario: str, workspace: str, size_mb: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, scenario, workspace, str(size_mb)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def make_file(path: str, size_mb: int) -> None:
    line = b"0123456789abcdef" * 7 + b"\n"
    block = line * ((1 << 20) // len(line) + 1)
    with open(path, "wb") as handle:
        for _ in range(size_mb):
            handle.write(block[: 1 << 20])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-mb", type=int, default=150)
    parser.add_argument("--read-mb", type=int, default=300)
    options = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="dshc-bench-") as workspace:
        print(f"{'scenario':<16}{'payload MB':>11}{'peak MB':>10}{'peak/payload':>14}{'extra MB':>10}")
        rows = {}
        for scenario in ("write-baseline", "write-tool"):
            m = measure(scenario, workspace, options.write_mb)
            os.unlink(os.path.join(workspace, "big.txt"))
            rows[scenario] = m
            peak = m["peak"] - m["start"]
            print(
                f"{scenario:<16}{options.write_mb:>11}{peak:>10.0f}{peak / options.write_mb:>14.2f}"
                f"{m['peak'] - m['ready']:>10.0f}"
            )
        make_file(os.path.join(workspace, "big.txt"), options.read_mb)
        for scenario in ("read-baseline", "read-tool"):
            m = measure(scenario, workspace, options.read_mb)
            rows[scenario] = m
            extra = m["peak"] - m["ready"]
            print(f"{scenario:<16}{options.read_mb:>11}{extra:>10.0f}{extra / options.read_mb:>14.2f}{extra:>10.0f}")
    write_ratio = (rows["write-tool"]["peak"] - rows["write-tool"]["start"]) / options.write_mb
    read_extra = rows["read-tool"]["peak"] - rows["read-tool"]["ready"]
    baseline_write = (rows["write-baseline"]["peak"] - rows["write-baseline"]["start"]) / options.write_mb
    baseline_read = rows["read-baseline"]["peak"] - rows["read-baseline"]["ready"]
    for label, passed in (
        (f"write peak {write_ratio:.2f}x payload <= 2x (baseline {baseline_write:.2f}x)", write_ratio <= 2.0),
        (f"read extra {read_extra:.0f} MB < 32 MB (baseline {baseline_read:.0f} MB)", read_extra < 32),
    ):
        print(("PASS " if passed else "FAIL ") + label)
        ok &= passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
