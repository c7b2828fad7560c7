"""`dshc check`: parse, resolve and lint declaration files (exit 1 on findings)."""

from __future__ import annotations

from ..flags import load_flags


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="parse, resolve and lint declaration files")
    p.add_argument("paths", nargs="*", metavar="PATH")
    load_flags(p)


def run(args, out, err) -> int:
    from ...compiler.checks import run_checks
    from ...compiler.program import read_paths, shipped_sources
    from ...compiler.render import diagnostics_json, human
    from ..command_context import catalog_of, from_files, write_json

    files = read_paths(list(args.paths) + list(args.load))
    program = from_files((shipped_sources() if not args.no_shipped else []) + files, catalog_of(args))
    # with paths, report what those files say; without, the shipped declarations themselves
    only = {f.path for f in files} if files else None
    findings = [d for d in program.warnings if only is None or d.where in only]
    findings += list(run_checks(program, only))
    if args.json:
        write_json(out, {"diagnostics": diagnostics_json(findings)})
    elif findings:
        out.write(human(findings, limit=50, sources=program.sources) + "\n")
    else:
        out.write("no findings\n")
    return 1 if findings else 0
