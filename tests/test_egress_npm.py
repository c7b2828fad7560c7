"""`npm view` under a guarded-style policy that lists the npm registry: npm, told of the proxy as a sandboxed
command is (HTTP_PROXY), reaches a recorded registry on loopback through the egress proxy, whose resolver maps
the listed name to loopback; a registry the policy does not list is refused before any lookup."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import http_reply

from dshc.common.hosts import HostRules
from dshc.runtime.sandbox import proxy

NPM = shutil.which("npm")
# a packument in the registry's shape, trimmed to what `npm view` reads
PACKUMENT = (Path(__file__).parent / "fixtures" / "npm" / "left-pad.json").read_bytes()
POLICY = 'policy npm-guarded extends guarded {\n  network allow "registry.npmjs.org"\n}\n'


class _Registry(http.server.BaseHTTPRequestHandler):
    seen: list = []

    def do_GET(self):  # noqa: N802 - the stdlib's name
        self.seen.append((self.path, self.headers.get("Host")))
        found = self.path.rstrip("/") == "/left-pad"
        http_reply(self, 200 if found else 404, PACKUMENT if found else b'{"error":"Not found"}', "application/json")

    def log_message(self, *args):
        pass


@pytest.fixture
def registry():
    _Registry.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], _Registry.seen
    server.shutdown()
    server.server_close()


def policy_rules(cli, tmp_path, command: str) -> HostRules:
    """The host lists the sandbox would give `command` under the policy, which must allow it."""
    (tmp_path / "p.dsh").write_text(POLICY)
    decided = cli(
        "decide",
        "bash",
        "--args",
        json.dumps({"command": command, "description": "d"}),
        "--load",
        str(tmp_path / "p.dsh"),
        "--policy",
        "npm-guarded",
        "--host",
        "web",
        "--json",
    ).json()
    assert decided["decision"] == "allow", decided
    return HostRules(decided["sandbox"]["network_allow"], decided["sandbox"]["network_deny"])


@pytest.fixture
def npm_view(cli, tmp_path):
    """`npm view left-pad version` of the registry at a URL, through a proxy on loopback holding the policy's lists,
    whose resolver knows one name, registry.npmjs.org, as 127.0.0.1 (nothing is looked up outside): (npm's run,
    the names the proxy looked up, its refusals)."""
    made = []

    def view(url: str):
        looked_up, refused = [], []

        def resolve(host, port, type=0):
            looked_up.append(host)
            if host != "registry.npmjs.org":
                raise socket.gaierror(socket.EAI_NONAME, "unknown to the test's resolver")
            return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", port))]

        rules = policy_rules(cli, tmp_path, f"npm view left-pad version --json --registry {url}")
        listener = socket.create_server(("127.0.0.1", 0))
        made.append(listener)
        threading.Thread(
            target=proxy.serve,
            args=(listener, rules, lambda *seen: refused.append(seen)),
            kwargs={"resolve": resolve},
            daemon=True,
        ).start()
        (tmp_path / "npmrc").write_text("")
        address = f"http://127.0.0.1:{listener.getsockname()[1]}"
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "npm_config_userconfig": str(tmp_path / "npmrc"),
            "npm_config_cache": str(tmp_path / "npm-cache"),
            "npm_config_update_notifier": "false",
            "npm_config_fetch_retries": "0",
            # as the launcher sets them in the sandbox
            **{name: address for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")},
        }
        done = subprocess.run(
            [NPM, "view", "left-pad", "version", "--json", "--registry", url],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done, looked_up, refused

    yield view
    for listener in made:
        listener.close()


@pytest.mark.skipif(NPM is None, reason="npm is not installed")
def test_npm_view_reaches_a_listed_registry_through_the_proxy(registry, npm_view):
    port, seen = registry
    done, looked_up, refused = npm_view(f"http://registry.npmjs.org:{port}/")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == "1.3.0"
    assert seen and seen[0] == ("/left-pad", f"registry.npmjs.org:{port}")
    assert set(looked_up) == {"registry.npmjs.org"} and refused == []


@pytest.mark.skipif(NPM is None, reason="npm is not installed")
def test_npm_view_of_an_unlisted_registry_is_refused_before_any_lookup(registry, npm_view):
    port, seen = registry
    done, looked_up, refused = npm_view(f"http://registry.example.org:{port}/")
    assert done.returncode != 0 and "1.3.0" not in done.stdout
    assert ("registry.example.org", port) in [(host, port_) for host, port_, _ in refused]
    assert looked_up == [] and seen == []
