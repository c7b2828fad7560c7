"""`dshc audit LOG|DSN`: a log's records → denials by rule, tools of a preset's view never called, one session's timeline.
`dshc audit verify LOG|DSN` checks the log's hash chain instead (`audit_verify`).

In: a JSONL event log or a postgresql:// DSN (read by `log_target`), optionally a preset whose
view the calls are held against. Out: text, or the same as JSON (`--json`).
"""

from __future__ import annotations

import json
from collections import Counter

from ..compiler.diagnostics import Diagnostic, DshError, invalid_request


def denials_by_rule(records) -> dict[str, int]:
    """Each deciding rule of a `deny` decision → how many denials it took part in ("(no rule)" when none)."""
    counts: Counter = Counter()
    for record in records:
        if record.get("type") == "tool/decision" and record.get("decision") == "deny":
            rules = [d[0] for d in record.get("decidedBy") or () if isinstance(d, (list, tuple)) and d]
            for rule in rules or ["(no rule)"]:
                counts[str(rule)] += 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def tools_never_used(records, view_names) -> list[str]:
    used = {r.get("name") for r in records if r.get("type") == "tool/call"}
    return sorted(set(view_names) - used)


def timeline(records, session: str) -> list[dict]:
    rows = [r for r in records if r.get("session") == session]
    rows.sort(key=lambda r: r.get("seq") if isinstance(r.get("seq"), int) else 0)
    return [
        {
            "seq": r.get("seq"),
            "time": r.get("time"),
            "type": r.get("type"),
            "callId": r.get("callId"),
            "name": r.get("name"),
            "decision": r.get("decision"),
            "reason": r.get("reason"),
        }
        for r in rows
    ]


def cmd_audit(args, out, err) -> int:
    from .command_context import line_diagnostics as _line_diagnostics, program_of as _program

    if args.log == "verify":
        from .audit_verify import cmd_verify

        return cmd_verify(args, out, err)
    if args.target is not None or args.head:
        raise DshError(
            [
                invalid_request(
                    f"`{args.target or '--head'}` is only taken by `dshc audit verify`",
                    "dshc audit EVENTS.jsonl|DSN, or dshc audit verify EVENTS.jsonl|DSN",
                )
            ]
        )
    from .log_target import read_log_target  # the log readers load for `dshc audit` alone

    log = read_log_target(args.log)
    if log.problems:  # as replay: figures over a log with unreadable records would undercount silently
        raise DshError(_line_diagnostics(args.log, log.problems))
    records = log.records
    report: dict = {
        "records": len(records),
        "sessions": len({r.get("session") for r in records}),
        "denials_by_rule": denials_by_rule(records),
        "torn_tail": log.torn_tail,
    }
    if args.preset:
        from ..compiler.request import Request

        view = _program(args).view(Request(preset=args.preset))
        report["preset"] = args.preset
        report["never_used"] = tools_never_used(records, view.names)
    if args.session:
        report["session"] = args.session
        report["timeline"] = timeline(records, args.session)
        if not report["timeline"]:
            raise DshError([Diagnostic("DSH107", f"the log has no session `{args.session}`")])
    if args.json:
        out.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        return 0
    out.write(f"{report['records']} record(s) over {report['sessions']} session(s)\n")
    if log.torn_tail:
        out.write("the last line is incomplete (a writer stopped mid-record) and is not counted\n")
    out.write("denials by rule:\n" if report["denials_by_rule"] else "no denials\n")
    for rule, count in report["denials_by_rule"].items():
        out.write(f"  {count:>5}  {rule}\n")
    if args.preset:
        out.write(f"tools of `{args.preset}` never used ({len(report['never_used'])}):\n")
        for name in report["never_used"]:
            out.write(f"  {name}\n")
    if args.session:
        out.write(f"session {args.session}:\n")
        for row in report["timeline"]:
            what = " ".join(str(v) for v in (row["name"], row["decision"]) if v)
            out.write(f"  #{row['seq']:<4} {row['type']:<18} {row['callId'] or '':<10} {what}\n")
    return 0
