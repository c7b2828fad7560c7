"""The interop commands of `dshc`: `hook`, `import`, `export` and `compile --format/--strict`.

In: parsed arguments (parsers are added by `add_parsers`). Out: text on stdout, notes on stderr,
the CLI's exit codes. Heavy modules are imported inside the commands.
"""
from __future__ import annotations

import argparse
import json
import os

AGENT_FORMATS = ("openai", "anthropic", "gemini", "mcp")


def add_compile_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=AGENT_FORMATS, help="print the wire tools as that API's request takes them")
    p.add_argument("--strict", action="store_true", help="OpenAI strict mode: close every schema (with --format openai)")


def add_parsers(sub, context_flags, load_flags) -> None:
    p = sub.add_parser("hook", help="agent hook: decide a tool call from the agent's hook JSON on stdin",
                       description="dshc hook claude-code|gemini [PRESET] [--config .dshc] [--load PATH]… [--preset P] [--host H] "
                       "[--platform P] [--scope S] [--policy P] [--log EVENTS.jsonl] [--workspace DIR]")
    p.add_argument("hook_args", nargs=argparse.REMAINDER, metavar="claude-code|gemini …")

    p = sub.add_parser("import", help="translate an agent's permission settings into a .dsh policy")
    p.add_argument("agent", choices=["claude-code", "codex"])
    p.add_argument("source", metavar="SETTINGS", help="Claude Code settings.json, or Codex config.toml")
    p.add_argument("rules", nargs="*", metavar="RULES", help="Codex execpolicy files with prefix_rule(...) calls")
    p.add_argument("--name", help="policy name (default: the agent's name)")
    p.add_argument("--root", metavar="DIR", help="the project folder (default: the folder holding .claude/); its "
                   "`/x` and `./x` rules are written relative to the workspace the policy decides for")
    p.add_argument("-o", "--output", metavar="FILE.dsh", help="write the policy here instead of stdout")

    p = sub.add_parser("export", help="write a policy as an agent's settings, or the code-mode SDK as TypeScript")
    p.add_argument("target", choices=["claude-code", "typescript"])
    context_flags(p)
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


def _emit(text: str, output: str | None, out) -> None:
    if output:
        from .output_file import replace_file
        replace_file(output, text, "the export")
    else:
        out.write(text)


def _usage(message: str):
    from ..compiler.diagnostics import Diagnostic, DshError
    return DshError([Diagnostic("DSH405", message)])


def cmd_hook(args, out, err) -> int:
    # normally reached only as `dshc --debug hook …`: `dshc hook …` goes to the hook before argparse
    from .hook import main
    return main(args.hook_args, None, out, err)


def cmd_import(args, out, err) -> int:
    from ..compiler.diagnostics import Diagnostic, DshError
    from ..compiler.program import Program
    try:
        with open(args.source, encoding="utf-8") as handle:
            text = handle.read()
        rules = {}
        for path in args.rules:
            with open(path, encoding="utf-8") as handle:
                rules[path] = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise DshError([Diagnostic("DSH107", f"cannot read an input file: {exc}", path=args.source)])
    name = args.name or args.agent
    try:
        if args.agent == "claude-code":
            if args.rules:
                raise _usage("RULES files are Codex execpolicy files; `import claude-code` takes one settings file")
            from ..compiler.interop.claude_settings import import_settings
            try:
                settings = json.loads(text)
            except ValueError as exc:
                raise ValueError(f"{args.source} is not JSON: {exc}") from None
            result = import_settings(settings, os.path.abspath(args.source), args.root, name=name)
        else:
            from ..compiler.interop.codex_config import import_codex
            result = import_codex(text, os.path.abspath(args.source), rules, name=name)
    except ValueError as exc:
        raise DshError([Diagnostic("DSH405", str(exc), path=args.source)])
    # the output must load as it stands: a translation bug shows here, not in the user's next command
    Program.load(texts={args.output or "<import>": result.text})
    _emit(result.text, args.output, out)
    for note in result.notes:
        err.write(f"dshc import: not expressed exactly: {note}\n")
    return 0


def cmd_export(args, out, err) -> int:
    from .commands import _program, _request
    program = _program(args)
    request = _request(args)
    if args.target == "typescript":
        from ..compiler.interop.typescript import declaration
        try:
            text = declaration(program.view(request))
        except ValueError as exc:
            raise _usage(str(exc))
        _emit(text, args.output, out)
        return 0
    from ..compiler.interop.claude_export import export_policy
    policy = program.composition(request).policy
    if policy is None:
        raise _usage("no policy applies to this request; pass --policy")
    settings, notes = export_policy(policy)
    _emit(json.dumps(settings, indent=2, ensure_ascii=False) + "\n", args.output, out)
    for note in notes:
        err.write(f"dshc export: not exported: {note}\n")
    return 0


def compile_format(args, view, out, err) -> int:
    from ..compiler.interop.exports import export
    if args.strict and args.format != "openai":
        raise _usage("--strict is OpenAI's strict mode: use it with --format openai")
    data, notes = export(view, args.format, args.strict)
    out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    for note in notes:
        err.write(f"dshc compile: {note}\n")
    return 0
