"""run_code's readiness follows the machine: where no Node.js worker can run programs, gate 5 shows it
unavailable (same wire, same fingerprint) and calls are refused there; the package build fetches the
worker's npm dependency (setup.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
from pathlib import Path

import pytest

from dshc.compiler.request import Request
from dshc.runtime.code import node_runtime

ROOT = Path(__file__).resolve().parent.parent
CODE = dict(preset="code", host="web", mode="code")


def _ready(view, name="run_code"):
    return next(t for t in view.tools if t.name == name).ready


def test_without_the_worker_run_code_is_listed_but_unavailable_at_gate_5(program):
    present = program.view(Request(**CODE))
    absent = program.view(Request(**CODE, without_services={"code-worker"}))
    assert _ready(present) == "ready" and _ready(absent) == "unavailable"
    assert absent.fingerprint == present.fingerprint  # readiness never changes the wire


def test_the_cli_removes_the_worker_where_node_is_missing(cli, monkeypatch):
    monkeypatch.setenv("DSHC_NODE", "dshc-no-such-node")
    assert node_runtime.missing_runtime() == "Node.js (`node` on PATH)"
    compiled = cli("compile", "code", "--host", "web", "--mode", "code", "--json")
    assert compiled.code == 0 and [t["ready"] for t in compiled.json()["tools"]] == ["unavailable"]
    explained = cli("explain", "run_code", "code", "--host", "web", "--mode", "code", "--json")
    assert explained.code == 1 and explained.json()["failed_gate"] == "ready"
    assert "code-worker" in explained.json()["gates"][-1]["reason"]
    # a caller who knows better (a remote host's worker) says so
    assert (
        cli("compile", "code", "--host", "web", "--mode", "code", "--with", "code-worker", "--json").json()["tools"][0][
            "ready"
        ]
        == "ready"
    )


def test_a_run_code_call_is_refused_at_gate_5_where_node_is_missing(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("DSHC_NODE", "dshc-no-such-node")
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps({"id": "a", "name": "run_code", "arguments": {"code": "return 6 * 7", "description": "d"}}) + "\n"
    )
    result = cli("run", str(calls), "--preset", "code", "--host", "web", "--workspace", str(tmp_path), "--json")
    line = json.loads(result.out)
    assert result.code == 1 and line["isError"] and line["decided_by"] == [{"rule": "gate:ready", "source": None}]


def test_missing_npm_dependency_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr(node_runtime, "TRANSPILER", tmp_path / "absent" / "package.json")
    monkeypatch.setattr(node_runtime, "node_executable", lambda: "/usr/bin/node")
    assert "npm dependencies" in node_runtime.missing_runtime()


# --- the build step ---------------------------------------------------------------------------------
def _setup_module():
    spec = importlib.util.spec_from_file_location("dshc_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: setup() does not run
    return module


def _fake_npm(tmp_path, body: str) -> str:
    npm = tmp_path / "npm"
    npm.write_text("#!/bin/sh\n" + body)
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    return str(npm)


def test_the_build_step_runs_npm_ci_only_when_node_modules_is_absent(tmp_path, monkeypatch):
    monkeypatch.delenv("DSHC_SKIP_NPM", raising=False)
    setup = _setup_module()
    folder = tmp_path / "node"
    folder.mkdir()
    npm = _fake_npm(tmp_path, f'echo "$@" > {tmp_path}/argv; mkdir -p "$3/node_modules"\n')
    assert setup.fetch_worker_dependencies(folder, npm) == "fetched"
    assert (tmp_path / "argv").read_text().split()[:3] == ["ci", "--prefix", str(folder)]
    os.remove(tmp_path / "argv")
    assert setup.fetch_worker_dependencies(folder, npm) == "present" and not (tmp_path / "argv").exists()


def test_a_failed_npm_ci_fails_the_build_and_leaves_nothing_half_filled(tmp_path, monkeypatch):
    monkeypatch.delenv("DSHC_SKIP_NPM", raising=False)
    setup = _setup_module()
    folder = tmp_path / "node"
    folder.mkdir()
    npm = _fake_npm(tmp_path, 'mkdir -p "$3/node_modules/partial"; echo "network down" >&2; exit 7\n')
    with pytest.raises(SystemExit, match="network down"):
        setup.fetch_worker_dependencies(folder, npm)
    assert not (folder / "node_modules").exists()
    monkeypatch.setenv("DSHC_SKIP_NPM", "1")
    assert setup.fetch_worker_dependencies(folder, npm) == "skipped"
