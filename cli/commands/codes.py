"""`dshc codes`: every diagnostic code with its severity and summary."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("codes", help="list every diagnostic code")
    p.add_argument("--json", action="store_true")


def run(args, out, err) -> int:
    from ...compiler.diagnostics import iter_codes
    from ..outcome import write_json  # not command_context: listing codes loads no program

    if args.json:
        write_json(out, [{"code": c, "severity": s, "summary": m} for c, s, m in iter_codes()])
        return 0
    for code, severity, summary in iter_codes():
        out.write(f"{code}  {severity:<7}  {summary}\n")
    return 0
