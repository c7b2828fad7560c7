"""`dshc audit verify`: the event log's hash chain (issue 51, item 4), over JSONL files. Each record names the
hash of the one before it; an edited, deleted, reordered or cut record is reported with where it is (exit 1),
an intact log exits 0. The PostgreSQL side is in test_audit_postgres.py."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from dshc.runtime import log_format
from dshc.runtime.events import EventLog, read_log
from dshc.runtime.log_chain import record_hash

BIG = "b" * (log_format.BLOB_MIN_BYTES + 1)


def _log(path: Path, count: int = 6) -> Path:
    log = EventLog(str(path))
    log.append("request/header", reason="initial", fingerprint="sha256:" + "f" * 64, tools=[], context={})
    for n in range(count - 1):
        log.append("note", n=n)
    log.close()
    return path


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _rewrite(path: Path, lines) -> None:
    path.write_bytes(b"".join(lines))


def _reframed(line: bytes, **changes) -> bytes:
    """The line as someone who knows the format would edit it: its checksum made to match again."""
    return log_format.encode({**log_format.decode(line.rstrip(b"\n")), **changes})


def _verify(cli, path: Path, *extra):
    done = cli("audit", "verify", str(path), "--json", *extra)
    return done.code, done.json()


def test_an_untouched_log_is_intact_and_names_its_program_and_head(cli, tmp_path):
    path = _log(tmp_path / "events.jsonl")
    code, report = _verify(cli, path)
    assert code == 0 and report["intact"] and report["problem"] is None, report
    (chain,) = report["logs"]
    records = read_log(str(path), resolve_blobs=False).records
    assert chain["program"] == "sha256:" + "f" * 64 and len(chain["log"]) == 32
    assert chain["records"] == 6 and chain["head"] == record_hash(records[-1]) and chain["head_seq"] == 6
    assert records[0]["prev"] is None and all(r["prev"] == record_hash(p) for p, r in zip(records, records[1:]))
    human = cli("audit", "verify", str(path))
    assert human.code == 0 and "intact: 6 record(s) in 1 chained log(s)" in human.out


@pytest.mark.parametrize(
    "edit, at",
    [
        (lambda line: _reframed(line, n=99), "line 4"),  # its checksum made to match: the next record's link breaks
        (lambda line: line.replace(b'"n":1', b'"n":7'), "line 3"),  # its checksum left: the line itself is caught
    ],
    ids=["checksum-fixed", "checksum-left"],
)
def test_an_edited_record_is_caught(cli, tmp_path, edit, at):
    path = _log(tmp_path / "events.jsonl")
    lines = _lines(path)
    lines[2] = edit(lines[2])
    _rewrite(path, lines)
    code, report = _verify(cli, path)
    assert code == 1 and report["problem"]["kind"] == "edited" and report["problem"]["at"] == at, report


def test_a_deleted_record_is_a_gap(cli, tmp_path):
    path = _log(tmp_path / "events.jsonl")
    lines = _lines(path)
    del lines[3]
    _rewrite(path, lines)
    code, report = _verify(cli, path)
    assert code == 1 and report["problem"]["kind"] == "gap" and report["problem"]["at"] == "line 4", report
    assert "seq 4" in report["problem"]["message"]


def test_two_records_swapped_are_a_reordering(cli, tmp_path):
    path = _log(tmp_path / "events.jsonl")
    lines = _lines(path)
    lines[2], lines[3] = lines[3], lines[2]
    _rewrite(path, lines)
    code, report = _verify(cli, path)
    assert code == 1 and report["problem"]["kind"] == "reordered" and report["problem"]["at"] == "line 3", report


def test_a_log_cut_mid_record_is_truncated(cli, tmp_path):
    path = _log(tmp_path / "events.jsonl")
    path.write_bytes(path.read_bytes()[:-20])
    code, report = _verify(cli, path)
    assert code == 1 and report["problem"]["kind"] == "truncated", report


def test_records_cut_from_the_end_are_caught_against_a_kept_head(cli, tmp_path):
    path = _log(tmp_path / "events.jsonl")
    _, before = _verify(cli, path)
    head = before["logs"][0]["head"]
    _rewrite(path, _lines(path)[:-2])
    code, report = _verify(cli, path)
    assert code == 0  # a chain alone cannot see its end removed: that is what a kept head is for
    code, report = _verify(cli, path, "--head", head)
    assert code == 1 and report["problem"]["kind"] == "truncated" and "ends at seq 4" in report["problem"]["message"]


def test_a_kept_head_still_in_the_log_passes_after_more_appends(cli, tmp_path):
    path = _log(tmp_path / "events.jsonl")
    head = _verify(cli, path)[1]["logs"][0]["head"]
    log = EventLog(str(path))
    log.append("note", n=100)
    log.close()
    code, report = _verify(cli, path, "--head", head)
    assert code == 0 and report["logs"][0]["records"] == 7, report


def test_a_deleted_first_record_is_a_truncated_start(cli, tmp_path):
    path = _log(tmp_path / "events.jsonl")
    _rewrite(path, _lines(path)[1:])
    code, report = _verify(cli, path)
    assert code == 1 and report["problem"]["kind"] == "truncated" and report["problem"]["at"] == "line 1", report


def test_an_altered_blob_is_an_edited_record(cli, tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))
    log.append("tool/call", callId="c", name="write", arguments={"content": BIG})
    log.close()
    (blob,) = (tmp_path / "events.jsonl.blobs").iterdir()
    blob.write_text("c" * len(BIG))
    code, report = _verify(cli, path)
    assert code == 1 and report["problem"]["kind"] == "edited" and "blob" in report["problem"]["message"], report


def test_concurrent_writers_and_a_repaired_torn_tail_keep_one_intact_chain(cli, tmp_path):
    path = tmp_path / "events.jsonl"

    def write(tag):
        log = EventLog(str(path))
        for n in range(20):
            log.append("note", writer=tag, n=n)
        log.close()

    threads = [threading.Thread(target=write, args=(tag,)) for tag in "abc"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with open(path, "ab") as handle:
        handle.write(b'{"seq":61,"type":"note"')  # a writer killed mid-append
    log = EventLog(str(path))  # sets the fragment aside and links to the last whole record
    log.append("note", n="after")
    log.close()
    code, report = _verify(cli, path)
    assert code == 0 and report["records"] == 61 and len(report["logs"]) == 1, report


def test_a_log_written_before_chaining_reads_as_unchained(cli, tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(log_format.encode({"seq": n, "session": "old", "type": "note"}) for n in (1, 2)))
    code, report = _verify(cli, path)
    assert code == 1 and report["problem"]["kind"] == "unchained" and report["unchained"] == 2, report
    assert read_log(str(path)).problems == ()  # still readable as ever
    log = EventLog(str(path))  # a new writer starts a chain after the old records
    log.append("note", n=3)
    log.close()
    code, report = _verify(cli, path)
    assert code == 1 and report["problem"]["kind"] == "unchained" and report["logs"][0]["records"] == 1, report


@pytest.mark.parametrize(
    "argv, message",
    [
        (["audit", "verify"], "needs a log"),
        (["audit", "verify", "x.jsonl", "--head", "abc"], "is not a record hash"),
        (["audit", "x.jsonl", "y.jsonl"], "only taken by `dshc audit verify`"),
    ],
)
def test_bad_verify_arguments_are_usage_errors(cli, argv, message):
    done = cli(*argv)
    assert done.code == 2 and message in done.err, done


def test_a_missing_log_is_unreadable_not_a_traceback(cli, tmp_path):
    done = cli("audit", "verify", str(tmp_path / "none.jsonl"), "--json")
    assert done.code == 2 and json.loads(done.out)["diagnostics"][0]["code"] == "DSH107", done
