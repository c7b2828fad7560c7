"""Replay: a read event log and a Program → each logged decision decided again under another policy.

Every malformed record is a problem with its line, never a crash. Each call is decided by the one call
decision its door used (`call_decision`): a `conditional` counts as `deny`, as the runtime treats it (fail
closed).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..runtime.events import LogRead
from ..runtime.log_records import replay_input
from ..compiler.diagnostics import DshError
from .call_decision import decide_call
from ..compiler.request import InvalidRequest, Request


@dataclass(frozen=True)
class ReplayReport:
    changes: tuple[dict, ...]
    calls: int
    problems: tuple[tuple[int, str], ...]  # (line, why): the log cannot be replayed as it is


def replay(program, read: LogRead, policy: str) -> ReplayReport:
    given = replay_input(read)
    problems = list(given.problems)
    changes = []
    requests: dict[tuple[int, bool], Request | None] = {}
    earlier = None  # line of each `tool/decision` -> the facts of its session's records before it (made once)
    for logged in given.decisions:
        header = logged.header
        key = (header.line, logged.plan_left)
        if key not in requests:
            try:
                requests[key] = Request(**{**logged.context, "policy": policy})
            except (InvalidRequest, TypeError) as exc:
                requests[key] = None
                problems.append((header.line, f"the request/header context is not a request: {_first_error(exc)}"))
        request = requests[key]
        if request is None:
            continue
        if program.reads_session(request):  # the session as the log recorded it up to this call
            earlier = earlier if earlier is not None else _sessions_before(read)
            request = request.model_copy(update={"session": earlier.get(logged.line)})
        if not isinstance(logged.arguments, dict):
            problems.append((logged.line, f"the arguments of `{logged.call_id}` are not a JSON object"))
            continue
        try:
            decision = _decide(program, request, logged, header.workspace)
        except DshError as exc:  # e.g. a tool name the program does not know
            problems.append((logged.line, exc.diagnostics[0].message if exc.diagnostics else str(exc)))
            continue
        effect = decision.effect
        if effect != logged.recorded:
            changes.append(
                {
                    "callId": logged.call_id,
                    "name": logged.name,
                    "before": logged.recorded,
                    "after": effect,
                    "reason": decision.reason,
                    "rules": [{"rule": r, "source": str(s) if s else None} for r, s in decision.deciding],
                }
            )
    return ReplayReport(tuple(changes), given.calls, tuple(sorted(set(problems))))


def _decide(program, request: Request, logged, workspace: str | None):
    """The call decided again as the door that logged it decided it: the runtime's own calls by the one call
    decision, a hook's (another agent's tool) as the hook does (`hook.decide_mapped`, the project's sandbox
    without the hook's own files)."""
    if logged.agent_tool is None:
        return decide_call(program, request, logged.name, logged.arguments, workspace)
    from .hook import _agent_fields, _file_sandbox, decide_mapped

    return decide_mapped(
        program,
        request,
        logged.name,
        logged.arguments,
        workspace or "",
        _file_sandbox(program, request, ()),
        _agent_fields("claude-code", logged.agent_tool),
    )


def _sessions_before(read: LogRead) -> dict:
    """For each `tool/decision` record's line, its writer session's facts from the records before it (a log
    with unreadable lines: none, the strictest state, as the hook reads it)."""
    from .session_log import SessionBuilder

    if read.problems:
        return {}
    builders: dict = {}
    found = {}
    for line, record in zip(read.lines, read.records):
        builder = builders.get(record.get("session"))
        if builder is None:
            builder = builders[record.get("session")] = SessionBuilder()
        if record.get("type") == "tool/decision":
            found[line] = builder.session()
        builder.feed(record)
    return found


def _first_error(exc: Exception) -> str:
    if isinstance(exc, InvalidRequest):
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error.get("loc", ()))
        return f"{where}: {error.get('msg', '').lower()}" if where else error.get("msg", "").lower()
    return str(exc)
