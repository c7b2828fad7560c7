"""A real `dshc serve --bundle --http` swaps bundles while clients decide over HTTP: no request fails."""

from __future__ import annotations

import io
import os
import threading
import time

import httpx
import pytest

from dshc.cli import bundle
from dshc.cli.main import main
from http_serve import serving

DENY = "policy mine extends workspace-write {\n  deny bash\n}\n"
ALLOW = "policy mine extends workspace-write {\n  allow bash\n}\n"
DECIDE = {"tool": "bash", "args": {"command": "ls", "description": "list"}, "context": {"preset": "standard"}}
CLIENTS, SWAPS = 6, 6


def _bundle(tmp_path, key, text, revision):
    src = tmp_path / f"src-{revision}"
    src.mkdir()
    (src / "p.dsh").write_text(text)
    out = tmp_path / f"{revision}.tar.gz"
    argv = ["build", str(src), "-o", str(out), "--key", key, "--revision", str(revision)]
    assert main(argv, io.StringIO(), io.StringIO()) == 0
    return out.read_bytes()


def _effect(client) -> str:
    return client.post("/v1/decide", json=DECIDE).json()["decision"]


def _until(client, effect) -> bool:
    deadline = time.monotonic() + 20  # the server polls its bundle every WATCH_EVERY_S
    while time.monotonic() < deadline:
        if _effect(client) == effect:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture()
def setup(tmp_path):
    key = str(tmp_path / "release.key")
    bundle.new_key(key)
    # revision 1 denies; each deploy is the next revision, alternating allow (2, 4, …) and deny (3, 5, …)
    blobs = [_bundle(tmp_path, key, ALLOW if revision % 2 == 0 else DENY, revision) for revision in range(1, SWAPS + 2)]
    served = tmp_path / "served.tar.gz"
    served.write_bytes(blobs[0])
    with serving(
        ["--bundle", str(served), "--trust", key + ".pub", "--workspace", str(tmp_path), "--policy", "mine"], tmp_path
    ) as (base, proc):
        yield base, served, blobs, proc


def test_hot_swap_under_http_load_fails_no_request(setup):
    base, served, blobs, proc = setup
    stop, failures, answers, lock = threading.Event(), [], [], threading.Lock()

    def client_loop():
        with httpx.Client(base_url=base, timeout=30) as client:
            while not stop.is_set():
                try:
                    answer = client.post("/v1/decide", json=DECIDE)
                    with lock:
                        if answer.status_code != 200:
                            failures.append((answer.status_code, answer.text[:200]))
                        else:
                            answers.append(answer.json()["decision"])
                except httpx.HTTPError as exc:  # a dropped or refused connection is a failed request too
                    with lock:
                        failures.append(repr(exc))

    threads = [threading.Thread(target=client_loop) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    seen_swaps = 0
    try:
        with httpx.Client(base_url=base, timeout=30) as probe:
            for round_ in range(SWAPS):
                want = "allow" if round_ % 2 == 0 else "deny"
                staged = served.with_name("next.tar.gz")
                staged.write_bytes(blobs[round_ + 1])
                os.replace(staged, served)  # a deploy drops the new bundle in with an atomic rename
                seen_swaps += _until(probe, want)
            tampered = bytearray(blobs[-1])
            tampered[len(tampered) // 2] ^= 0xFF
            staged = served.with_name("next.tar.gz")
            staged.write_bytes(bytes(tampered))
            os.replace(staged, served)
            time.sleep(1.0)  # a few poll rounds: the tampered bundle must be refused, the last good one kept
            last_good = "deny" if SWAPS % 2 == 0 else "allow"
            assert _effect(probe) == last_good
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert proc.poll() is None
    assert failures == []
    assert seen_swaps == SWAPS
    assert set(answers) == {"allow", "deny"} and len(answers) > SWAPS * CLIENTS
