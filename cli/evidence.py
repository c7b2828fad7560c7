"""Records of calls → the calls a host ran, each with the file and line it was read from, and the records skipped.

Sources: durable event logs (JSONL or a postgresql:// DSN; an MCP gateway's log is one), `dshc run` calls files,
and Claude Code session transcripts. `read_evidence` is the one place a source is opened; each reader returns
the same `Evidence`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from ..compiler.diagnostics import Diagnostic, DshError
from ..compiler.source import Span
from ..runtime.log_records import replay_input
from .log_target import read_log_target

FORMATS = ("auto", "log", "calls", "claude-code")
# what a Claude Code transcript's tool_result says when the call did not run: the user declined it, a
# permission rule or a hook refused it (any other error is the tool's own: it ran)
REFUSED = (
    "doesn't want to proceed",
    "tool use was rejected",
    "permission to use",
    "haven't granted",
    "has been denied",
    "hook error",
    "blocked by",
)


@dataclass(frozen=True)
class ObservedCall:
    line: int
    call_id: str
    name: str
    arguments: Any
    context: dict  # the context the call was decided in (the header's, plan mode as it stood; else the flags')
    workspace: str | None
    recorded: str  # the policy's word: allow | ask | deny
    ran: bool  # the host ran it: allowed, or asked and approved; a declined ask or a deny did not run
    source: str = ""  # the file (or DSN) it was read from

    @property
    def cited(self) -> str:
        return f"{self.source}:{self.line}"


@dataclass(frozen=True)
class Evidence:
    calls: tuple[ObservedCall, ...]
    skipped: tuple[tuple[int, str], ...]  # (line, why) records that could not be used
    torn_tail: bool


def read_evidence(
    source: str, form: str, context: dict, workspace: str | None, host_runs: Callable[[str], bool]
) -> Evidence:
    """The calls of `source` in `form` (`auto`: told from its first record). `context` and `workspace` are those
    of sources that do not record them; `host_runs(name)`: the tool is run by the host, not by dshc."""
    if form == "auto":
        form = detect(source)
    if form == "log":
        return read_sessions(source, host_runs)
    if form == "calls":
        return _read_calls(source, context, workspace)
    return read_transcript(source, context, workspace)


def detect(source: str, looked: int = 10) -> str:
    """`log`, `calls` or `claude-code`, from the first records of `source` that tell (a DSN is a log)."""
    from ..runtime.pg_log import is_dsn

    if is_dsn(source):
        return "log"
    first = None
    for number, text in _numbered(source):
        first = first or number
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            raise DshError(
                [
                    _at(
                        source,
                        number,
                        "a record is not JSON",
                        "an event log, a calls file or a Claude Code transcript is JSON lines",
                    )
                ]
            ) from None
        if isinstance(record, dict):
            if "seq" in record or str(record.get("type", "")).startswith(("request/", "tool/")):
                return "log"
            if "batch" in record or ("name" in record and "type" not in record):
                return "calls"
            # a transcript opens with messages, a summary, or records of its own (file-history snapshots)
            if "message" in record or "sessionId" in record or record.get("type") in ("user", "assistant", "summary"):
                return "claude-code"
        looked -= 1
        if not looked:
            break
    if first is None:
        raise DshError(
            [
                _at(
                    source,
                    None,
                    "no record to read: the file is empty",
                    "an event log, a calls file or a Claude Code transcript is JSON lines",
                )
            ]
        )
    raise DshError(
        [
            _at(
                source,
                first,
                "cannot tell whether this is an event log, a calls file or a Claude Code transcript",
                "name the format with --format",
            )
        ]
    )


def read_sessions(source: str, host_runs: Callable[[str], bool] = lambda name: False) -> Evidence:
    """Every logged call of `source` with its outcome; malformed records are skipped and named."""
    log = read_log_target(source)  # a JSONL path or a postgresql:// DSN; DSH107 when unreadable
    given = replay_input(log)
    # (session, call id) -> (the decision its tool/result records (None: it ran, hook style), by)
    outcomes: dict[tuple, tuple[str | None, object]] = {}
    for record in log.records:
        if record.get("type") == "tool/result" and isinstance(record.get("callId"), str):
            decision = record.get("decision")
            outcomes.setdefault(
                (record.get("session"), record["callId"]),
                (decision if isinstance(decision, str) else None, record.get("decidedBy")),
            )
    sessions = {line: record.get("session") for line, record in zip(log.lines, log.records)}
    calls = []
    for logged in given.decisions:
        key = (sessions.get(logged.line), logged.call_id)
        if key in outcomes:
            decision, by = outcomes[key]
            # gate 5 refuses a tool with no local body: dshc did not run it, the host that implements it does
            ran = decision in (None, "allow") or (by == [["gate:ready", None]] and host_runs(logged.name))
        else:  # no result (interrupted): it ran only if the policy let it through unasked
            ran = logged.recorded == "allow"
        calls.append(
            ObservedCall(
                logged.line,
                logged.call_id,
                logged.name,
                logged.arguments,
                logged.context,
                logged.header.workspace,
                logged.recorded,
                ran,
                source,
            )
        )
    return Evidence(tuple(calls), given.problems, log.torn_tail)


def _read_calls(source: str, context: dict, workspace: str | None) -> Evidence:
    """A `dshc run` calls file: every call is one the agent made, so each counts as run."""
    from ..runtime.calls_file import CallsFileError, read_calls
    from ..runtime.types import thaw
    from .command_context import line_diagnostics as _line_diagnostics

    try:
        read = read_calls(source)
    except CallsFileError as exc:
        raise DshError(_line_diagnostics(source, exc.problems)) from None
    calls = tuple(
        ObservedCall(line, call.id, call.name, thaw(call.arguments), context, workspace, "allow", True, source)
        for line, call in zip(read.lines, read.calls)
    )
    return Evidence(calls, (), False)


def read_transcript(source: str, context: dict, workspace: str | None) -> Evidence:
    """A Claude Code session transcript: each `tool_use` block, mapped to its catalog calls, ran when a
    `tool_result` answers it with anything but a refusal. A record that is not a JSON object is an error."""
    from ..compiler.interop.agents import load_mapping, map_call

    uses, results, problems = [], {}, []
    for number, text in _numbered(source):
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            problems.append(_at(source, number, "a transcript record is not JSON"))
            continue
        if not isinstance(record, dict):
            problems.append(_at(source, number, "a transcript record is a JSON object"))
            continue
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                    problems.append(_at(source, number, "a `tool_use` block needs a string `id` and `name`"))
                    continue
                cwd = record.get("cwd") if isinstance(record.get("cwd"), str) else None
                uses.append((number, block, cwd))
            elif block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                results[block["tool_use_id"]] = _refused(block)
    if problems:
        raise DshError(problems)
    prefix = load_mapping("claude-code").mcp_prefix
    calls, skipped = [], []
    for number, block, cwd in uses:
        name, given = block["name"], block.get("input")
        root = workspace or cwd
        mapped = [
            (c.tool, c.args)
            for c in map_call("claude-code", name, given if isinstance(given, dict) else {}, root)
            if c.tool is not None
        ]
        if not mapped and name.startswith(prefix) and name.count("__") >= 2:
            # an MCP tool `mcp__SERVER__TOOL`: the catalog (an overlay of the server's tools) names it TOOL
            mapped = [(name.split("__", 2)[2], dict(given) if isinstance(given, dict) else {})]
        if not mapped:
            skipped.append((number, f"`{name}` has no catalog counterpart"))
            continue
        refused = results.get(block["id"])
        ran = refused is False  # no answer: interrupted, or the transcript ends first
        for index, (tool, args) in enumerate(mapped):
            call_id = block["id"] if len(mapped) == 1 else f"{block['id']}#{index + 1}"
            calls.append(
                ObservedCall(number, call_id, tool, args, context, root, "allow" if ran else "deny", ran, source)
            )
    return Evidence(tuple(calls), tuple(skipped), False)


def _refused(block: dict) -> bool:
    if block.get("is_error") is not True:
        return False
    content = block.get("content")
    if isinstance(content, list):
        content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    text = content.lower() if isinstance(content, str) else ""
    return any(phrase in text for phrase in REFUSED)


def _numbered(source: str):
    """(line number, text) of each non-blank line; DSH107 when the file cannot be read."""
    try:
        with open(source, encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, 1):
                if text.strip():
                    yield number, text
    except OSError as exc:
        raise DshError([Diagnostic("DSH107", f"cannot read `{source}`: {exc.strerror or exc}", path=source)]) from None


def _at(source: str, line: int | None, message: str, help: str | None = None) -> Diagnostic:
    return Diagnostic("DSH405", message, Span(source, line, 1, line, 1) if line else None, help, path=source)


def host_implemented(catalog) -> Callable[[str], bool]:
    """Whether every definition of a tool name comes from a catalog overlay (no local body: the host runs it)."""

    def runs(name: str) -> bool:
        tools = catalog.by_name.get(name) or []
        return bool(tools) and all(catalog.package_by_id[t.package].origin is not None for t in tools)

    return runs
