"""Memory and log size of one large `write` through `dshc run`: peak RSS above a tiny run's,
as a multiple of the payload, and the bytes the log line holds (the value goes to a blob).

    python tests/bench/bench_large_payload.py [--mb 150] [--stages]

The peak is the child's own high-water mark (VmHWM in /proc/self/status). `ru_maxrss` is not
used: Linux carries the parent's RSS at fork into the child's ru_maxrss, so a parent that
built the payload made the child look ~0.7x the payload bigger than it ever was.
`--stages` prints, per step (calls file read, JSON parse, each pipeline stage), the RSS
before and after and the high-water mark so far, so a copy can be pinned to its stage.
Target: peak within 2x the payload.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = r"""
import os, resource, sys

def status_kib(field):
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # no /proc: the best there is

if os.environ.get("BENCH_STAGES"):
    import dshc.runtime.calls_file as calls_file
    from dshc.runtime import pipeline, stages

    def traced(name, fn):
        def inner(*args, **kwargs):
            before = status_kib("VmRSS")
            try:
                return fn(*args, **kwargs)
            finally:
                print(f"STAGE {name:<17} rss {before / 1024:7.1f} -> {status_kib('VmRSS') / 1024:7.1f} MB"
                      f"   high-water {status_kib('VmHWM') / 1024:7.1f} MB", file=sys.stderr)
        return inner

    calls_file.read_calls = traced("read calls file", calls_file.read_calls)
    calls_file._parse_line = traced("  parse JSON line", calls_file._parse_line)
    pipeline.Pipeline.__init__.__defaults__ = (tuple((n, traced(n, f)) for n, f in stages.DEFAULT_STAGES),)

from dshc.cli.main import main
code = main(sys.argv[1:])
print("PEAK", status_kib("VmHWM"), file=sys.stderr)
sys.exit(code)
"""


def write_calls(path: Path, payload: int) -> None:
    """The calls line is written a piece at a time, so this process never holds the payload."""
    head = json.dumps({"id": "w", "name": "write", "arguments": {"file_path": "big.txt", "content": ""}})
    before, after = head.rsplit('""', 1)
    piece = "x" * (1 << 20)
    with open(path, "w") as handle:
        handle.write(before + '"')
        for start in range(0, payload, len(piece)):
            handle.write(piece[: min(len(piece), payload - start)])
        handle.write('"' + after + "\n")


def peak_kib(folder: Path, payload: int, stages: bool = False) -> tuple[int, int, str]:
    workspace = folder / f"ws{payload}"
    workspace.mkdir()
    calls, log = folder / f"calls{payload}.jsonl", folder / f"events{payload}.jsonl"
    write_calls(calls, payload)
    env = {**os.environ, **({"BENCH_STAGES": "1"} if stages else {})}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            "run",
            str(calls),
            "--workspace",
            str(workspace),
            "--log",
            str(log),
            "--approve",
            "once",
            "--timeout",
            "600",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    peak = int(next(line.split()[1] for line in done.stderr.splitlines() if line.startswith("PEAK")))
    assert os.path.getsize(workspace / "big.txt") == payload
    trace = "\n".join(line[6:] for line in done.stderr.splitlines() if line.startswith("STAGE "))
    return peak, max(len(line) for line in log.read_bytes().split(b"\n")), trace


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=150)
    parser.add_argument("--stages", action="store_true", help="print RSS per step of the big run")
    args = parser.parse_args()
    payload = args.mb * 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        base, _, _ = peak_kib(Path(tmp), 10)
        big, longest_line, trace = peak_kib(Path(tmp), payload, args.stages)
    if trace:
        print(trace)
    extra = (big - base) * 1024
    ratio = extra / payload
    print(
        json.dumps(
            {
                "payload_mb": args.mb,
                "baseline_peak_mb": round(base / 1024, 1),
                "peak_mb": round(big / 1024, 1),
                "extra_over_payload": round(ratio, 2),
                "longest_log_line_bytes": longest_line,
            },
            indent=2,
        )
    )
    print(("PASS" if ratio <= 2.05 else "FAIL") + f" peak {ratio:.2f}x the payload above a tiny run (target <= ~2x)")
    return 0 if ratio <= 2.05 else 1


if __name__ == "__main__":
    sys.exit(main())
