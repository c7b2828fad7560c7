"""The package build's prebuilt program, grammar tables and catalog stamp (setup.py `prebuild`,
compiler/prebuilt.py): a first call after installing uses them, and anything edited after the build
is compiled afresh, never answered from them."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the installed layout: dshc.<part> -> its folder (pyproject's package-dir), what a call imports
PARTS = {"common": "common", "compiler": "compiler", "catalogs": "catalogs", "presets": "presets",
         "policies": "policies", "cli": "cli", "runtime": "runtime"}  # fmt: skip
SHELL_CALL = ["decide", "bash", "--args", json.dumps({"command": "git status", "description": "s"}), "standard"]
# runs one command as the `dshc` executable does (its disk cache on), then says what it imported
PROBE = """
import json, sys
{patch}
from dshc.cli.entry import run
code = run(json.loads(sys.argv[1]))
print(json.dumps({{"code": code, "lark": "lark" in sys.modules, "jsonschema": "jsonschema" in sys.modules}}))
"""


def _setup_module():
    spec = importlib.util.spec_from_file_location("dshc_setup_prebuilt", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: setup() does not run
    return module


def _install(into: Path) -> Path:
    """The package's folders copied as a build lays them out (no tests, bytecode or npm packages)."""
    skip = shutil.ignore_patterns("__pycache__", "node_modules", "testing", "prebuilt")
    for part, folder in PARTS.items():
        shutil.copytree(ROOT / folder, into / "dshc" / part, ignore=skip)
    return into


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    lib = _install(tmp_path_factory.mktemp("lib"))
    assert _setup_module().prebuild(str(lib)) == "built"
    return lib


def _run(lib: Path, cache: Path, argv: list[str], patch: str = "", cwd: Path | None = None) -> tuple[dict, str]:
    env = {**os.environ, "PYTHONPATH": str(lib), "XDG_CACHE_HOME": str(cache)}
    env.pop("DSHC_NO_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(patch=patch), json.dumps(argv)],
        env=env,
        cwd=cwd or cache.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    *answer, facts = done.stdout.strip().splitlines()
    return json.loads(facts), "\n".join(answer) + done.stderr


def test_the_build_writes_the_program_the_tables_and_the_stamp(built):
    names = sorted(os.listdir(built / "dshc" / "compiler" / "prebuilt"))
    assert [n.split("-")[0] for n in names] == ["catalog", "grammar", "program"]


def test_a_first_call_parses_and_checks_nothing_and_answers_as_a_compile_does(built, tmp_path):
    facts, answer = _run(built, tmp_path / "cache", SHELL_CALL)
    assert facts == {"code": 0, "lark": False, "jsonschema": False}
    fresh, fresh_answer = _run(
        built, tmp_path / "other", SHELL_CALL, patch="import os; os.environ['DSHC_NO_CACHE'] = '1'"
    )
    assert fresh["lark"] and fresh_answer == answer
    assert any(n.startswith("program-") for n in os.listdir(tmp_path / "cache" / "dshc"))  # the next call's


def test_an_edited_shipped_preset_is_compiled_not_answered_from_the_build(built, tmp_path):
    lib = _install(tmp_path / "lib")
    shutil.copytree(built / "dshc" / "compiler" / "prebuilt", lib / "dshc" / "compiler" / "prebuilt")
    standard = lib / "dshc" / "presets" / "standard.dsh"
    standard.write_text(standard.read_text() + "\n# edited after the build\n")
    facts, _ = _run(lib, tmp_path / "cache", SHELL_CALL)
    assert facts["code"] == 0 and facts["lark"], "the edited source was answered from the build's program"


def test_edited_compiler_code_is_not_answered_from_the_build(built, tmp_path):
    lib = _install(tmp_path / "lib")
    shutil.copytree(built / "dshc" / "compiler" / "prebuilt", lib / "dshc" / "compiler" / "prebuilt")
    with open(lib / "dshc" / "compiler" / "gates" / "allowed.py", "a") as handle:
        handle.write("\n# edited after the build\n")
    facts, _ = _run(lib, tmp_path / "cache", SHELL_CALL)
    assert facts["code"] == 0 and facts["lark"]


def test_a_damaged_build_file_is_compiled_afresh(built, tmp_path):
    lib = _install(tmp_path / "lib")
    shutil.copytree(built / "dshc" / "compiler" / "prebuilt", lib / "dshc" / "compiler" / "prebuilt")
    for name in os.listdir(lib / "dshc" / "compiler" / "prebuilt"):
        if name.startswith(("program-", "grammar-")):
            (lib / "dshc" / "compiler" / "prebuilt" / name).write_text('{"v": [')
    facts, answer = _run(lib, tmp_path / "cache", SHELL_CALL)
    _, expected = _run(built, tmp_path / "good", SHELL_CALL)
    assert facts["code"] == 0 and facts["lark"] and answer == expected


def test_a_users_own_file_uses_the_builds_grammar_tables_and_catalog_stamp(built, tmp_path):
    (tmp_path / "team.dsh").write_text('policy team "Team" {\n  default ask\n  allow read\n}\n')
    argv = [
        "decide",
        "read",
        "--args",
        '{"file_path": "a.md"}',
        "--load",
        str(tmp_path / "team.dsh"),
        "--policy",
        "team",
    ]
    # building the tables from the grammar, or checking the catalog's schemas, would fail here
    patch = "import lark; lark.Lark.__init__ = None; sys.modules['jsonschema'] = None"
    facts, answer = _run(built, tmp_path / "cache", argv, patch=patch)
    assert facts["code"] == 0 and answer.startswith("allow"), answer
    assert any(n.startswith("grammar-") for n in os.listdir(tmp_path / "cache" / "dshc"))


def test_the_build_step_keeps_the_build_environments_path(tmp_path, monkeypatch):
    """pip's isolated build puts its requirements (lark, jsonschema) on PYTHONPATH: the compile must see them."""
    setup = _setup_module()
    seen = {}

    def run(argv, env, **kwargs):
        seen.update(env)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(setup.subprocess, "run", run)
    monkeypatch.setenv("PYTHONPATH", "/build/env/overlay")
    assert setup.prebuild(str(tmp_path)) == "built"
    assert seen["PYTHONPATH"].split(os.pathsep) == [str(tmp_path), "/build/env/overlay"]
