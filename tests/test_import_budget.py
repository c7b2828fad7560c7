"""What a warm `dshc decide` / `dshc hook claude-code` process imports: module sets, not time.

Each process runs the real `dshc` entry point in a child Python, then writes the names in
sys.modules to a file. With the program cache warm (after one priming process), deciding must not
load the parser, the graph library, the schema validator, the templates, the validation library or
the runtime's tool set. The priming process is the control: it parses, so it must show lark.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

DRIVER = """
import json, sys
out, sys.argv = sys.argv[1], ["dshc"] + sys.argv[2:]
from dshc.cli.entry import run  # the entry point short of ending the process
code = run(sys.argv[1:])
sys.stdout.flush()
with open(out, "w") as handle:
    json.dump(sorted(sys.modules), handle)
sys.exit(code)
"""

# loaded only to parse or check fresh sources, to render, or to run tools: never to decide
NOT_FOR_DECIDING = (
    "lark",
    "networkx",
    "jsonschema",
    "jinja2",
    "pydantic",
    "pydantic_core",
    "importlib.metadata",
    "psutil",
    "dshc.compiler.parse",
    "dshc.compiler.to_ast",
    "dshc.compiler.templates",
    "dshc.runtime.tools",
    "dshc.runtime.sandbox",
    "dshc.runtime.pipeline",
    "dshc.runtime.stages",
    "dshc.cli.run_calls",
    "dshc.cli.serve",
)
SHELL_ANALYSIS = ("dshc.compiler.shell", "tree_sitter")  # for shell commands only

POLICY = (
    'policy team "Team" {\n  approval ask\n  default ask\n  allow bash when args.command matches "git status *"\n}\n'
)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("budget")
    (root / "team.dsh").write_text(POLICY)
    (root / ".dshc").write_text('load = ["team.dsh"]\npolicy = "team"\n')
    env = {**os.environ, "XDG_CACHE_HOME": str(root / "cache")}
    env.pop("DSHC_NO_CACHE", None)
    return root, env


def _run(project, argv, stdin=""):
    root, env = project
    out = root / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(out), *argv],
        input=stdin,
        text=True,
        cwd=root,
        capture_output=True,
        env=env,
        timeout=120,
    )
    return done, set(json.loads(out.read_text()))


def _loaded(modules: set[str], names) -> list[str]:
    return sorted(name for name in names if any(m == name or m.startswith(name + ".") for m in modules))


@pytest.fixture(scope="module")
def startup(project):
    """What the interpreter loads before dshc does anything (site, .pth files): not dshc's doing."""
    root, env = project
    done = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    return set(json.loads(done.stdout))


def _decide(tool: str, args: str) -> list[str]:
    return ["decide", tool, "--args", args, "--load", "team.dsh", "--policy", "team", "--json"]


# a process tool's decision describes its sandbox, which probes the host: only then may the sandbox load
DECISIONS = [
    (
        _decide("bash", '{"command": "git status", "description": "status"}'),
        "allow",
        ("dshc.runtime.sandbox", *SHELL_ANALYSIS),
    ),
    (_decide("read", '{"file_path": "notes.md"}'), "ask", ()),
]  # team's default


@pytest.mark.parametrize("argv, expected, used", DECISIONS, ids=["bash", "read"])
def test_a_warm_decide_process_loads_nothing_it_does_not_decide_with(project, startup, argv, expected, used):
    first, _ = _run(project, argv)  # primes the program cache (when the test before did not)
    warm, modules = _run(project, argv)
    for done in (first, warm):
        assert done.returncode == (0 if expected == "allow" else 1), done.stderr
        assert json.loads(done.stdout)["decision"] == expected
    assert "dshc.compiler.policy" in modules  # the warm process did decide
    assert _loaded(modules - startup, [m for m in NOT_FOR_DECIDING + SHELL_ANALYSIS if m not in used]) == []


def test_the_driver_sees_what_a_cold_process_loads(project, tmp_path):
    root, env = project
    cold = (root, {**env, "XDG_CACHE_HOME": str(tmp_path / "empty-cache")})
    _, modules = _run(cold, _decide("read", '{"file_path": "notes.md"}'))
    assert "lark" in modules  # a cold process parses: the driver really lists imports
    assert "networkx" not in modules  # resolving names no cycle here, so the declarations graph stays lazy


def test_a_warm_hook_process_loads_nothing_it_does_not_decide_with(project, startup):
    root, _ = project
    event = json.dumps(
        {
            "session_id": "s",
            "cwd": str(root),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "git status"},
            "tool_use_id": "t",
        }
    )
    _run(project, ["hook", "claude-code"], event)  # primes the cache if the decide test did not
    warm, modules = _run(project, ["hook", "claude-code"], event)
    assert json.loads(warm.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow", warm.stderr
    assert "dshc.compiler.policy" in modules
    # the hook never builds the CLI's parser or its command table either
    assert _loaded(modules - startup, NOT_FOR_DECIDING + ("dshc.cli.main", "dshc.cli.commands")) == []


@pytest.mark.parametrize("argv", [["--help"], ["codes"], ["fmt", "--help"]])
def test_a_command_that_loads_no_program_loads_no_compiler(project, startup, argv):
    """Help and the code list read no declarations: none of the compiler's program, rule index or parser
    loads for them (asking for the program cache is a switch, not the cache)."""
    done, modules = _run(project, argv)
    assert done.returncode == 0, done.stderr
    compiler = ("dshc.compiler.program", "dshc.compiler.policy", "dshc.compiler.resolve", "dshc.compiler.parse")
    assert _loaded(modules - startup, (*compiler, "lark", "networkx", "jsonschema")) == []
    if argv == ["--help"]:  # every command's parser is built, and none imports what only its run needs
        assert _loaded(modules - startup, ("typing", "signal", "shutil", "pygls", "uvicorn", "starlette")) == []
