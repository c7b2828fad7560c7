"""A `dshc serve --http` subprocess on a free loopback port, started and awaited for the tests that drive it."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time

import httpx

SERVE = [sys.executable, "-c", "from dshc.cli.entry import entry; entry()", "serve"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(args: list[str], cwd, host: str = "127.0.0.1", env: dict | None = None, port: int | None = None):
    """Yields the base URL once /readyz answers 200; ends the process (ours, by pid) afterwards.
    `host`: the --http address as written (`[::1]`, `LOCALHOST`, `0.0.0.0` …; a wildcard is dialled on
    loopback); `env`: added to the environment; `port`: a given one (default: a free one)."""
    shared = port is not None
    port = port or free_port()
    proc = subprocess.Popen(
        [*SERVE, *args, "--http", f"{host}:{port}"],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    dialled = {"localhost": "127.0.0.1", "0.0.0.0": "127.0.0.1", "[::]": "[::1]"}.get(host.lower(), host)
    base = f"http://{dialled}:{port}"
    try:
        if shared:  # another process may answer /readyz on this port: wait for this one's own word
            line = proc.stderr.readline().decode()
            assert line.startswith("dshc serve: serving"), line + proc.stderr.read().decode()
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "server did not start"
            try:
                if httpx.get(base + "/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base, proc
    finally:
        proc.terminate()
        proc.wait(10)
