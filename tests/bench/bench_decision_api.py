"""Load on the decision API: N `dshc serve --http` processes, M concurrent clients for S seconds.

Prints throughput, p50/p99 latency and how many answers disagree with Program.decide in-process (must be 0).
Run: python tests/bench/bench_decision_api.py [--servers 2 --clients 50 --seconds 20] [--quick]
"""
from __future__ import annotations

import argparse
import itertools
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_decision_api import CALLS, POLICY, SERVE, _free_port  # noqa: E402 - the suite's calls and server

from dshc.compiler.program import Program  # noqa: E402
from dshc.compiler.request import Request  # noqa: E402


def _start(ws: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen([*SERVE, "--load", str(ws / "policy.dsh"), "--workspace", str(ws),
                             "--log", str(ws / f"events-{port}.jsonl"), "--http", f"127.0.0.1:{port}"],
                            cwd=ws, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/readyz").status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit(f"server on {base} did not start")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--quick", action="store_true", help="2 s with 8 clients")
    opts = parser.parse_args()
    if opts.quick:
        opts.clients, opts.seconds = 8, 2.0
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "policy.dsh").write_text(POLICY)
        program = Program.load([ws / "policy.dsh"])
        expected = [program.decide(Request(**ctx), tool, args, str(ws)).effect for tool, args, ctx in CALLS]
        servers = [_start(ws) for _ in range(opts.servers)]
        latencies: list[float] = []
        disagreements, errors = [0], [0]
        lock = threading.Lock()
        stop = time.monotonic() + opts.seconds

        def client(n: int) -> None:
            mine, bad, failed = [], 0, 0
            with httpx.Client(base_url=servers[n % len(servers)][1], timeout=30) as http:
                for i in itertools.count(n):
                    if time.monotonic() >= stop:
                        break
                    tool, args, ctx = CALLS[i % len(CALLS)]
                    started = time.perf_counter()
                    answer = http.post("/v1/decide", json={"tool": tool, "args": args, "context": ctx})
                    mine.append(time.perf_counter() - started)
                    if answer.status_code != 200:
                        failed += 1
                    elif answer.json()["decision"] != expected[i % len(CALLS)]:
                        bad += 1
            with lock:
                latencies.extend(mine)
                disagreements[0] += bad
                errors[0] += failed

        threads = [threading.Thread(target=client, args=(n,)) for n in range(opts.clients)]
        begun = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - begun
        for proc, _ in servers:
            proc.terminate()
            proc.wait(10)
    cuts = statistics.quantiles(latencies, n=100)
    print(f"{opts.servers} servers, {opts.clients} clients, {elapsed:.1f} s: {len(latencies)} decisions, "
          f"{len(latencies) / elapsed:.0f}/s, p50 {cuts[49] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms, "
          f"{disagreements[0]} disagree with Program.decide, {errors[0]} non-200")
    return 0 if disagreements[0] == 0 and errors[0] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
