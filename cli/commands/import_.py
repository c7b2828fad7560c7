"""`dshc import AGENT SETTINGS`: translate an agent's permission settings into a `.dsh` policy (notes on
stderr for what has no exact form)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("import", help="translate an agent's permission settings into a .dsh policy")
    p.add_argument("agent", choices=["claude-code", "codex", "gemini"])
    p.add_argument(
        "source", metavar="SETTINGS", help="Claude Code settings.json, Codex config.toml, or a Gemini CLI policy .toml"
    )
    p.add_argument(
        "rules",
        nargs="*",
        metavar="MORE",
        help="Codex: execpolicy files with prefix_rule(...) calls; Claude Code: more settings files, each "
        "outranking the ones before it (user, project, local, managed); Gemini CLI: more policy files of "
        "the same tier",
    )
    p.add_argument(
        "--hierarchy",
        action="store_true",
        help="Claude Code: also read the user's, the project's local and the managed settings files, in "
        "Claude Code's precedence",
    )
    p.add_argument("--name", help="policy name (default: the agent's name)")
    p.add_argument(
        "--root",
        metavar="DIR",
        help="the project folder (default: the folder holding .claude/); its "
        "`/x` and `./x` rules are written relative to the workspace the policy decides for",
    )
    p.add_argument("-o", "--output", metavar="FILE.dsh", help="write the policy here instead of stdout")


def run(args, out, err) -> int:
    import os
    from ...compiler.diagnostics import Diagnostic, DshError
    from ...compiler.program import Program
    from ..command_context import usage_error
    from ..output_file import write_output

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
                raise usage_error("--hierarchy reads Claude Code settings files; give Gemini CLI's policy files")
            from ...compiler.interop.gemini_import import import_gemini

            result = import_gemini(
                {os.path.abspath(args.source): text, **{os.path.abspath(p): body for p, body in rules.items()}},
                name=name,
            )
        else:
            if args.hierarchy:
                raise usage_error("--hierarchy reads Claude Code settings files; Codex has one config.toml")
            from ...compiler.interop.codex_config import import_codex

            result = import_codex(text, os.path.abspath(args.source), rules, name=name)
    except ValueError as exc:
        raise DshError([Diagnostic("DSH405", str(exc), path=args.source)])
    # the output must load as it stands: a translation bug shows here, not in the user's next command
    Program.load(texts={args.output or "<import>": result.text})
    write_output(result.text, args.output, out)
    for note in result.notes:
        err.write(f"dshc import: not expressed exactly: {note}\n")
    return 0


def _import_claude(args, text: str, more: dict[str, str], name: str):
    """The settings file, and the others given or found (`--hierarchy`), lowest precedence first."""
    import json
    import os
    import sys
    from ...compiler.interop.claude_settings import hierarchy, import_hierarchy
    from ..agent_settings import read_input

    source = os.path.abspath(args.source)
    texts = {source: text, **{os.path.abspath(path): body for path, body in more.items()}}
    paths = list(texts)
    if args.hierarchy:
        found = hierarchy(source, os.path.expanduser("~"), sys.platform)
        paths = [*found, *(path for path in paths if path not in found)]
    layers = []
    for path in paths:
        try:
            body = texts[path] if path in texts else read_input(path)
            layers.append((path, json.loads(body)))
        except ValueError as exc:
            raise ValueError(f"{path} is not JSON: {exc}") from None
    return import_hierarchy(layers, args.root, name=name)
