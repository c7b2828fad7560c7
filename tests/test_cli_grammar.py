"""One grammar for every `dshc` command: each answers --help with its usage (exit 0), a preset is
written positionally or as --preset, the context flags mean the same everywhere, and --version
is the package's. The commands are discovered from the parser, not listed here."""

from __future__ import annotations

import argparse
import io
import tomllib
from pathlib import Path

import pytest

from dshc.cli.main import build_parser, main, parse_arguments, parser_for
from dshc.compiler.diagnostics import DshError

ROOT = Path(__file__).resolve().parent.parent
CONTEXT_FLAGS = (
    "--host",
    "--platform",
    "--with",
    "--without",
    "--flag",
    "--scope",
    "--mode",
    "--policy",
    "--plan",
    "--preset",
    "--load",
    "--no-shipped",
    "--catalog",
)


def _subcommands(parser: argparse.ArgumentParser, prefix=()):
    """(argv prefix, parser) for every command and nested command the parser knows."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name), sub
                yield from _subcommands(sub, (*prefix, name))


COMMANDS = dict(_subcommands(build_parser()))


def _main(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_the_parser_lists_the_commands_the_contract_names():
    assert {
        "compile",
        "explain",
        "decide",
        "check",
        "fmt",
        "diff",
        "verify",
        "run",
        "replay",
        "graph",
        "codes",
        "hook",
        "serve",
        "audit",
        "test",
    } <= {argv[0] for argv in COMMANDS}


@pytest.mark.parametrize("argv", sorted(COMMANDS), ids=" ".join)
def test_every_subcommand_answers_help_with_its_usage(argv):
    code, out, err = _main(*argv, "--help")
    assert (code, err) == (0, "") and out.startswith("usage: dshc " + " ".join(argv)), out[:200]


@pytest.mark.parametrize(
    "argv",
    [
        ["hook", "claude-code", "--help"],
        ["hook", "claude-code", "-h"],
        ["hook", "claude-code", "--preset", "code", "--help"],
        ["hook", "--help"],
    ],
)
def test_the_hook_answers_help_with_usage_not_a_decision(argv):
    code, out, _ = _main(*argv)
    assert code == 0 and out.startswith("usage: dshc hook claude-code") and "permissionDecision" not in out


def _preset_commands():
    for argv, parser in sorted(COMMANDS.items()):
        positionals = [a for a in parser._actions if not a.option_strings]
        if any(a.dest == "preset" for a in positionals):
            before = positionals[: [a.dest for a in positionals].index("preset")]
            # the positionals before PRESET, each given a value it accepts
            yield [*argv, *((a.choices and sorted(a.choices)[0]) or "x" for a in before)]


PRESET_COMMANDS = list(_preset_commands())


def test_every_command_that_joined_a_preset_before_still_does():
    assert {argv[0] for argv in PRESET_COMMANDS} >= {
        "compile",
        "explain",
        "decide",
        "graph",
        "run",
        "serve",
        "audit",
        "export",
    }


@pytest.mark.parametrize("argv", PRESET_COMMANDS, ids=lambda a: a[0])
def test_a_preset_reads_the_same_positionally_and_as_an_option(argv):
    def parsed(*extra):
        full = [*argv, *extra]
        return vars(parse_arguments(parser_for(full), full))

    assert parsed("minimal") == parsed("--preset", "minimal") == parsed("minimal", "--preset", "minimal")
    assert parsed("minimal")["preset"] == "minimal" and "preset_option" not in parsed("minimal")
    with pytest.raises(DshError, match="two presets: `standard` and --preset `minimal`"):
        parsed("standard", "--preset", "minimal")


def test_compile_with_preset_option_equals_the_positional_and_two_presets_are_a_usage_error():
    assert _main("compile", "--preset", "minimal", "--json") == _main("compile", "minimal", "--json")
    code, out, err = _main("compile", "standard", "--preset", "minimal")
    assert code == 2 and out == "" and "two presets" in err and "Traceback" not in err


def test_the_hook_takes_its_preset_either_way():
    from dshc.cli.hook import _parsed_options

    assert (
        _parsed_options(["claude-code", "minimal"]).preset
        == _parsed_options(["claude-code", "--preset", "minimal"]).preset
        == "minimal"
    )


def _flag(parser, option):
    action = next((a for a in parser._actions if option in a.option_strings), None)
    return (
        None
        if action is None
        else (action.dest, action.default, action.choices, action.nargs, action.help, type(action).__name__)
    )


def test_the_context_flags_mean_the_same_in_every_command_that_takes_a_host():
    reference = COMMANDS[("compile",)]
    with_host = [argv for argv, parser in COMMANDS.items() if _flag(parser, "--host")]
    assert len(with_host) >= 6
    for argv in with_host:
        for option in CONTEXT_FLAGS:
            assert _flag(COMMANDS[argv], option) == _flag(reference, option), (argv, option)


def test_version_is_the_package_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert _main("--version") == (0, f"dshc {version}\n", "")


def test_version_read_off_the_metadata_folder_is_importlib_metadatas(tmp_path, monkeypatch):
    """`dshc --version` skips importlib.metadata where the first dshc metadata on sys.path is one
    `dshc-VERSION.dist-info`; anywhere else (an egg-info first, none at all) it asks importlib.metadata."""
    import importlib.metadata
    import subprocess
    import sys
    from dshc.cli import package_version

    assert package_version.installed_version() == importlib.metadata.version("dshc")
    entry = subprocess.run(
        [sys.executable, "-c", "from dshc.cli.entry import entry; entry()", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (entry.returncode, entry.stdout) == (0, f"dshc {importlib.metadata.version('dshc')}\n")
    asked = []
    monkeypatch.setattr(package_version, "_from_metadata", lambda: asked.append(1) or "from-metadata")
    (tmp_path / "dshc-9.8.7.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path)])
    assert package_version.installed_version() == "9.8.7" and not asked
    (tmp_path / "dshc.egg-info").mkdir()
    assert package_version.installed_version() == "from-metadata"
    monkeypatch.setattr(sys, "path", [])
    assert package_version.installed_version() == "from-metadata" and len(asked) == 2
