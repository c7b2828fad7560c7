"""The event log's hash chain. Every record names its log (`log`: a random id made by the log's first record,
which also names the program's fingerprint as `program`) and the SHA-256 of the record before it in that log
(`prev`, null for the first). `record_hash` is the one definition the writer and the verifier share;
`verify` walks records in stored order and names the first edit, gap, reordering or truncation.

What a chain shows and what it does not: a record changed, removed or moved breaks a link; records removed
from the end break none, so a truncation is seen only against a head kept elsewhere (`heads`: a hash an
earlier verify printed, or a database spool's last shipped record). A writer able to rewrite the whole log
can rebuild the chain: that is why the log is kept out of the reach of the commands it records.
"""

from __future__ import annotations

import os

from ..common.digest import sha256  # not hashlib: it loads OpenSSL (a hook writes these records)
from ..common import json_io  # not the json package: it loads `re` (a hook writes these records)

LOG, PREV, PROGRAM = "log", "prev", "program"


def record_hash(record: dict) -> str:
    """SHA-256 of the record's canonical JSON (keys sorted, ASCII, no spaces), its framing checksum aside:
    the same value whether the record is read back from a JSONL line or a database's JSONB."""
    body = {key: value for key, value in record.items() if key != "crc32"}
    text = json_io.dumps(body, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    return "sha256:" + sha256(text.encode("ascii")).hexdigest()


def first_link(fingerprint: object) -> dict:
    """The link fields of a log's first record: a new log id, no predecessor, the program's fingerprint."""
    return {LOG: os.urandom(16).hex(), PREV: None, PROGRAM: fingerprint}


def verify(entries, where, problems=(), torn: bool = False, heads=()) -> dict:
    """`entries`: (position, record as stored) in stored order; `where(position)` names a position ("line 7");
    `problems`: (position, kind, why) the reader found; `heads`: (log id or None, seq or None, hash, source)
    that must still be in the log. Out: {"intact", "records", "unchained", "logs", "problem"}."""
    entries = list(entries)
    walk = _Walk(entries, where)
    findings = [walk.finding] if walk.finding else []
    findings += [(position, kind, f"{where(position)}: {why}") for position, kind, why in problems]
    if findings:
        finding = min(findings, key=lambda f: f[0])
    else:
        finding = walk.missing_head(heads) or _torn(torn) or walk.unchained_finding()
    return {
        "intact": finding is None,
        "records": len(entries),
        "unchained": walk.unchained,
        "logs": [{"log": log_id, **chain.summary()} for log_id, chain in walk.chains.items()],
        "problem": None
        if finding is None
        else {"kind": finding[1], "at": where(finding[0]) if finding[0] is not None else None, "message": finding[2]},
    }


def _torn(torn: bool):
    if not torn:
        return None
    return (
        None,
        "truncated",
        "the last line is incomplete: the log was cut mid-record (or its writer was stopped "
        "mid-append, and no append since has set the fragment aside)",
    )


class _Chain:
    def __init__(self, position, record: dict, digest: str) -> None:
        self.program = record.get(PROGRAM)
        self.first, self.count = position, 0
        self.position, self.seq, self.hash = position, record.get("seq"), digest

    def summary(self) -> dict:
        return {
            "program": self.program,
            "records": self.count,
            "first": self.first,
            "head": self.hash,
            "head_seq": self.seq,
        }


class _Walk:
    """One pass over the entries: the chains met, and the first finding (position, kind, message) or None."""

    def __init__(self, entries, where) -> None:
        self.where = where
        self.chains: dict[str, _Chain] = {}  # log id -> the chain met so far
        self.seen: dict[str, object] = {}  # record hash -> its position
        self.unchained, self.first_unchained, self.finding = 0, None, None
        # where each (log, seq) sits: a seq missing here but present later is a reordering, not a gap
        self.order = {(r.get(LOG), r.get("seq")): i for i, (_, r) in enumerate(entries) if isinstance(r.get(LOG), str)}
        for index, (position, record) in enumerate(entries):
            self.finding = self._step(index, position, record)
            if self.finding:
                return

    def _step(self, index: int, position, record: dict):
        log_id, digest = record.get(LOG), record_hash(record)
        if not isinstance(log_id, str):
            self.unchained += 1
            self.first_unchained = position if self.first_unchained is None else self.first_unchained
            return None
        chain, prev = self.chains.get(log_id), record.get(PREV)
        found = None
        if chain is None:
            chain = self.chains[log_id] = _Chain(position, record, digest)
            if prev is not None:
                found = (
                    position,
                    "truncated",
                    f"{self.where(position)}: log {log_id[:12]}… begins with a record "
                    f"that follows another ({str(prev)[:19]}…): its first records are gone",
                )
            elif PROGRAM not in record:
                found = (
                    position,
                    "edited",
                    f"{self.where(position)}: the first record of log {log_id[:12]}… does not name the program",
                )
        elif prev != chain.hash:
            found = self._broken(index, position, record, chain)
        chain.count += 1
        chain.position, chain.seq, chain.hash = position, record.get("seq"), digest
        self.seen[digest] = position
        return found

    def _broken(self, index: int, position, record: dict, chain: _Chain):
        here, before, seq, log_id = self.where(position), self.where(chain.position), record.get("seq"), record[LOG]
        if isinstance(record.get(PREV), str) and record[PREV] in self.seen:
            return (
                position,
                "reordered",
                f"{here}: the record follows the one at "
                f"{self.where(self.seen[record[PREV]])}, not the one before it at {before}",
            )
        if not isinstance(seq, int) or not isinstance(chain.seq, int):
            return (
                position,
                "edited",
                f"{here}: the record does not follow the one at {before} (one of them was "
                f"changed after it was written)",
            )
        if seq <= chain.seq:
            return (position, "reordered", f"{here}: seq {seq} comes after seq {chain.seq} ({before})")
        missing = range(chain.seq + 1, seq)
        if any(self.order.get((log_id, s), -1) > index for s in missing):
            return (
                position,
                "reordered",
                f"{here}: seq {seq} comes before seq {chain.seq + 1}, which is later in the log",
            )
        if missing:
            span = f"{missing[0]}" if len(missing) == 1 else f"{missing[0]}–{missing[-1]}"
            return (
                position,
                "gap",
                f"{here}: record(s) seq {span} of log {log_id[:12]}… are missing (between {before} and here)",
            )
        return (
            position,
            "edited",
            f"{here}: the record does not follow the one at {before}: one of them was changed after it was written",
        )

    def missing_head(self, heads):
        """The first kept head the log no longer holds: records were cut from its end (or that one changed)."""
        for log_id, seq, digest, source in heads:
            if digest in self.seen:
                continue
            if log_id is None and len(self.chains) == 1:
                log_id = next(iter(self.chains))  # a head given by hash alone, against the one chain there is
            chain = self.chains.get(log_id)
            if chain is not None and isinstance(seq, int) and isinstance(chain.seq, int) and chain.seq >= seq:
                return (None, "edited", f"record seq {seq} of log {log_id[:12]}… differs from the one {source} holds")
            ends = f" (log {log_id[:12]}… ends at seq {chain.seq})" if chain is not None else ""
            return (
                None,
                "truncated",
                f"the log no longer holds record {digest[:19]}… ({source}){ends}: records were cut from its end",
            )
        return None

    def unchained_finding(self):
        if not self.unchained:
            return None
        return (
            self.first_unchained,
            "unchained",
            f"{self.unchained} record(s) carry no hash chain (written before logs were chained), from "
            f"{self.where(self.first_unchained)}: they cannot be verified",
        )
