"""The `dshc` command: argparse over the library verbs; no logic of its own.

main(argv, stdout, stderr) -> exit code: 0 positive answer, 1 negative answer, 2 unusable
input (with diagnostics), 3 internal error (a bug; `--debug` shows the traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence

from ..compiler.diagnostics import invalid_request
from .help_format import HelpFormatter
from .outcome import EXIT_INPUT, EXIT_INTERNAL, EXIT_NEGATIVE, EXIT_OK, answer, report  # noqa: F401 - re-exported
from .preset_argument import one_preset

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import TextIO


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, formatter_class=HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)

    def error(self, message):  # argparse would print and exit; we report like any bad input
        raise _UsageError(message)


def parse_arguments(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """argv → Namespace, with a command's positionals allowed anywhere among its options.

    argparse's intermixed parsing refuses subparsers, so the top level (`--debug`, `--help`,
    `--version`) is parsed first and the command's own arguments by its parser, intermixed.
    """
    argv = list(argv)
    index = next((i for i, arg in enumerate(argv) if not arg.startswith("-")), None)
    commands_action = _commands(parser)
    command = commands_action.choices.get(argv[index]) if index is not None and commands_action else None
    if (
        index is None
        or command is None
        or any(a.nargs in (argparse.REMAINDER, argparse.PARSER) for a in command._actions)
    ):
        return one_preset(parser.parse_args(argv))  # no command, an unknown one (argparse names the choices), or `hook`
    namespace = parser.parse_args(argv[:index])
    namespace.command = argv[index]
    return one_preset(command.parse_intermixed_args(argv[index + 1 :], namespace))


def _commands(parser: argparse.ArgumentParser):
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


# a row per line, so the table reads as one (and stays so under a formatter)
# fmt: off
def _table():
    """The command table, in the order `dshc --help` lists them. One row per command: a function named
    after it (a trailing `_` where the name is a keyword) returning its module (`commands/`), which exports
    `add_parser(sub)` and `run(args, out, err)`. The import runs when the row is called, so a process loads
    only the command it runs, and it is a plain import the import graph sees (`tests/test_import_cycles.py`).
    The rows are a function's locals, not a class's, so a type checker reads them as plain functions."""

    def catalog(): from .commands import catalog; return catalog
    def compile(): from .commands import compile; return compile
    def explain(): from .commands import explain; return explain
    def decide(): from .commands import decide; return decide
    def check(): from .commands import check; return check
    def fmt(): from .commands import fmt; return fmt
    def diff(): from .commands import diff; return diff
    def graph(): from .commands import graph; return graph
    def verify(): from .commands import verify; return verify
    def run(): from .commands import run; return run
    def replay(): from .commands import replay; return replay
    def serve(): from .commands import serve; return serve
    def codes(): from .commands import codes; return codes
    def ls(): from .commands import ls; return ls
    def audit(): from .commands import audit; return audit
    def build(): from .commands import build; return build
    def test(): from .commands import test; return test
    def upstream(): from .commands import upstream; return upstream
    def hook(): from .commands import hook; return hook
    def import_(): from .commands import import_; return import_
    def export(): from .commands import export; return export
    def lsp(): from .commands import lsp; return lsp
    def suggest(): from .commands import suggest; return suggest
    def init(): from .commands import init; return init
    def ui(): from .commands import ui; return ui
    return locals()

# fmt: on


COMMANDS = {name.rstrip("_"): row for name, row in _table().items()}


def parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for argv: a process runs one command, so only its module loads and only its arguments
    are built; no command or an unknown one gets the whole parser, for its help and its choices."""
    name = next((arg for arg in argv if not arg.startswith("-")), None)
    return build_parser(only=name if name in COMMANDS else None)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dshc", description="Compile agent tool surfaces: which tools a model sees, and whether a call may run."
    )
    parser.add_argument("--debug", action="store_true", help="show a traceback on internal errors")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module in COMMANDS.items():
        if only in (None, name):
            module().add_parser(sub)
    return parser


class _Version(argparse.Action):
    """--version, read from the package's metadata folder only when asked (`package_version`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser._print_message(f"dshc {_version()}\n", sys.stdout)  # where argparse's own version action prints
        parser.exit()


def _version() -> str:
    from .package_version import installed_version

    return installed_version()


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    if argv[:1] == ["hook"]:
        # an agent hook must always answer: its own entry point turns every problem into a deny
        from .hook import main as hook_main

        return hook_main(argv[1:], None, stdout, stderr)
    wants_json = "--json" in argv

    def parsed_then_run() -> int:
        try:
            with contextlib.redirect_stdout(stdout):  # argparse prints help and --version to sys.stdout
                args = parse_arguments(parser_for(argv), argv)
        except _UsageError as exc:
            command = next((a for a in argv if not a.startswith("-")), None)
            where = f"dshc {command} --help" if command in COMMANDS else "dshc --help"
            return report([invalid_request(str(exc), f"`{where}` lists the arguments")], wants_json, stdout, stderr)
        except SystemExit as exc:  # --help and --version exit through argparse
            return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_INPUT
        try:
            return _run(args, stdout, stderr)
        except ModuleNotFoundError as exc:  # a module of an optional extra: say which extra to install
            from .extras import translated

            raise translated(exc, args.command) from None

    return answer(parsed_then_run, wants_json, debug, stdout, stderr)


def _run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    if args.command is None:
        build_parser().print_help(stdout)
        return EXIT_INPUT
    return COMMANDS[args.command]().run(args, stdout, stderr)


def entry() -> None:
    sys.exit(main())
