"""Optional extras: the core commands run without any of them, and a command whose extra is
missing exits 2 with DSH407 naming the extra to install, never a traceback. A missing module is
simulated the way Python's import system spells it: `sys.modules[name] = None`."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from dshc.cli import extras
from dshc.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
OPTIONAL = sorted({m for modules in extras.EXTRAS.values() for m in modules})


def _without(monkeypatch, *modules: str) -> None:
    """These modules cannot be imported, and dshc's modules that import them load afresh."""
    for name in modules:  # and its submodules another test imported: `from a.b import c` finds `a.b` loaded
        for loaded in [n for n in sys.modules if n == name or n.startswith(name + ".")] or [name]:
            monkeypatch.setitem(sys.modules, loaded, None)
    for name in [
        n
        for n in sys.modules
        if n.startswith(
            (
                "dshc.cli.serve",
                "dshc.cli.ui",
                "dshc.cli.lsp",
                "dshc.cli.gateway",
                "dshc.cli.decision_api",
                "dshc.runtime.pg_log",
            )
        )
    ]:
        monkeypatch.delitem(sys.modules, name)


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue() + err.getvalue()


@pytest.mark.parametrize(
    "modules, argv, extra",
    [
        (("mcp", "anyio"), ["serve"], "serve"),
        (("uvicorn",), ["serve", "--http", "127.0.0.1:0"], "serve"),
        (("starlette", "uvicorn"), ["ui", "--port", "0"], "ui"),
        (("pygls", "lsprotocol"), ["lsp"], "lsp"),
        (("psycopg",), ["audit", "postgresql://127.0.0.1:1/none"], "postgres"),
        (("psycopg",), ["replay", "postgresql://127.0.0.1:1/none", "--policy", "read-only"], "postgres"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_a_command_whose_extra_is_missing_names_the_extra(monkeypatch, modules, argv, extra):
    _without(monkeypatch, *modules)
    code, text = _run(*argv)
    assert code == 2 and "DSH407" in text and f"pip install 'dshc[{extra}]'" in text, text
    assert "Traceback" not in text and "internal error" not in text


def test_building_a_bundle_without_cryptography_names_the_bundles_extra(monkeypatch, tmp_path):
    _without(monkeypatch, "cryptography")
    code, text = _run("build", "--new-key", str(tmp_path / "k"), "-o", str(tmp_path / "b.tar.gz"))
    assert code == 2 and "pip install 'dshc[bundles]'" in text and not (tmp_path / "b.tar.gz").exists()


def test_a_postgres_log_without_psycopg_refuses_before_any_call_runs(monkeypatch, tmp_path):
    _without(monkeypatch, "psycopg")
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps({"id": "a", "name": "write", "arguments": {"file_path": "made", "content": "x"}}) + "\n"
    )
    code, text = _run(
        "run", str(calls), "--workspace", str(tmp_path), "--log", "postgresql://127.0.0.1:1/none", "--approve", "once"
    )
    assert (
        code == 2
        and "a postgresql:// event log needs the optional extra `postgres`" in text
        and not (tmp_path / "made").exists()
    )


def test_a_module_of_no_extra_is_still_a_bug():
    missing = ModuleNotFoundError("No module named 'lark'", name="lark")
    assert extras.translated(missing, "compile") is missing


def test_every_module_of_an_extra_is_installed_by_the_extra_pyproject_names():
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(extras.EXTRAS) <= set(optional)
    assert set(optional["all"][0].split("[")[1].rstrip("]").split(",")) >= set(extras.EXTRAS)
    assert "dshc[all]" in optional["test"]
    core = " ".join(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    for distribution in ("mcp", "starlette", "uvicorn", "psycopg", "prometheus-client", "pygls", "cryptography"):
        assert distribution not in core


CORE = """
import io, json, sys
for name in {optional!r}:
    sys.modules[name] = None  # not installed
from dshc.cli.main import main
codes = {{}}
for argv in {commands!r}:
    out, err = io.StringIO(), io.StringIO()
    codes[" ".join(argv[:2])] = (main(argv, out, err), err.getvalue()[-300:])
print(json.dumps(codes))
"""


def test_the_core_commands_run_without_any_extra(tmp_path):
    (tmp_path / "calls.jsonl").write_text(
        json.dumps({"id": "a", "name": "bash", "arguments": {"command": "echo hi", "description": "d"}}) + "\n"
    )
    (tmp_path / "p.dsh").write_text(
        'policy p "P" {\n  default ask\n  allow bash when args.command matches "git *"\n}\n'
    )
    (tmp_path / "p.test.toml").write_text(
        '[context]\npreset = "standard"\n\n[[test]]\nname = "git"\npolicy = "p"\n\n'
        '[[test.call]]\ntool = "bash"\nargs = { command = "git status", '
        'description = "d" }\nexpect = "allow"\n'
    )
    hook_event = json.dumps(
        {"hook_event_name": "PreToolUse", "tool_name": "Read", "cwd": str(tmp_path), "tool_input": {"file_path": "x"}}
    )
    commands = [
        ["--help"],
        ["compile", "minimal"],
        ["explain", "bash", "minimal"],
        ["check", str(tmp_path / "p.dsh")],
        ["decide", "bash", "--args", '{"command": "ls", "description": "d"}'],
        ["fmt", "--check", str(tmp_path / "p.dsh")],
        ["diff", "@shipped", str(tmp_path / "p.dsh")],
        ["verify", "--no-shipped", str(tmp_path / "p.dsh")],
        ["test", str(tmp_path / "p.test.toml"), "--load", str(tmp_path / "p.dsh")],
        ["run", str(tmp_path / "calls.jsonl"), "--workspace", str(tmp_path), "--approve", "once"],
    ]
    done = subprocess.run(
        [sys.executable, "-c", CORE.format(optional=OPTIONAL, commands=commands)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    codes = json.loads(done.stdout)
    failed = {argv: result for argv, result in codes.items() if result[0] not in (0, 1)}
    assert failed == {}
    hook = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys\nfor n in {OPTIONAL!r}: sys.modules[n] = None\n"
            "from dshc.cli.entry import run\nsys.exit(run(['hook', 'claude-code']))",
        ],
        input=hook_event,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert json.loads(hook.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow", hook.stdout + hook.stderr
