"""The command table: one module per command under `cli/commands/`, one row per module, each module
loaded only when its command runs, and no import written as a string."""

from __future__ import annotations

import ast
import io
import subprocess
import sys
from pathlib import Path

import pytest

from dshc.cli.main import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(p.stem for p in (ROOT / "cli" / "commands").glob("*.py") if p.stem != "__init__")


def test_every_command_module_has_one_row_and_every_row_a_module():
    assert sorted(row.__name__ for row in COMMANDS.values()) == MODULES


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_row_gives_a_module_with_its_parser_setup_and_its_function(name):
    module = COMMANDS[name]()
    assert module.__name__ == f"dshc.cli.commands.{name if name != 'import' else 'import_'}"
    assert callable(module.add_parser) and callable(module.run)
    assert module.__doc__  # a module opens with what it is for
    parser = build_parser(only=name)
    (subparsers,) = [a for a in parser._actions if a.dest == "command"]
    assert list(subparsers.choices) == [name]  # the row's parser is the command's, under its name


def test_the_whole_help_lists_the_rows_in_table_order():
    out = io.StringIO()
    assert main(["--help"], out, io.StringIO()) == 0
    listed = [
        line.split()[0]
        for line in out.getvalue().splitlines()
        if line.startswith("    ") and line.split()[0] in COMMANDS
    ]
    assert listed == list(COMMANDS)


def test_a_usage_error_names_the_commands_own_help_for_every_row():
    for name in COMMANDS:
        if name == "hook":  # `dshc hook …` goes to the hook, which answers the agent, not a usage error
            continue
        err = io.StringIO()
        assert main([name, "--no-such-flag"], io.StringIO(), err) == 2
        assert f"`dshc {name} --help` lists the arguments" in err.getvalue(), name


def test_a_process_loads_the_module_of_the_command_it_runs_and_no_other():
    probe = (
        "import io, sys\nfrom dshc.cli.main import main\nmain(['codes'], io.StringIO(), io.StringIO())\n"
        "print(sorted(m for m in sys.modules if m.startswith('dshc.cli.commands.')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "['dshc.cli.commands.codes']", done.stderr


def _string_imports(path: Path) -> list[str]:
    calls = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == "import_module":
                calls.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return calls


def test_no_cli_module_imports_by_string():
    assert [hit for path in sorted((ROOT / "cli").rglob("*.py")) for hit in _string_imports(path)] == []


def test_what_a_parser_lists_without_loading_its_command_is_the_commands_own():
    # `dshc --help` builds every parser; these keep a copy so it loads neither the listing nor the readers
    from dshc.cli import evidence, ls
    from dshc.cli.commands import ls as ls_command, suggest as suggest_command

    assert ls_command.KINDS == ls.KINDS and suggest_command.FORMATS == evidence.FORMATS
