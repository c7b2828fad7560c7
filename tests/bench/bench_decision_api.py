"""Load on the decision API: N `dshc serve --http` processes, M concurrent loopback clients for S seconds.

The clients are spread over the servers as a balancer in front of them would spread them (the API keeps no
state between requests, so any instance may answer any call). Prints throughput, p50/p90/p99/max latency,
the errors (answers other than 200, and requests that failed: refused, reset, timed out) and how many
answers disagree with Program.decide in-process; the run fails unless both counts are 0.
Run: python tests/bench/bench_decision_api.py [--servers 2 --clients 50 --seconds 20] [--quick]
"""
from __future__ import annotations

import argparse
import contextlib
import itertools
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from http_serve import serving  # noqa: E402 - the suite's server start
from test_decision_api import CALLS, POLICY  # noqa: E402 - the suite's calls

from dshc.compiler.program import Program  # noqa: E402
from dshc.compiler.request import Request  # noqa: E402


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
        stack = contextlib.ExitStack()
        servers = [stack.enter_context(serving(["--load", str(ws / "policy.dsh"), "--workspace", str(ws),
                                                "--log", str(ws / f"events-{n}.jsonl")], ws))
                   for n in range(opts.servers)]
        latencies: list[float] = []
        disagreements, errors = [0], [0]
        lock = threading.Lock()
        stop = time.monotonic() + opts.seconds

        def client(n: int) -> None:
            mine, bad, failed = [], 0, 0
            with httpx.Client(base_url=servers[n % len(servers)][0], timeout=30) as http:
                for i in itertools.count(n):
                    if time.monotonic() >= stop:
                        break
                    tool, args, ctx = CALLS[i % len(CALLS)]
                    started = time.perf_counter()
                    try:
                        answer = http.post("/v1/decide", json={"tool": tool, "args": args, "context": ctx})
                    except httpx.HTTPError:  # refused, reset or timed out: an error, and the client goes on
                        failed += 1
                        continue
                    finally:
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
        stack.close()
    cuts = statistics.quantiles(latencies, n=100)
    print(f"{opts.servers} servers, {opts.clients} clients, {elapsed:.1f} s: {len(latencies)} requests, "
          f"{len(latencies) / elapsed:.0f}/s, p50 {cuts[49] * 1000:.1f} ms, p90 {cuts[89] * 1000:.1f} ms, "
          f"p99 {cuts[98] * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms, {errors[0]} errors, "
          f"{disagreements[0]} disagree with Program.decide")
    return 0 if disagreements[0] == 0 and errors[0] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
