"""Memory and log size of one large `write` through `dshc run`: peak RSS above a tiny run's,
as a multiple of the payload, and the bytes the log line holds (the value goes to a blob).

    python tests/bench/bench_large_payload.py [--mb 150]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = ("import resource, sys\n"
         "from dshc.cli.main import main\n"
         "code = main(sys.argv[1:])\n"
         "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
         "sys.exit(code)\n")


def peak_kib(folder: Path, payload: int) -> tuple[int, int]:
    workspace = folder / f"ws{payload}"
    workspace.mkdir()
    calls, log = folder / f"calls{payload}.jsonl", folder / f"events{payload}.jsonl"
    calls.write_text(json.dumps({"id": "w", "name": "write",
                                 "arguments": {"file_path": "big.txt", "content": "x" * payload}}) + "\n")
    done = subprocess.run([sys.executable, "-c", PROBE, "run", str(calls), "--workspace", str(workspace),
                           "--log", str(log), "--approve", "once", "--timeout", "600"],
                          capture_output=True, text=True, check=True)
    peak = int(next(line.split()[1] for line in done.stderr.splitlines() if line.startswith("PEAK")))
    assert os.path.getsize(workspace / "big.txt") == payload
    return peak, max(len(line) for line in log.read_bytes().split(b"\n"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=150)
    args = parser.parse_args()
    payload = args.mb * 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        base, _ = peak_kib(Path(tmp), 10)
        big, longest_line = peak_kib(Path(tmp), payload)
    extra = (big - base) * 1024
    print(json.dumps({"payload_mb": args.mb, "baseline_peak_mb": round(base / 1024, 1),
                      "peak_mb": round(big / 1024, 1), "extra_over_payload": round(extra / payload, 2),
                      "longest_log_line_bytes": longest_line}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
