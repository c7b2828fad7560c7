"""`dshc export TARGET`: a policy as an agent's settings (Claude Code, Codex, Gemini CLI), or the code-mode
SDK as TypeScript; what has no exact form goes to stderr as notes."""

from __future__ import annotations


from ..flags import context_flags


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="write a policy as an agent's settings, or the code-mode SDK as TypeScript")
    p.add_argument("target", choices=["claude-code", "codex", "gemini", "typescript"])
    context_flags(p)
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout (codex: the .rules file)")
    p.add_argument(
        "--toml", metavar="FILE", help="codex: write the config.toml lines here (else they close the rules as comments)"
    )


def run(args, out, err) -> int:
    from ..command_context import program_of, request_of, usage_error
    from ..output_file import write_output

    program = program_of(args)
    request = request_of(args)
    if args.target == "typescript":
        from ...compiler.interop.typescript import declaration

        try:
            text = declaration(program.view(request))
        except ValueError as exc:
            raise usage_error(str(exc))
        write_output(text, args.output, out)
        return 0
    policy = program.composition(request).policy
    if policy is None:
        raise usage_error("no policy applies to this request; pass --policy")
    if args.target == "codex":
        return _export_codex(args, policy, out, err)
    if args.target == "gemini":
        return _export_gemini(args, policy, out, err)
    if args.toml:
        raise usage_error("--toml writes Codex's config.toml lines: use it with `export codex`")
    from ...compiler.interop.claude_export import export_policy

    settings, notes = export_policy(policy)
    write_output(_json(settings), args.output, out)
    for note in notes:
        err.write(f"dshc export: not exported: {note}\n")
    return 0


def _export_codex(args, policy, out, err) -> int:
    """The rules on stdout (or -o), the config lines in --toml or as closing comments, the notes on stderr
    (`--json`: all three, and whether some deny or ask has no Codex form at least as strict)."""
    from ...compiler.interop.codex_export import export_codex
    from ..output_file import write_output

    result = export_codex(policy)
    rules = result.rules
    if args.toml:
        write_output(result.config, args.toml, out)
    elif not args.json:
        rules += "\n" + "".join(
            line + "\n" if line.startswith("#") else f"# {line}\n" if line else "#\n"
            for line in result.config.splitlines()
        )
    if args.json:
        data = {"rules": result.rules, "config": result.config, "weaker": result.weaker, "notes": _notes(result)}
        if args.output:
            write_output(result.rules, args.output, out)
        out.write(_json(data))
    else:
        write_output(rules, args.output, out)
        for note in result.notes:
            err.write(f"dshc export: {note.text()}\n")
    return 0


def _export_gemini(args, policy, out, err) -> int:
    """The policy TOML on stdout (or -o), the notes on stderr (`--json`: both, and whether some deny or ask
    has no Gemini CLI form at least as strict)."""
    from ...compiler.interop.gemini_export import export_gemini
    from ..command_context import usage_error
    from ..output_file import write_output

    if args.toml:
        raise usage_error("--toml writes Codex's config.toml lines: use it with `export codex`")
    result = export_gemini(policy)
    if args.json:
        if args.output:
            write_output(result.text, args.output, out)
        out.write(_json({"policy": result.text, "weaker": result.weaker, "notes": _notes(result)}))
        return 0
    write_output(result.text, args.output, out)
    for note in result.notes:
        err.write(f"dshc export: {note.text()}\n")
    return 0


def _notes(result) -> list[dict]:
    return [{"where": n.where, "kind": n.kind, "message": n.message} for n in result.notes]


def _json(value) -> str:
    import json  # here: `dshc --help` builds this command's parser, and the json package is not needed for that

    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
