"""The `dshc` command: argparse over the library verbs; no logic of its own.

main(argv, stdout, stderr) -> exit code: 0 positive answer, 1 negative answer, 2 unusable
input (with diagnostics), 3 internal error (a bug; `--debug` shows the traceback).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Sequence

from . import commands
from .help_format import HelpFormatter
from ..compiler.diagnostics import invalid_request
from ..compiler.facts import MODES
from . import interop_commands as interop
from .preset_argument import add_preset, one_preset
from .outcome import EXIT_INPUT, EXIT_INTERNAL, EXIT_NEGATIVE, EXIT_OK, answer, report  # noqa: F401 - re-exported

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
    if command is None or any(a.nargs in (argparse.REMAINDER, argparse.PARSER) for a in command._actions):
        return one_preset(parser.parse_args(argv))  # no command, an unknown one (argparse names the choices), or `hook`
    namespace = parser.parse_args(argv[:index])
    namespace.command = argv[index]
    return one_preset(command.parse_intermixed_args(argv[index + 1:], namespace))


def _commands(parser: argparse.ArgumentParser):
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _context_flags(p: argparse.ArgumentParser) -> None:
    add_preset(p)
    p.add_argument("--host", default="web", help="host profile (default: web)")
    p.add_argument("--platform", default="linux", choices=["linux", "darwin", "win32"])
    p.add_argument("--with", dest="with_services", action="append", default=[], metavar="SVC",
                   help="add a service to the host (repeatable)")
    p.add_argument("--without", dest="without_services", action="append", default=[], metavar="SVC",
                   help="remove a host service (repeatable)")
    p.add_argument("--flag", dest="flags", action="append", default=[], metavar="NAME", help="turn a feature flag on")
    p.add_argument("--scope", default="root", help="agent scope (default: root)")
    p.add_argument("--mode", choices=MODES, type=_mode, default=os.environ.get("DSH_TOOLS_MODE") or None,
                   help="presentation mode override (default: $DSH_TOOLS_MODE, else the preset's or host's)")
    p.add_argument("--policy", help="approval policy (default: the host's)")
    p.add_argument("--plan", action="store_true", help="the request is in plan mode")
    _load_flags(p)


def _mode(value: str) -> str:
    # argparse checks `choices` on the command line only; the DSH_TOOLS_MODE default is checked here
    if value not in MODES:
        raise argparse.ArgumentTypeError(f"mode must be one of {', '.join(MODES)}, not `{value}` "
                                         "(from --mode or DSH_TOOLS_MODE)")
    return value


def _load_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--load", action="append", default=[], metavar="PATH", help="also load declarations from PATH")
    p.add_argument("--no-shipped", action="store_true", help="do not load the shipped presets and policies")
    p.add_argument("--catalog", metavar="DIR", action="append", default=[],
                   help="add the packages and services of the catalog in DIR to the shipped one (repeatable)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


class _Unbuilt:
    """Stands for the parser of a command this process does not run: every call is a no-op."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: self


# a command whose module defines its arguments (`commands.MODULES`) -> the shared flag adders it takes
_FLAGS_OF = {"ls": (_load_flags,), "audit": (_load_flags,), "build": (_load_flags,), "test": (_load_flags,),
             "lsp": (), "suggest": (_context_flags, _load_flags), "upstream": (), "init": ()}


def _add_parsers_elsewhere(sub, only: str | None, names) -> None:
    """The arguments of commands defined in their own modules, which load for that command (or the
    whole help) only."""
    for name in names:
        if only in (None, name):
            importlib.import_module(commands.MODULES[name], __package__).add_parser(sub, *_FLAGS_OF[name])


class _OneCommand:
    """The subparsers action seen through one command name: only that command's parser is built."""

    def __init__(self, sub, name: str) -> None:
        self._sub, self._name = sub, name

    def add_parser(self, name, **kwargs):
        return self._sub.add_parser(name, **kwargs) if name == self._name else _Unbuilt()


def parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for argv: a process runs one command, so only its arguments are built (a tenth of
    the work); no command or an unknown one gets the whole parser, for its help and its choices."""
    name = next((arg for arg in argv if not arg.startswith("-")), None)
    if name is not None:
        parser = build_parser(only=name)
        if name in _commands(parser).choices:
            return parser
    return build_parser()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(prog="dshc", description="Compile agent tool surfaces: which tools a model sees, "
                     "and whether a call may run.")
    parser.add_argument("--debug", action="store_true", help="show a traceback on internal errors")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    if only is not None:
        sub = _OneCommand(sub, only)

    p = sub.add_parser("catalog", help="list the packages and tools of the catalog")
    p.add_argument("--json", action="store_true")
    p.add_argument("--format", choices=["text", "markdown"], default="text")
    p.add_argument("--catalog", metavar="DIR", action="append", default=[], help="add a catalog overlay (repeatable)")

    p = sub.add_parser("compile", help="compile the tool view one model request receives")
    _context_flags(p)
    interop.add_compile_options(p)

    p = sub.add_parser("explain", help="why a tool is (not) available: the five gates, in order",
                       usage="dshc explain TOOL [PRESET] [options] | dshc explain --all [PRESET] [options]")
    p.add_argument("tool", nargs="?", metavar="TOOL", help="the tool to explain (with --all: the preset)")
    _context_flags(p)
    p.add_argument("--all", action="store_true", help="every catalog tool with its first failing gate")

    p = sub.add_parser("decide", help="decide one tool call under a policy")
    p.add_argument("tool", metavar="TOOL")
    p.add_argument("--args", default="{}", metavar="JSON", help="the call's arguments as a JSON object")
    p.add_argument("--workspace", metavar="DIR", help="workspace root for path tests (default: the current directory)")
    _context_flags(p)

    p = sub.add_parser("check", help="parse, resolve and lint declaration files")
    p.add_argument("paths", nargs="*", metavar="PATH")
    _load_flags(p)

    p = sub.add_parser("fmt", help="rewrite declaration files in the canonical layout")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: the shipped ones, with --check)")
    p.add_argument("--check", action="store_true", help="only report files that are not formatted (exit 1)")

    p = sub.add_parser("diff", help="what changed between two source trees, or two contexts of the same sources")
    p.add_argument("old", metavar="OLD", help="a file or folder of declarations, `@shipped`, or a context `key=value,…`")
    p.add_argument("new", metavar="NEW", help="the same kinds as OLD")
    p.add_argument("--fail-on-widen", action="store_true", help="exit 1 if anything became more visible or allowed")
    p.add_argument("--trust", metavar="PUBKEY", help="the key a bundle side (`.tar.gz`) must be signed by")
    _load_flags(p)

    p = sub.add_parser("graph", help="draw the composition, with the edges a gate cut marked")
    _context_flags(p)
    p.add_argument("--format", choices=["mermaid", "dot"], default="mermaid")

    p = sub.add_parser("verify", help="prove narrowing and monotonicity over the whole finite domain, or show a witness")
    p.add_argument("paths", nargs="*", metavar="PATH", help="declarations to add to the shipped ones")
    p.add_argument("--against", metavar="OLD", help="also prove nothing is wider than OLD (a path or `@shipped`)")
    p.add_argument("--policy", action="append", dest="policies", metavar="POLICY", help="only these policies")
    p.add_argument("--trust", metavar="PUBKEY", help="the key a bundle (`.tar.gz`) must be signed by")
    p.add_argument("--enforcement", action="store_true",
                   help="print which layer holds each deny for processes (the OS, dshc's file tools, a command's "
                        "text), with a witness for each gap, instead of proving narrowing")
    p.add_argument("--require", action="append", default=[], metavar="RULE",
                   help="with --enforcement: exit 1 unless the OS holds this rule (its id, `team/deny@4`; `*`: every "
                        "row) (repeatable)")
    p.add_argument("--mechanism", choices=["landlock+mounts", "landlock", "bwrap", "seatbelt", "none"],
                   help="with --enforcement: the map for a host with this sandbox mechanism (default: this host's)")
    _load_flags(p)

    p = sub.add_parser("run", help="run model tool calls through the pipeline over the compiled view")
    p.add_argument("calls", metavar="CALLS.jsonl", help='one call per line {"id","name","arguments"}, or {"batch": […]}')
    _context_flags(p)
    p.add_argument("--log", metavar="EVENTS.jsonl|DSN", help="append the durable event log here (a file, or postgresql://…)")
    p.add_argument("--approve", choices=["once", "never"], help="answer every ask (default: ask on a terminal)")
    p.add_argument("--workspace", metavar="DIR", default=".", help="workspace root (default: the current directory)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS", help="per-call timeout")
    p.add_argument("--rerun-interrupted", action="store_true",
                   help="run again the calls an earlier run recorded without a result (default: report them)")
    p.add_argument("--output-schema", metavar="FILE.json",
                   help="the JSON Schema `structured_output` results must match (workflow and ralph children)")

    p = sub.add_parser("replay", help="re-decide every logged call under another policy")
    p.add_argument("log", metavar="EVENTS.jsonl|DSN", help="a JSONL event log or a postgresql:// DSN")
    p.add_argument("--policy", required=True)
    _load_flags(p)

    p = sub.add_parser("serve", help="serve the compiled view as an MCP server (stdio, or --http HOST:PORT)")
    _context_flags(p)
    p.add_argument("--http", metavar="HOST:PORT", help="streamable HTTP on HOST:PORT instead of stdio "
                   "(an IP address or localhost; IPv6 in brackets)")
    p.add_argument("--allow-remote", action="store_true",
                   help="let --http bind a non-loopback address (needs a token: --token-file or $DSHC_TOKEN)")
    p.add_argument("--token-file", metavar="FILE", help="every HTTP request must carry `Authorization: Bearer "
                   "TOKEN`, TOKEN read from FILE (default: $DSHC_TOKEN, if set)")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST[:PORT]",
                   help="a further Host header value to answer (a proxy's name); repeatable")
    p.add_argument("--caller-context", action="store_true",
                   help="the decision API lets each request name its `policy` and `workspace` "
                        "(default: the server's own)")
    p.add_argument("--reuse-port", action="store_true",
                   help="with --http: let several `dshc serve` processes listen on one port (SO_REUSEPORT); "
                        "the kernel spreads connections among them")
    p.add_argument("--watch", action="store_true", help="recompile when the loaded files change; notify clients")
    p.add_argument("--bundle", metavar="FILE|DIR", help="serve a signed bundle (the newest in DIR); hot-swap to newer ones")
    p.add_argument("--trust", metavar="PUBKEY", help="the key --bundle must be signed by")
    p.add_argument("--output-schema", metavar="FILE.json",
                   help="the JSON Schema `structured_output` results must match, listed as its parameters "
                        "(workflow and ralph children)")
    p.add_argument("--log", metavar="EVENTS.jsonl|DSN", help="append the durable event log here (a file, or postgresql://…)")
    p.add_argument("--workspace", metavar="DIR", default=".", help="workspace root (default: the current directory)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS", help="per-call timeout")

    p = sub.add_parser("codes", help="list every diagnostic code")
    p.add_argument("--json", action="store_true")

    _add_parsers_elsewhere(sub, only, ("ls", "audit", "build", "test", "upstream"))
    interop.add_parsers(sub, _context_flags, _load_flags)
    _add_parsers_elsewhere(sub, only, ("lsp", "suggest", "init"))
    if only in (None, "ui"):  # the explorer's module loads for its own command (or the whole help) only
        from .ui.command import add_parser as add_ui_parser
        add_ui_parser(sub, _load_flags)
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
            where = f"dshc {command} --help" if command in commands.COMMANDS else "dshc --help"
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
    if args.command == "lsp":
        return importlib.import_module(commands.MODULES["lsp"], __package__).run(args, stdout, stderr)
    if args.command == "build":
        return importlib.import_module(commands.MODULES["build"], __package__).cmd_build(args, stdout, stderr)
    if args.command == "serve":
        from .serve import cmd_serve
        return cmd_serve(args, stdout, stderr)
    if args.command == "run":
        with _stop_on_signals() as stop:
            args.stop = stop
            return commands.run(args, stdout, stderr)
    if args.command == "ui":
        from .ui.command import cmd_ui
        return cmd_ui(args, stdout, stderr)
    return commands.run(args, stdout, stderr)


@contextlib.contextmanager
def _stop_on_signals():
    """SIGINT/SIGTERM ask `run` to stop (it records and cleans up) instead of raising mid-call."""
    from .run_calls import RunStop
    stop = RunStop()
    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda signum, frame: stop.request(signum))
    except ValueError:  # not the main thread: handlers can only be installed from there
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        yield stop
        return
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def entry() -> None:
    sys.exit(main())
