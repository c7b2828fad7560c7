"""`dshc decide TOOL --args JSON …`: one call's decision, and the sandbox it would run in.

A script or an agent's hook runs it once per call, so its process stays lean: its command line,
when written plainly (`fast_arguments`), is read here into the Namespace argparse would make,
without loading argparse (and the gettext, locale and `re` it imports: ~35M instructions, a fifth
of the process) or the other commands' modules; anything else — help, an error to report, a
`--flag=value` form, an abbreviation — goes to the full command line. The test suite holds the two
readings to the same Namespace.
"""

from __future__ import annotations

import os

from ..common import json_io
from ..compiler.diagnostics import DshError, invalid_request
from ..compiler.facts import MODES, PLATFORMS
from ..compiler.policy import MAX_DEPTH, shape_problem
from ..compiler.resolve import RESERVED_TOOL
from .command_context import program_of, request_of, write_json

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from argparse import Namespace
    from typing import TextIO

ARGS_HELP = 'a JSON object of the call\'s arguments, e.g. --args \'{"command": "ls"}\''


def cmd_decide(args: Namespace, out: TextIO, err: TextIO) -> int:
    call_args = call_arguments(args.args)
    program = program_of(args)
    request = request_of(args, code_worker_matters=args.tool == RESERVED_TOOL)
    program.require_tool(request, args.tool)
    from .call_decision import decide_call, invalid_text

    decided = decide_call(program, request, args.tool, call_args, args.workspace or os.getcwd())
    if decided.invalid is not None:  # not a call the runtime would run: the input cannot be used
        found = decided.invalid
        raise DshError(
            [invalid_request(f"--args: {invalid_text(args.tool, found, hint=False)}", found.hint or ARGS_HELP)]
        )
    from .host import describe_sandbox, sandbox_text

    sandbox = describe_sandbox(program, request, args.tool, call_args)
    if args.json:
        rules = decided.rules()
        write_json(out, {"tool": args.tool, **decided.to_json(), "rules": rules, "sandbox": sandbox})
    else:
        out.write(f"{decided.effect}: {decided.reason}\n")
        for rule in decided.rules():
            out.write(f"  decided by {rule['rule']}" + (f" at {rule['source']}" if rule["source"] else "") + "\n")
        if decided.policy is not None and decided.policy_effect != decided.effect:
            out.write(f"  the policy alone: {decided.policy_effect}: {decided.policy.reason}\n")
        out.write(sandbox_text(sandbox))
    return 0 if decided.effect == "allow" else 1


def call_arguments(text: str) -> dict:
    """--args text → the call's arguments, refused (exit 2) when not a JSON object within the nesting limits."""
    try:
        value = json_io.loads(text)
    except RecursionError:
        raise DshError([invalid_request(f"--args nests deeper than {MAX_DEPTH} levels", ARGS_HELP)])
    except ValueError as exc:  # json's JSONDecodeError: its message and column
        raise DshError(
            [
                invalid_request(
                    f"--args is not valid JSON: {getattr(exc, 'msg', str(exc)).lower()} "
                    f"at column {getattr(exc, 'colno', 1)}",
                    ARGS_HELP,
                )
            ]
        )
    if not isinstance(value, dict):
        raise DshError([invalid_request("--args must be a JSON object", ARGS_HELP)])
    problem = shape_problem(value, text=True)
    if problem is not None:
        raise DshError([invalid_request(f"--args: {problem}", ARGS_HELP)])
    return value


# decide's flags as the full command line declares them (cli/commands/decide.py, cli/flags.py)
_VALUES = {
    "--args": "args",
    "--workspace": "workspace",
    "--host": "host",
    "--platform": "platform",
    "--scope": "scope",
    "--mode": "mode",
    "--policy": "policy",
    "--preset": "preset_option",
}
_REPEATED = {
    "--with": "with_services",
    "--without": "without_services",
    "--flag": "flags",
    "--load": "load",
    "--catalog": "catalog",
}
_SWITCHES = {"--plan": "plan", "--no-shipped": "no_shipped", "--json": "json"}
_CHOICES = {"platform": PLATFORMS, "mode": MODES}


def fast_arguments(argv: list[str]):
    """decide's arguments (after `decide`) as argparse reads them, or None when they are not written
    plainly: `TOOL [PRESET]` and exact long flags each with its value as the next word, in any order
    (`--preset P` among them, the other spelling of PRESET)."""
    from types import SimpleNamespace

    mode = os.environ.get("DSH_TOOLS_MODE") or None
    if mode is not None and mode not in MODES:
        return None  # argparse reports the bad default
    values: dict = {
        "command": "decide",
        "debug": False,
        "version": None,
        "tool": None,
        "preset": None,
        "args": "{}",
        "workspace": None,
        "host": "web",
        "platform": "linux",
        "scope": "root",
        "mode": mode,
        "policy": None,
        "preset_option": None,
        **{name: [] for name in _REPEATED.values()},
        **{name: False for name in _SWITCHES.values()},
    }
    index = 0
    positional: list[str] = []
    while index < len(argv):
        word = argv[index]
        if not word.startswith("-"):  # TOOL, then PRESET, anywhere among the flags (argparse intermixes them)
            if len(positional) == 2:
                return None  # argparse reports the extra word
            positional.append(word)
            index += 1
            continue
        if word in _SWITCHES:
            values[_SWITCHES[word]] = True
            index += 1
            continue
        name = _VALUES.get(word) or _REPEATED.get(word)
        if name is None or index + 1 >= len(argv) or argv[index + 1].startswith("-"):
            return None  # not a flag of decide, a value missing, or one argparse may read as a flag
        value = argv[index + 1]
        if value not in _CHOICES.get(name, (value,)):
            return None
        if word in _REPEATED:
            values[name].append(value)
        else:
            values[name] = value
        index += 2
    if not positional:
        return None
    values["tool"] = positional[0]
    values["preset"] = positional[1] if len(positional) > 1 else None
    option = values.pop("preset_option")
    if option is not None:
        if values["preset"] not in (None, option):
            return None  # two presets: the full command line reports it
        values["preset"] = option
    return SimpleNamespace(**values)
