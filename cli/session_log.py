"""The event log dshc wrote for one session → its `Session` (what earlier calls read and which were denied).

A call counts once its decision is recorded (`tool/decision`): a denial adds to `denied`, any other decision
(the call may have run) adds what it reads — a read tool's file, a search's folder, a shell line's files and
variables (`shell.analyse`, `shell_env.env_use`; a line the analysis cannot read whole may have read anything).
The hook reads its session's records from its log (`session_of_log`), and writes beside each decision what the
call reads (`sessionFacts`), so a later call reads it instead of analysing the line again; `dshc run` feeds its
own records as it writes them (`SessionBuilder`); replay and `dshc test` feed the calls before the one they decide.
"""

from __future__ import annotations

import os

from ..compiler.session import ALL, Earlier, Session

READ_FIELDS = {
    "read": ("file_path", "path"),
    "read_image": ("file_path", "path"),
    "grep": ("path",),
    "glob": ("path",),
    "str_replace_editor": ("path",),
}  # tool -> the arguments naming what it reads


class SessionBuilder:
    """A session's facts, fed its records in log order (one writer session's)."""

    def __init__(self, workspace: str | None = None) -> None:
        self.workspace = workspace
        self._calls: dict[str, tuple[str, dict]] = {}  # call id -> (tool, arguments), until decided
        self._read: dict[str, Earlier] = {}
        self._env: dict[str, Earlier] = {}
        self._denied: list[Earlier] = []

    def feed(self, record: dict) -> None:
        kind = record.get("type")
        if kind == "request/header" and isinstance(record.get("workspace"), str):
            self.workspace = record["workspace"]
        elif kind == "tool/call":
            arguments = record.get("arguments")
            self._calls[str(record.get("callId"))] = (
                str(record.get("name") or ""),
                arguments if isinstance(arguments, dict) else {},
            )
        elif kind == "tool/decision":
            call_id = str(record.get("callId"))
            name, arguments = self._calls.pop(call_id, (str(record.get("name") or ""), {}))
            if record.get("decision") == "deny":
                self.add_denied(call_id, name, arguments)
            else:
                self._add(call_id, name, arguments, _recorded(record.get(FACTS)) or call_reads(name, arguments))

    def add_call(self, call_id: str, name: str, arguments: dict) -> None:
        """A call that was let through: what it read."""
        self._add(call_id, name, arguments, call_reads(name, arguments))

    def add_denied(self, call_id: str, name: str, arguments: dict) -> None:
        self._denied.append(Earlier(call_id, name, _argument(arguments)))

    def session(self) -> Session:
        return Session(tuple(self._read.items()), tuple(self._env.items()), tuple(self._denied))

    def _add(self, call_id: str, name: str, arguments: dict, reads: dict) -> None:
        earlier = Earlier(call_id, name, _argument(arguments))
        for path in reads["read"]:
            self._read.setdefault(path, earlier)
            if path != ALL and self.workspace and not os.path.isabs(os.path.expanduser(path)):
                self._read.setdefault(os.path.normpath(os.path.join(self.workspace, path)), earlier)
        for variable in reads["env_read"]:
            self._env.setdefault(variable, earlier)


FACTS = "sessionFacts"  # a `tool/decision` record's field: what the call reads (`call_reads`), as its writer found it


def call_reads(name: str, arguments: dict) -> dict:
    """What a call reads, as the log keeps it: {"read": [file paths], "env_read": [variable names]}, `*` for
    any. A shell line that does not parse, or runs code the rules cannot read, may read any file; one not read
    whole, any variable."""
    command = arguments.get("command") if name != "str_replace_editor" else None
    if isinstance(command, str):
        from ..compiler.shell import analyse
        from ..compiler.shell_env import env_use

        use = env_use(command)
        found = analyse(command)
        paths = [access.path for access in (found.files if found is not None else ()) if access.kind == "read"]
        if found is None or any(segment.opaque for segment in found.segments):
            paths.append(ALL)
        return {"read": paths, "env_read": sorted(use.read if use.complete else use.read | {ALL})}
    if name == "str_replace_editor" and arguments.get("command") != "view":
        return {"read": [], "env_read": []}
    return {
        "read": [path for field in READ_FIELDS.get(name, ()) if isinstance(path := arguments.get(field), str) and path],
        "env_read": [],
    }


def _recorded(facts) -> dict | None:
    """A record's `sessionFacts` when it is whole (two lists of strings), else None: found again from the call."""
    if not isinstance(facts, dict):
        return None
    lists = [facts.get("read"), facts.get("env_read")]
    if not all(isinstance(each, list) and all(isinstance(item, str) for item in each) for each in lists):
        return None
    return facts


def _argument(arguments: dict) -> str:
    """The argument that names what a call does: its command, its file, its URL, else its arguments."""
    for field in ("command", "file_path", "path", "url", "pattern"):
        if isinstance(arguments.get(field), str):
            return arguments[field]
    return ", ".join(f"{key}={value!r}" for key, value in sorted(arguments.items()))[:200]


def session_of_records(records, writer: str | None, workspace: str | None = None) -> Session:
    """The facts of the records written by `writer` (a log's `session` field; None: every record)."""
    builder = SessionBuilder(workspace)
    for record in records:
        if writer is None or record.get("session") == writer:
            builder.feed(record)
    return builder.session()


def session_of_log(target: str | None, writer: str, workspace: str | None = None) -> Session | None:
    """The facts of `writer`'s records in the log at `target` (a JSONL path or a DSN); None — the strictest
    state — when there is no log, it cannot be read, or a line of it is not a whole record."""
    if not target:
        return None
    from ..compiler.diagnostics import DshError
    from ..runtime.pg_log import is_dsn
    from .log_target import read_log_target, with_spooled

    try:
        found = read_log_target(target)
        if is_dsn(target):  # what the database has not been sent yet is in the writer's spool
            found = with_spooled(target, found)
    except (OSError, DshError, ValueError):
        return None
    if found.problems:  # a line that is not a record: what it said is not known
        return None
    records = found.records
    if is_dsn(target):
        records = sorted((r for r in records if r.get("session") == writer), key=lambda r: r.get("seq") or 0)
    return session_of_records(records, writer, workspace)
