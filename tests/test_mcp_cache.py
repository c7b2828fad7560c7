"""The remembered tool list of an upstream: used while it is down, and only from a private file."""
from __future__ import annotations

import os

from dshc.cli import gateway
from dshc.compiler.upstream import Endpoint

TOOLS = [{"name": "now", "inputSchema": {"type": "object"}}]


def test_a_down_upstream_keeps_the_tools_it_last_answered(tmp_path, monkeypatch):
    monkeypatch.setenv("DSHC_CACHE_DIR", str(tmp_path))
    endpoint = Endpoint("clock", "clock-server", (), (), None, ())
    assert gateway.known_tools(endpoint, None) is None  # never answered: no tools yet
    assert gateway.known_tools(endpoint, TOOLS) == TOOLS
    assert gateway.known_tools(endpoint, None) == TOOLS
    other = Endpoint("clock", "another-server", (), (), None, ())  # same name, another server: not its list
    assert gateway.known_tools(other, None) is None


def test_a_list_someone_else_could_have_written_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("DSHC_CACHE_DIR", str(tmp_path))
    endpoint = Endpoint("clock", "clock-server", (), (), None, ())
    gateway.known_tools(endpoint, TOOLS)
    path = gateway._cache_file(endpoint)
    os.chmod(path, 0o666)
    assert gateway.known_tools(endpoint, None) is None
    os.chmod(path, 0o600)
    os.chmod(os.path.dirname(path), 0o777)
    assert gateway.known_tools(endpoint, None) is None
    os.chmod(os.path.dirname(path), 0o700)
    with open(path, "w") as handle:
        handle.write("{not json")
    assert gateway.known_tools(endpoint, None) is None
