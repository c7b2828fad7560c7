"""`dshc audit` over a JSONL log: the figures, and a log with unreadable records refused rather than undercounted."""

from __future__ import annotations

import json


def _logged_run(cli, tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    calls = [
        {"id": "1", "name": "read", "arguments": {"file_path": "a.txt"}},
        {"id": "2", "name": "write", "arguments": {"file_path": "b.txt", "content": "x"}},
    ]
    (tmp_path / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    log = tmp_path / "events.jsonl"
    cli(
        "run",
        str(tmp_path / "calls.jsonl"),
        "--workspace",
        str(tmp_path),
        "--policy",
        "read-only",
        "--log",
        str(log),
        "--json",
    )
    return log


def test_audit_counts_the_denials_of_a_jsonl_log(cli, tmp_path):
    report = cli("audit", str(_logged_run(cli, tmp_path)), "--json", "--preset", "standard")
    assert report.code == 0, report.err
    data = report.json()
    assert data["sessions"] == 1 and data["torn_tail"] is False
    assert sum(data["denials_by_rule"].values()) >= 1 and "read" not in data["never_used"]


def test_a_log_with_an_unreadable_record_is_refused_with_its_line(cli, tmp_path):
    log = _logged_run(cli, tmp_path)
    lines = log.read_text().splitlines(keepends=True)
    lines.insert(2, "[" * 2000 + "\n")  # nested far deeper than any record
    log.write_text("".join(lines))
    result = cli("audit", str(log), "--json")
    assert result.code == 2 and "Traceback" not in result.err
    assert [(d["code"], d["line"]) for d in result.json()["diagnostics"]] == [("DSH405", 3)]


def test_a_torn_last_line_is_reported_not_counted(cli, tmp_path):
    log = _logged_run(cli, tmp_path)
    whole = cli("audit", str(log), "--json").json()["records"]
    with open(log, "a") as handle:
        handle.write('{"type": "tool/call", "na')  # a writer killed mid-append
    torn = cli("audit", str(log))
    assert torn.code == 0 and "last line is incomplete" in torn.out and f"{whole} record(s)" in torn.out
