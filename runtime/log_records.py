"""Records of a read event log → what replay and resume need, with every malformed record named by line.

Sessions may interleave (concurrent writers, restarts): a decision pairs with the header and
the call of its own session. Resume looks only at sessions that ran the same calls file.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .events import LogRead

DECISIONS = ("allow", "ask", "deny")
OUTCOMES = ("tool/result", "tool/interrupted")


@dataclass(frozen=True)
class Header:
    line: int
    context: dict
    workspace: str | None


@dataclass(frozen=True)
class LoggedDecision:
    """One `tool/decision` with what is needed to decide it again."""

    line: int
    header: Header
    call_id: str
    name: str
    arguments: Any
    recorded: str  # allow | ask | deny, with a guard's denial (its own stage, after the policy's) counted
    plan_left: bool = False  # an approved exit_plan_mode came earlier in its session: plan mode was off
    agent_tool: str | None = None  # another agent's tool the call stands for (a hook's record), else None

    @property
    def context(self) -> dict:
        """The request context the call was decided in (the header's, with plan mode as it stood then)."""
        return {**self.header.context, "plan": False} if self.plan_left else self.header.context


@dataclass(frozen=True)
class ReplayInput:
    decisions: tuple[LoggedDecision, ...]
    calls: int
    problems: tuple[tuple[int, str], ...]  # (line, why)


def _text(record: dict, key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) and value else None


def _guard_decided(record: dict) -> bool:
    """Did a guard decide this result? Rules are named `policy/guard:NAME` (the policy core's naming)."""
    rules = record.get("decidedBy")
    return isinstance(rules, list) and any(
        isinstance(rule, list) and rule and isinstance(rule[0], str) and "/guard:" in rule[0] for rule in rules
    )


def replay_input(read: LogRead) -> ReplayInput:
    headers: dict[Any, Header] = {}
    calls: dict[tuple, dict] = {}
    plan_left: set = set()  # sessions whose exit_plan_mode was approved: later calls ran out of plan mode
    guarded: set = set()  # (session, call id) a guard denied: tool/decision holds the policy's word before guards
    sessions: list = []  # the session of each decision, in order
    decisions, problems = [], list(read.problems)
    for line, record in zip(read.lines, read.records):
        kind, session = record.get("type"), record.get("session")
        if not isinstance(kind, str):
            problems.append((line, "the record has no `type`"))
        elif kind == "request/header":
            context = record.get("context")
            workspace = record.get("workspace")
            if not isinstance(context, dict) or not isinstance(workspace, (str, type(None))):
                problems.append((line, "a request/header needs a `context` object and a `workspace` string"))
                continue
            headers[session] = Header(line, context, workspace)
            plan_left.discard(session)
        elif kind == "tool/result":
            if record.get("name") == "exit_plan_mode" and record.get("isError") is False:
                plan_left.add(session)  # the body turns plan mode off only on an approval, its one success
            if record.get("decision") == "deny" and _guard_decided(record):
                guarded.add((session, record.get("callId")))
        elif kind == "tool/call":
            if _text(record, "callId") is None or _text(record, "name") is None:
                problems.append((line, "a tool/call needs a `callId` and a `name`"))
                continue
            calls[(session, record["callId"])] = record
        elif kind == "tool/decision":
            call_id, name, recorded = _text(record, "callId"), _text(record, "name"), record.get("decision")
            if call_id is None or name is None or recorded not in DECISIONS:
                problems.append(
                    (line, "a tool/decision needs a `callId`, a `name` and a `decision` of " + ", ".join(DECISIONS))
                )
                continue
            header, call = headers.get(session), calls.get((session, call_id))
            if header is None:
                problems.append((line, "a tool/decision comes before its session's request/header"))
                continue
            if call is None:
                problems.append((line, f"a tool/decision for `{call_id}` comes before its tool/call"))
                continue
            if call["name"] != name:
                problems.append((line, f"a tool/decision names `{name}` but its tool/call is `{call['name']}`"))
                continue
            arguments = call.get("arguments")
            agent = call.get("agentTool")
            decisions.append(
                LoggedDecision(
                    line,
                    header,
                    call_id,
                    name,
                    arguments if arguments is not None else {},
                    recorded,
                    session in plan_left,
                    agent if isinstance(agent, str) else None,
                )
            )
            sessions.append(session)
    decisions = [
        replace(d, recorded="deny") if (session, d.call_id) in guarded else d for d, session in zip(decisions, sessions)
    ]
    if not headers and not problems:
        problems.append((0, "the log has no request/header record"))
    return ReplayInput(tuple(decisions), len(calls), tuple(sorted(problems)))


@dataclass
class PriorRun:
    """What earlier sessions over the same calls file left, by call id."""

    results: dict[str, dict] = field(default_factory=dict)  # its first tool/result record
    marked: dict[str, str] = field(default_factory=dict)  # name, for calls with a tool/interrupted marker
    unfinished: dict[str, str] = field(default_factory=dict)  # name, for calls recorded with no outcome at all


def prior_run(read: LogRead, calls_digest: str) -> PriorRun:
    sessions = {
        r.get("session") for r in read.records if r.get("type") == "request/header" and r.get("calls") == calls_digest
    }
    prior, called = PriorRun(), {}
    for record in read.records:
        call_id, kind = record.get("callId"), record.get("type")
        if record.get("session") not in sessions or not isinstance(call_id, str) or record.get("parent"):
            continue
        name = record.get("name") if isinstance(record.get("name"), str) else ""
        if kind == "tool/result":
            prior.results.setdefault(call_id, record)
        elif kind == "tool/interrupted":
            prior.marked[call_id] = name
        elif kind == "tool/call":
            called[call_id] = name
    prior.unfinished = {c: n for c, n in called.items() if c not in prior.results and c not in prior.marked}
    return prior
