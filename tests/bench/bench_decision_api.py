"""Load on the decision API: N `dshc serve --http` processes, M concurrent loopback clients for S seconds.

The N servers listen on one port (`--reuse-port`: the kernel hands each connection to one of them), as
instances behind a balancer; `--ports` gives each its own port and spreads the clients over them instead.
The API keeps no state between requests, so any instance may answer any call. The clients run in P
processes (threads in each), so the load generator is not one interpreter's lock. Prints throughput,
p50/p90/p99/max latency, the errors (answers other than 200, and requests that failed: refused, reset,
timed out) and how many answers disagree with Program.decide in-process; the run fails unless both are 0.
Run: python tests/bench/bench_decision_api.py [--servers 2 --clients 50 --seconds 20 --client-processes 2]
     [--ports] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import multiprocessing
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from http_serve import free_port, serving  # noqa: E402 - the suite's server start
from test_decision_api import CALLS, POLICY  # noqa: E402 - the suite's calls

from dshc.compiler.program import Program  # noqa: E402
from dshc.compiler.request import Request  # noqa: E402


def clients(bases: list[str], first: int, count: int, stop: float, expected: list[str]) -> tuple[list, int, int]:
    """`count` client threads (numbered from `first`) calling until `stop`: (latencies, disagreements, errors)."""
    latencies, totals, lock = [], [0, 0], threading.Lock()

    def client(n: int) -> None:
        mine, bad, failed = [], 0, 0
        with httpx.Client(base_url=bases[n % len(bases)], timeout=30) as http:
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
            totals[0] += bad
            totals[1] += failed

    threads = [threading.Thread(target=client, args=(n,)) for n in range(first, first + count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, totals[0], totals[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument("--ports", action="store_true", help="a port per server, the clients spread over them")
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
        port = None if opts.ports else free_port()
        servers = [
            stack.enter_context(
                serving(
                    [
                        "--load",
                        str(ws / "policy.dsh"),
                        "--workspace",
                        str(ws),
                        "--log",
                        str(ws / f"events-{n}.jsonl"),
                        "--caller-context",
                        *(() if opts.ports else ("--reuse-port",)),
                    ],
                    ws,
                    port=port,
                )
            )
            for n in range(opts.servers)
        ]
        bases = sorted({base for base, _ in servers})
        processes = max(1, min(opts.client_processes, opts.clients))
        shares = [opts.clients // processes + (p < opts.clients % processes) for p in range(processes)]
        firsts = list(itertools.accumulate([0, *shares[:-1]]))
        begun = time.monotonic()
        stop = begun + opts.seconds
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            parts = pool.starmap(
                clients, [(bases, first, share, stop, expected) for first, share in zip(firsts, shares)]
            )
        elapsed = time.monotonic() - begun
        stack.close()
    latencies = [x for part in parts for x in part[0]]
    disagreements, errors = sum(part[1] for part in parts), sum(part[2] for part in parts)
    cuts = statistics.quantiles(latencies, n=100)
    where = f"{len(bases)} port{'s' if len(bases) > 1 else ''}"
    print(
        f"{opts.servers} servers on {where}, {opts.clients} clients in {processes} processes, {elapsed:.1f} s: "
        f"{len(latencies)} requests, {len(latencies) / elapsed:.0f}/s, p50 {cuts[49] * 1000:.1f} ms, "
        f"p90 {cuts[89] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms, "
        f"{errors} errors, {disagreements} disagree with Program.decide"
    )
    return 0 if disagreements == 0 and errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
