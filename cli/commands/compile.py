"""`dshc compile`: the tool view one model request receives, as a table, canonical JSON, or an API's
request format (`--format openai|anthropic|gemini|mcp`)."""

from __future__ import annotations

from ..flags import context_flags

AGENT_FORMATS = ("openai", "anthropic", "gemini", "mcp")


def add_parser(sub) -> None:
    p = sub.add_parser("compile", help="compile the tool view one model request receives")
    context_flags(p)
    p.add_argument("--format", choices=AGENT_FORMATS, help="print the wire tools as that API's request takes them")
    p.add_argument(
        "--strict", action="store_true", help="OpenAI strict mode: close every schema (with --format openai)"
    )


def run(args, out, err) -> int:
    from ..command_context import program_of, request_of

    view = program_of(args).view(request_of(args))
    if getattr(args, "format", None):
        return _in_format(args, view, out, err)
    if args.json:
        out.write(view.canonical_json().decode("utf-8") + "\n")
        return 0
    out.write(
        f"preset {view.preset or '-'} · host {view.host} · {view.platform} · scope {view.scope} · "
        f"mode {view.mode} · policy {view.policy or '-'}\n"
    )
    out.write(f"fingerprint {view.fingerprint}\n\n")
    _table(out, view.tools)
    if view.sdk is not None:
        out.write("\nsdk (behind run_code):\n")
        _table(out, view.sdk)
    out.write(
        f"\n{len(view.tools)} on the wire" + (f", {len(view.sdk)} in the sdk" if view.sdk is not None else "") + "\n"
    )
    return 0


def _table(out, entries) -> None:
    out.write(f"  {'tool':<22} {'execution':<10} {'policy':<12} {'ready':<12} definition\n")
    for e in entries:
        out.write(f"  {e.name:<22} {e.execution:<10} {e.policy:<12} {e.ready:<12} {e.definition}\n")


def _in_format(args, view, out, err) -> int:
    from ...compiler.interop.exports import export
    from ..command_context import usage_error

    if args.strict and args.format != "openai":
        raise usage_error("--strict is OpenAI's strict mode: use it with --format openai")
    import json  # only for --format: `dshc --help` builds this parser

    data, notes = export(view, args.format, args.strict)
    out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    for note in notes:
        err.write(f"dshc compile: {note}\n")
    return 0
