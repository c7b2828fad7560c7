"""`dshc audit verify LOG|DSN`: a log's hash chain checked (`runtime.log_chain`), from a JSONL file or PostgreSQL.

In: the log, and heads kept from an earlier verify (`--head`); a database log is also held to the last record
each of this machine's spools shipped. Out: intact (exit 0) or the first problem (exit 1), as text or JSON.
"""

from __future__ import annotations

import json
import os
import re

from ..compiler.diagnostics import Diagnostic, DshError, invalid_request
from ..runtime.log_chain import LOG, record_hash, verify

_HASH = re.compile(r"sha256:[0-9a-f]{64}")


def cmd_verify(args, out, err) -> int:
    if args.target is None:
        raise DshError([invalid_request("`dshc audit verify` needs a log", "dshc audit verify EVENTS.jsonl|DSN")])
    bad = [head for head in args.head or () if not _HASH.fullmatch(head)]
    if bad:
        raise DshError(
            [
                invalid_request(
                    f"`--head {bad[0]}` is not a record hash",
                    "give a `head` an earlier `dshc audit verify` printed: sha256:<64 hex>",
                )
            ]
        )
    report = verify_target(args.target, tuple(args.head or ()))
    if args.json:
        out.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        return 0 if report["intact"] else 1
    chained = len(report["logs"])
    if report["intact"]:
        out.write(f"{report['log']}: intact: {report['records']} record(s) in {chained} chained log(s)\n")
    else:
        problem = report["problem"]
        out.write(f"{report['log']}: not intact: {problem['kind']}: {problem['message']}\n")
    for chain in report["logs"]:
        out.write(
            f"  log {chain['log']} (program {chain['program']}): {chain['records']} record(s), "
            f"head {chain['head']} (seq {chain['head_seq']})\n"
        )
    return 0 if report["intact"] else 1


def verify_target(target: str, heads: tuple[str, ...] = ()) -> dict:
    from ..runtime.pg_log import is_dsn
    from .log_target import _shown

    kept = [(None, None, head, "given with `--head`") for head in heads]
    try:
        report = _verify_postgres(target, kept) if is_dsn(target) else _verify_jsonl(target, kept)
    except OSError as exc:
        raise DshError(
            [Diagnostic("DSH107", f"cannot read the event log: {exc.strerror or exc}", path=_shown(target))]
        ) from None
    return {"log": _shown(target), **report}


def _verify_jsonl(path: str, heads: list) -> dict:
    from ..runtime.events import read_log
    from ..runtime.log_format import BadRecord, blob_dir, internalise

    read = read_log(path, resolve_blobs=False)  # the chain covers records as stored: blob references
    problems = [(line, _kind(why), why) for line, why in read.problems]
    blobs = blob_dir(path)
    for line, record in zip(read.lines, read.records):
        try:
            internalise(record, blobs)  # a blob changed or gone is a record changed
        except BadRecord as exc:
            problems.append((line, _kind(str(exc)), str(exc)))
    return verify(zip(read.lines, read.records), lambda line: f"line {line}", problems, read.torn_tail, heads)


def _verify_postgres(dsn: str, heads: list) -> dict:
    from ..runtime.log_format import stored_form
    from ..runtime.pg_log import read_postgres_rows
    from .log_target import _first_line, _shown

    try:
        rows = read_postgres_rows(dsn)
    except Exception as exc:  # noqa: BLE001 - a database error (psycopg's own classes) is a user-facing one
        raise DshError(
            [Diagnostic("DSH107", f"cannot read the event log from the database: {_first_line(exc)}", path=_shown(dsn))]
        ) from None
    entries, problems = [], []
    for row, session, seq, kind, record in rows:
        if (record.get("session"), record.get("seq"), record.get("type")) != (session, seq, kind):
            problems.append((row, "edited", "the row's session, seq or type differ from its record"))
        # the database holds records with their blobs resolved: the chain covers them as the spool stored them
        entries.append((row, {key: stored_form(value) for key, value in record.items()}))
    logs = {record.get(LOG) for _, record in entries}
    heads = heads + [head for head in _spool_heads(dsn) if head[0] in logs]
    return verify(entries, lambda row: f"row {row}", problems, False, heads)


def _spool_heads(dsn: str) -> list:
    """What this machine's spools for `dsn` say was shipped: each keeps the last record it sent (a spool
    whose log the database never received has shipped nothing, and is left out by the caller)."""
    from ..runtime.events import read_log
    from .log_target import _prefix, spool_folder

    try:
        folder = spool_folder(dsn)
    except DshError:
        return []  # no private spool folder here: nothing shipped from it to hold the database to
    heads = []
    for name in sorted(os.listdir(folder)):
        if name.startswith(_prefix(dsn)) and name.endswith(".jsonl"):
            records = read_log(os.path.join(folder, name), resolve_blobs=False).records
            if records and isinstance(records[0].get(LOG), str):
                first = records[0]
                heads.append(
                    (
                        first[LOG],
                        first.get("seq"),
                        record_hash(first),
                        f"shipped, as this machine's spool `{name}` holds",
                    )
                )
    return heads


def _kind(why: str) -> str:
    return "edited" if "does not match" in why else "unreadable"
