"""The interop commands of `dshc`: `hook`, `import`, `export` and `compile --format/--strict`.

In: parsed arguments (parsers are added by `add_parsers`). Out: text on stdout, notes on stderr,
the CLI's exit codes. Heavy modules are imported inside the commands.
"""
from __future__ import annotations

import argparse
import json
import os
import re

AGENT_FORMATS = ("openai", "anthropic", "gemini", "mcp")


def add_compile_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=AGENT_FORMATS, help="print the wire tools as that API's request takes them")
    p.add_argument("--strict", action="store_true", help="OpenAI strict mode: close every schema (with --format openai)")


def add_parsers(sub, context_flags, load_flags) -> None:
    p = sub.add_parser("hook", help="agent hook: decide a tool call from the agent's hook JSON on stdin",
                       description="dshc hook claude-code|gemini|codex|cursor [PRESET] [--config .dshc] [--load PATH]… [--preset P] [--host H] "
                       "[--platform P] [--scope S] [--policy P] [--log EVENTS.jsonl] [--workspace DIR]")
    p.add_argument("hook_args", nargs=argparse.REMAINDER, metavar="claude-code|gemini|codex|cursor …")

    p = sub.add_parser("import", help="translate an agent's permission settings into a .dsh policy")
    p.add_argument("agent", choices=["claude-code", "codex", "gemini"])
    p.add_argument("source", metavar="SETTINGS", help="Claude Code settings.json, Codex config.toml, or a Gemini CLI "
                   "policy .toml")
    p.add_argument("rules", nargs="*", metavar="MORE",
                   help="Codex: execpolicy files with prefix_rule(...) calls; Claude Code: more settings files, each "
                   "outranking the ones before it (user, project, local, managed); Gemini CLI: more policy files of "
                   "the same tier")
    p.add_argument("--hierarchy", action="store_true",
                   help="Claude Code: also read the user's, the project's local and the managed settings files, in "
                   "Claude Code's precedence")
    p.add_argument("--name", help="policy name (default: the agent's name)")
    p.add_argument("--root", metavar="DIR", help="the project folder (default: the folder holding .claude/); its "
                   "`/x` and `./x` rules are written relative to the workspace the policy decides for")
    p.add_argument("-o", "--output", metavar="FILE.dsh", help="write the policy here instead of stdout")

    p = sub.add_parser("export", help="write a policy as an agent's settings, or the code-mode SDK as TypeScript")
    p.add_argument("target", choices=["claude-code", "codex", "gemini", "typescript"])
    context_flags(p)
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout (codex: the .rules file)")
    p.add_argument("--toml", metavar="FILE", help="codex: write the config.toml lines here (else they close the "
                   "rules as comments)")


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
            result = _import_claude(args, text, rules, name)
        elif args.agent == "gemini":
            if args.hierarchy:
                raise _usage("--hierarchy reads Claude Code settings files; give Gemini CLI's policy files")
            from ..compiler.interop.gemini_import import import_gemini
            result = import_gemini({os.path.abspath(args.source): text,
                                    **{os.path.abspath(p): body for p, body in rules.items()}}, name=name)
        else:
            if args.hierarchy:
                raise _usage("--hierarchy reads Claude Code settings files; Codex has one config.toml")
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


def _import_claude(args, text: str, more: dict[str, str], name: str):
    """The settings file, and the others given or found (`--hierarchy`), lowest precedence first."""
    import sys
    from ..compiler.interop.claude_settings import hierarchy, import_hierarchy
    source = os.path.abspath(args.source)
    texts = {source: text, **{os.path.abspath(path): body for path, body in more.items()}}
    paths = list(texts)
    if args.hierarchy:
        found = hierarchy(source, os.path.expanduser("~"), sys.platform)
        paths = [*found, *(path for path in paths if path not in found)]
    layers = []
    for path in paths:
        try:
            body = texts[path] if path in texts else _read(path)
            layers.append((path, json.loads(body)))
        except ValueError as exc:
            raise ValueError(f"{path} is not JSON: {exc}") from None
    return import_hierarchy(layers, args.root, name=name)


def _read(path: str) -> str:
    from ..compiler.diagnostics import Diagnostic, DshError
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise DshError([Diagnostic("DSH107", f"cannot read an input file: {exc}", path=path)])


def agent_source(spec: str):
    """An agent's permission settings as one side of `dshc diff`: Claude Code's `settings*.json` or
    `managed-settings.json`, a Gemini CLI policy `*.toml` (`[[rule]]` tables), Codex's other `*.toml`,
    imported to a `.dsh` source; None for anything else."""
    name = os.path.basename(spec)
    if not os.path.isfile(spec):
        return None
    if name.endswith(".json") and (name.startswith("settings") or name == "managed-settings.json"):
        agent = "claude-code"
    elif name.endswith(".toml"):
        agent = "codex"
    else:
        return None
    text = _read(spec)
    if agent == "codex" and re.search(r"(?m)^\s*\[\[\s*rule\s*\]\]", text):
        agent = "gemini"
    from ..compiler.diagnostics import Diagnostic, DshError
    from ..compiler.program import SourceFile
    try:
        if agent == "claude-code":
            from ..compiler.interop.claude_settings import import_settings
            try:
                settings = json.loads(text)
            except ValueError as exc:
                raise ValueError(f"{spec} is not JSON: {exc}") from None
            policy = import_settings(settings, os.path.abspath(spec)).text
        elif agent == "gemini":
            from ..compiler.interop.gemini_import import import_gemini
            policy = import_gemini({os.path.abspath(spec): text}).text
        else:
            from ..compiler.interop.codex_config import import_codex
            policy = import_codex(text, os.path.abspath(spec)).text
    except ValueError as exc:
        raise DshError([Diagnostic("DSH405", str(exc), path=spec)])
    return SourceFile(f"{spec} ({agent} import)", policy.encode("utf-8"))


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
    policy = program.composition(request).policy
    if policy is None:
        raise _usage("no policy applies to this request; pass --policy")
    if args.target == "codex":
        return _export_codex(args, policy, out, err)
    if args.target == "gemini":
        return _export_gemini(args, policy, out, err)
    if args.toml:
        raise _usage("--toml writes Codex's config.toml lines: use it with `export codex`")
    from ..compiler.interop.claude_export import export_policy
    settings, notes = export_policy(policy)
    _emit(json.dumps(settings, indent=2, ensure_ascii=False) + "\n", args.output, out)
    for note in notes:
        err.write(f"dshc export: not exported: {note}\n")
    return 0


def _export_codex(args, policy, out, err) -> int:
    """The rules on stdout (or -o), the config lines in --toml or as closing comments, the notes on stderr
    (`--json`: all three, and whether some deny or ask has no Codex form at least as strict)."""
    from ..compiler.interop.codex_export import export_codex
    result = export_codex(policy)
    rules = result.rules
    if args.toml:
        _emit(result.config, args.toml, out)
    elif not args.json:
        rules += "\n" + "".join(line + "\n" if line.startswith("#") else f"# {line}\n" if line else "#\n"
                                 for line in result.config.splitlines())
    if args.json:
        data = {"rules": result.rules, "config": result.config, "weaker": result.weaker, "notes": _notes(result)}
        if args.output:
            _emit(result.rules, args.output, out)
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        _emit(rules, args.output, out)
        for note in result.notes:
            err.write(f"dshc export: {note.text()}\n")
    return 0


def _export_gemini(args, policy, out, err) -> int:
    """The policy TOML on stdout (or -o), the notes on stderr (`--json`: both, and whether some deny or ask
    has no Gemini CLI form at least as strict)."""
    from ..compiler.interop.gemini_export import export_gemini
    if args.toml:
        raise _usage("--toml writes Codex's config.toml lines: use it with `export codex`")
    result = export_gemini(policy)
    if args.json:
        if args.output:
            _emit(result.text, args.output, out)
        out.write(json.dumps({"policy": result.text, "weaker": result.weaker, "notes": _notes(result)},
                             indent=2, ensure_ascii=False) + "\n")
        return 0
    _emit(result.text, args.output, out)
    for note in result.notes:
        err.write(f"dshc export: {note.text()}\n")
    return 0


def _notes(result) -> list[dict]:
    return [{"where": n.where, "kind": n.kind, "message": n.message} for n in result.notes]


def compile_format(args, view, out, err) -> int:
    from ..compiler.interop.exports import export
    if args.strict and args.format != "openai":
        raise _usage("--strict is OpenAI's strict mode: use it with --format openai")
    data, notes = export(view, args.format, args.strict)
    out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    for note in notes:
        err.write(f"dshc compile: {note}\n")
    return 0
