"""`dshc suggest`: a real `dshc run --log` session → a scope and policy that allow what ran and nothing else."""

from __future__ import annotations

import json

import pytest

from dshc.cli.evidence import read_sessions
from dshc.cli.suggest import generalise
from dshc.compiler.program import Program, SourceFile, shipped_sources
from dshc.compiler.request import Request
from dshc.runtime import log_format

from conftest import run_cli

CALLS = [
    {"id": "1", "name": "read", "arguments": {"file_path": "src/a/x.txt"}},
    {"id": "2", "name": "write", "arguments": {"file_path": "src/a/y.txt", "content": "x"}},
    {"id": "3", "name": "bash", "arguments": {"command": "ls src && git status", "description": "list"}},
    {"id": "4", "name": "read", "arguments": {"file_path": "src/a/b/z.txt"}},
    # asked (an escalation) and declined by --approve never: `edit` must not be allowed
    {
        "id": "5",
        "name": "edit",
        "arguments": {
            "file_path": "src/a/x.txt",
            "old_string": "hi",
            "new_string": "yo",
            "sandbox_permissions": "require_escalated",
            "justification": "j",
        },
    },
]


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    root = tmp_path_factory.mktemp("suggest")
    workspace = root / "ws"
    (workspace / "src" / "a" / "b").mkdir(parents=True)
    (workspace / "docs").mkdir()
    (workspace / "src" / "a" / "x.txt").write_text("hi\n")
    (workspace / "src" / "a" / "b" / "z.txt").write_text("z\n")
    calls = root / "calls.jsonl"
    calls.write_text("".join(json.dumps(c) + "\n" for c in CALLS))
    log = root / "events.jsonl"
    ran = run_cli("run", str(calls), "--workspace", str(workspace), "--log", str(log), "--approve", "never", "--json")
    assert ran.code in (0, 1), ran.err
    output = root / "suggested.dsh"
    result = run_cli("suggest", "--from-log", str(log), "-o", str(output), "--json")
    assert result.code == 0, result.out + result.err
    program = Program.from_files(shipped_sources() + [SourceFile(str(output), output.read_bytes())])
    return {"workspace": str(workspace), "log": log, "output": output, "report": result.json(), "program": program}


def _decide(session, name, args):
    request = Request(scope="suggested-root", policy="suggested")
    return session["program"].decide(request, name, args, session["workspace"]).effect


def test_the_suggestion_parses_and_checks_clean(session):
    checked = run_cli("check", str(session["output"]))
    assert checked.code == 0, checked.out + checked.err
    text = session["output"].read_text()
    assert "extends workspace-write" in text and "default deny" in text and "# covers 2 calls: " in text
    formatted = run_cli("fmt", "--check", str(session["output"]))
    assert formatted.code == 0, formatted.out


def test_every_call_that_ran_is_still_allowed(session):
    report = session["report"]
    assert report["witnesses"] == [] and report["dropped"] == [] and report["cells"] > 0
    assert report["redecided"]["ran"] == {"allow": 4}
    assert report["redecided"]["not_ran"] == {"deny": 1}  # the declined edit
    for call in CALLS[:4]:
        assert _decide(session, call["name"], call["arguments"]) == "allow", call


@pytest.mark.parametrize(
    "name, args",
    [
        ("glob", {"pattern": "*"}),  # a tool never used
        ("edit", {"file_path": "src/a/x.txt", "old_string": "hi", "new_string": "yo"}),  # only a declined ask
        ("read", {"file_path": "docs/secret.txt"}),  # outside the observed directory
        ("read", {"file_path": "src/a/../../docs/secret.txt"}),  # `..` back out of it
        ("read", {"file_path": "/etc/passwd"}),  # outside the workspace
        ("write", {"file_path": "src/other.txt", "content": "x"}),
        ("bash", {"command": "rm -rf src", "description": "x"}),
        ("bash", {"command": "ls src && rm -rf /", "description": "x"}),  # a used command does not carry another
        ("bash", {"command": "ls src/a", "description": "x"}),  # other arguments to a used program
        # a redirection is decided as a `write` of its file: outside the observed write directory
        ("bash", {"command": "git status > docs/out", "description": "x"}),
    ],
)
def test_calls_never_made_are_denied(session, name, args):
    assert _decide(session, name, args) == "deny"


def test_the_suggestion_keeps_what_current_asks(session):
    # extending CURRENT keeps its asks: an escalated write inside the observed directory still asks
    escalated = {
        "file_path": "src/a/y.txt",
        "content": "x",
        "sandbox_permissions": "require_escalated",
        "justification": "j",
    }
    assert _decide(session, "write", escalated) == "ask"
    assert session["report"]["against"] == "workspace-write"


def test_a_rule_verify_finds_wider_is_dropped_and_the_witness_shown(session, tmp_path, monkeypatch):
    from dshc.cli import suggest
    from dshc.compiler.verify import Report, Violation

    answers = [
        Report(
            cells=1,
            violations=[
                Violation(
                    "against",
                    "the new program is wider than the old one: deny → allow",
                    {"tool": "bash", "scope": "suggested-root"},
                )
            ],
        ),
        Report(cells=1),
    ]
    monkeypatch.setattr(suggest, "verify", lambda *args, **kwargs: answers.pop(0))
    output = tmp_path / "narrowed.dsh"
    result = run_cli("suggest", "--from-log", str(session["log"]), "-o", str(output), "--json")
    assert result.code == 1 and answers == []
    report = result.json()
    assert report["witnesses"][0]["witness"]["tool"] == "bash"
    assert "bash" in report["dropped"][0]
    text = output.read_text()
    assert "allow bash" not in text and "# dropped: the rules for `bash`" in text and "allow read" in text
    assert report["redecided"]["ran"] == {"allow": 3, "deny": 1}  # the shell call is no longer allowed


def _hostile_log(path, good_log, tail: bytes):
    path.write_bytes(good_log.read_bytes() + tail)
    return read_sessions(str(path))


def test_hostile_records_are_skipped_and_counted(session, tmp_path):
    good = read_sessions(str(session["log"]))
    deep = (
        b'{"type":"tool/call","session":"s","callId":"d","name":"read","arguments":'
        + b"[" * 1000
        + b"]" * 1000
        + b"}\n"
    )
    deeper = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    huge = log_format.encode({"type": "note", "text": "x" * 3_000_000})
    for tail, skipped in [
        (b'{"type":"tool/call"', 0),  # torn last line: not a record, flagged as torn
        (b"not json at all\n", 1),
        (deep, 1),
        (deeper, 1),
        (huge, 0),
        (b"[1, 2]\n", 1),
    ]:
        read = _hostile_log(tmp_path / "hostile.jsonl", session["log"], tail)
        assert [c.call_id for c in read.calls] == [c.call_id for c in good.calls]
        assert len(read.skipped) - len(good.skipped) == skipped, tail[:40]


def test_paths_that_leave_the_workspace_are_not_generalised(session, tmp_path):
    evidence = read_sessions(str(session["log"]))
    escaped = [
        c.__class__(**{**c.__dict__, "arguments": {"file_path": "src/../../outside.txt"}})
        for c in evidence.calls
        if c.name == "read"
    ]
    suggestion = generalise(session["program"], escaped)
    assert [r for r in suggestion.rules if r.tool == "read"] == []
    assert len(suggestion.uncovered) == len(escaped) == 2


@pytest.mark.parametrize("content", [b"", b"not json\n", b'{"type":"request/header"}\n'])
def test_a_log_without_calls_that_ran_is_a_clear_error(tmp_path, content):
    log = tmp_path / "bad.jsonl"
    log.write_bytes(content)
    result = run_cli("suggest", "--from-log", str(log), "--json")
    assert result.code == 2 and "Traceback" not in result.err
    assert "nothing to allow" in result.out


def test_a_missing_log_is_a_clear_error(tmp_path):
    result = run_cli("suggest", "--from-log", str(tmp_path / "absent.jsonl"))
    assert result.code == 2 and "cannot read the event log" in result.err and "Traceback" not in result.err
