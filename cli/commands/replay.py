"""`dshc replay EVENTS.jsonl --policy P`: re-decide every logged call under another policy (exit 1 on a change)."""

from __future__ import annotations

from ..flags import load_flags


def add_parser(sub) -> None:
    p = sub.add_parser("replay", help="re-decide every logged call under another policy")
    p.add_argument("log", metavar="EVENTS.jsonl|DSN", help="a JSONL event log or a postgresql:// DSN")
    p.add_argument("--policy", required=True)
    load_flags(p)


def run(args, out, err) -> int:
    from ...compiler.diagnostics import DshError, unknown
    from ..command_context import line_diagnostics, program_of, write_json
    from ..log_target import read_log_target
    from ..replay import replay

    log = read_log_target(args.log)
    program = program_of(args)
    if args.policy not in program.resolved.policies:
        raise DshError([unknown("DSH207", "policy", args.policy, program.resolved.policies, None)])
    report = replay(program, log, args.policy)
    if report.problems:
        raise DshError(line_diagnostics(args.log, report.problems))
    if args.json:
        write_json(
            out,
            {"policy": args.policy, "calls": report.calls, "changes": list(report.changes), "torn_tail": log.torn_tail},
        )
    else:
        for change in report.changes:
            out.write(
                f"[{change['callId']}] {change['name']}: {change['before']} → {change['after']} ({change['reason']})\n"
            )
        out.write(f"{len(report.changes)} change(s) over {report.calls} call(s) under policy `{args.policy}`\n")
    return 1 if report.changes else 0
