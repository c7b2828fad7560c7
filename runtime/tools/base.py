"""What every tool body shares: the error type and its message table, the per-call context,
the per-session state, and the background job table. In: arguments + context; out: one JSON value."""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, overload

from ..sandbox import Confinement
from ..signals import Signal
from .procs import ProcessRun


SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")


class ToolError(Exception):
    """A tool failure the model sees as `Error: <message>`, with `{name, code}` kept for the log."""

    def __init__(self, message: str, code: str | None = None, name: str = "ToolError") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.name = name

    def __repr__(self) -> str:
        return f"ToolError({self.message!r}, code={self.code!r}, name={self.name!r})"


# kind -> (code, error class name, message template). Every tool failure is raised through
# `fail`, so wording lives here and nowhere else.
ERRORS: dict[str, tuple[str | None, str, str]] = {
    "invalid-args": ("INVALID_ARGS", "ToolError", "{detail}"),
    "aborted": ("ABORTED", "AbortError", "aborted"),
    "timeout": ("TOOL_TIMEOUT", "ToolTimeoutError", "command timed out after {seconds}{partial}"),
    "sandbox-outside": (
        "FS_SANDBOX_DENIED",
        "FsError",
        "[sandbox: file access denied under {mode} mode] `{path}` is outside the workspace `{root}`{hint}",
    ),
    "sandbox-read-only": (
        "FS_SANDBOX_DENIED",
        "FsError",
        "[sandbox: file access denied under read-only mode] `{path}` cannot be modified{hint}",
    ),
    "sandbox-runs-later": (
        "FS_SANDBOX_DENIED",
        "FsError",
        "[sandbox: file access denied under workspace-write mode] `{path}` is in `{name}`, "
        "which runs code later, outside the sandbox{hint}",
    ),
    "sandbox-unknown": (
        "SANDBOX_UNAVAILABLE",
        "SandboxError",
        "sandbox mode `{mode}` is not one of read-only, workspace-write, danger-full-access",
    ),
    "sandbox-unavailable": (
        "SANDBOX_UNAVAILABLE",
        "SandboxError",
        "no OS sandbox can confine this command under {mode}: {missing} is missing; the "
        "policy may opt out with `sandbox fallback unsandboxed`",
    ),
    "sandbox-failed": ("SANDBOX_UNAVAILABLE", "SandboxError", "the command was not run: {reason}"),
    "fs-not-regular": (
        "FS_NOT_REGULAR_FILE",
        "FsError",
        "`{path}` is not a regular file (a FIFO, socket or device); file tools refuse it",
    ),
    "fs-hard-linked": (
        "FS_SANDBOX_DENIED",
        "FsError",
        "`{path}` has {links} hard links; one may lead outside the workspace, so it is not changed",
    ),
    "fs-moved": (
        "FS_SANDBOX_DENIED",
        "FsError",
        "`{path}` changed under the call (a path component became a link or vanished); nothing was written",
    ),
    "fs-not-found": ("FS_NOT_FOUND", "FsError", "`{path}` does not exist"),
    "fs-not-observed": (
        "FS_NOT_OBSERVED",
        "FsError",
        "`{path}` has not been read in this session; read it before changing it",
    ),
    "fs-stale": (
        "FS_STALE_VERSION",
        "FsError",
        "`{path}` has changed since it was last read; read it again before changing it",
    ),
    "fs-too-large": ("FS_TOO_LARGE", "FsError", 'cannot read "{path}": {size} the {limit}-byte limit'),
    "fs-io": ("FS_IO_ERROR", "FsError", "cannot {verb} `{path}`: {reason}"),
    "fs-is-directory": ("FS_NOT_REGULAR_FILE", "FsError", "`{path}` is a directory, not a file"),
    "fs-not-directory": ("FS_NOT_DIRECTORY", "FsError", "`{path}` is not a directory"),
    "fs-no-match": ("FS_EDIT_NOT_FOUND", "FsError", "`{what}` was not found in `{path}`"),
    "fs-many-matches": (
        "FS_AMBIGUOUS_EDIT",
        "FsError",
        "`{what}` occurs {count} times in `{path}`; add surrounding context to make it unique{hint}",
    ),
    "fs-no-change": (None, "Error", "`old_string` and `new_string` are identical; nothing to change"),
    # a plain error: the reference defines no code for a model without image input
    "image-unavailable": (
        None,
        "Error",
        'cannot read "{path}" as an image: no image-capable model is routed '
        "for this session; switch to an image-capable model to read images",
    ),
    "unknown-job": (None, "Error", "no background job `{job_id}`; job_list shows the known ids"),
    # plain errors with no code, as the reference's plan-mode tool raises them
    "not-plan-mode": (None, "Error", "exit_plan_mode is only available in plan mode"),
    "plan-no-heading": (None, "Error", "exit_plan_mode requires a non-empty markdown plan starting with a # heading"),
    "plan-no-channel": (
        None,
        "Error",
        "no user-questions channel is available to review the plan; ask the user to switch the session mode instead",
    ),
    "plan-kept": (None, "Error", "The user chose to keep planning; revise the plan and present it again."),
    # a plain error, as tools raise only the reference's codes; the guard's denial of later calls
    # (structured_output.turn_guard) carries the pipeline code TURN_CONCLUDED
    "turn-concluded": (
        None,
        "Error",
        "this child's turn ended when `structured_output` delivered its result; no "
        "further tool calls run in this session",
    ),
    "goal-objective": ("GOAL_INVALID_OBJECTIVE", "GoalError", "`objective` must not be blank"),
    "goal-update": ("GOAL_TOOL_INVALID_UPDATE", "GoalError", "{detail}"),
    "goal-unknown": ("GOAL_NOT_FOUND", "GoalError", "no goal `{goal_id}`"),
    "goal-stale": (
        "GOAL_STALE_REVISION",
        "GoalError",
        "revision {given} of goal `{goal_id}` is stale; the current revision is {current}",
    ),
    "goal-transition": (
        "GOAL_INVALID_TRANSITION",
        "GoalError",
        "cannot {action} goal `{goal_id}` while it is {status}",
    ),
    "goal-open": (
        "GOAL_ALREADY_EXISTS",
        "GoalError",
        "goal `{goal_id}` is still {status}; complete it or mark it blocked before creating another",
    ),
    "no-tty": (
        "NO_PROVIDER",
        "UserQuestionError",
        "no user-questions provider is registered: no terminal is attached to ask the user",
    ),
    # the reference registers these tools only beside their provider, so it has no code for the
    # absence: a plain error, never an invented code
    "provider-unavailable": (None, "Error", "`{tool}` is not available on this host: no {provider}"),
    "web-configured-missing": (
        "WEB_PROVIDER_CONFIGURED_MISSING",
        "WebError",
        'configured web provider "{provider}" is not registered',
    ),
    "web-configured-unavailable": (
        "WEB_PROVIDER_CONFIGURED_UNAVAILABLE",
        "WebError",
        'configured web provider "{provider}" is registered but unavailable',
    ),
    "web-unavailable": ("WEB_PROVIDER_UNAVAILABLE", "WebError", "no usable web provider is registered"),
    "web-ambiguous": (
        "WEB_PROVIDER_AMBIGUOUS",
        "WebError",
        "multiple usable web providers are registered ({providers}); configure one explicitly",
    ),
    "web-provider-error": ("WEB_PROVIDER_ERROR", "WebError", 'web provider "{provider}" failed: {reason}'),
    "lsp-unavailable": ("LSP_UNAVAILABLE", "LspError", "`{tool}` is not available on this host: no {provider}"),
    "session-search-disabled": (
        "SESSION_QUERY_SEARCH_DISABLED",
        "SessionQueryError",
        "`{tool}` is disabled on this host: no {provider}",
    ),
    "session-unavailable": (
        "SESSION_QUERY_TOOL_FAILED",
        "SessionQueryError",
        "`{tool}` is not available on this host: no {provider}",
    ),
    "skill-unavailable": (None, "SkillError", "`{tool}` is not available on this host: no {provider}"),
    "code-unavailable": ("CODE_RUN_FAILED", "CodeRunError", "`{tool}` is not available on this host: no {provider}"),
}


# rides a refusal of a tool that takes `sandbox_permissions` (write, edit): the sanctioned retry
# is named where the model meets the refusal, not only in the tool description
ESCALATION_HINT = (
    "\n[sandbox: escalation available — retry this exact operation once with `sandbox_permissions` "
    "(the narrowest wider mode that suffices) and a one-sentence `justification`; the user is asked "
    "to approve it]"
)


def fail(kind: str, **fields: Any) -> ToolError:
    code, name, template = ERRORS[kind]
    return ToolError(template.format(**fields), code=code, name=name)


def invalid(detail: str) -> ToolError:
    return fail("invalid-args", detail=detail)


def thaw(value: Any) -> Any:
    """Deep-frozen arguments (mapping proxies, tuples) back into plain JSON values."""
    if isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        return [thaw(v) for v in value]
    return value


# a required string, or one with a default, is a `str`: only an optional one without a default may be None
@overload
def arg_str(args: Mapping[str, Any], key: str, *, required: Literal[True] = ..., default: str | None = ...) -> str: ...
@overload
def arg_str(args: Mapping[str, Any], key: str, *, required: bool = ..., default: str) -> str: ...
@overload
def arg_str(args: Mapping[str, Any], key: str, *, required: bool, default: None = ...) -> str | None: ...
def arg_str(args: Mapping[str, Any], key: str, *, required: bool = True, default: str | None = None) -> str | None:
    value = args.get(key, default)
    if value is None:
        if required:
            raise invalid(f"`{key}` is required")
        return None
    if not isinstance(value, str):
        raise invalid(f"`{key}` must be a string")
    return value


@overload
def arg_int(args: Mapping[str, Any], key: str, *, default: int, minimum: int | None = ...) -> int: ...
@overload
def arg_int(args: Mapping[str, Any], key: str, *, default: None = ..., minimum: int | None = ...) -> int | None: ...
def arg_int(args: Mapping[str, Any], key: str, *, default: int | None = None, minimum: int | None = None) -> int | None:
    """Integer-valued numbers; the catalog types several counts as `number`, so 3.0 is accepted."""
    value = args.get(key)
    if value is None:
        return default
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or float(value) != int(value)
    ):
        raise invalid(f"`{key}` must be a whole number")
    number = int(value)
    if minimum is not None and number < minimum:
        raise invalid(f"`{key}` must be at least {minimum}")
    return number


def arg_bool(args: Mapping[str, Any], key: str, default: bool = False) -> bool:
    value = args.get(key, default)
    if not isinstance(value, bool):
        raise invalid(f"`{key}` must be true or false")
    return value


@dataclass
class Job:
    job_id: str
    command: str
    description: str
    run: ProcessRun
    status: str = "running"  # running | exited | killed
    kill_reason: str | None = None
    started_at: float = field(default_factory=time.time)
    done: threading.Event = field(default_factory=threading.Event)
    kill_requested: threading.Event = field(default_factory=threading.Event)

    def snapshot(self, with_output: bool = False) -> dict[str, Any]:
        value: dict[str, Any] = {
            "job_id": self.job_id,
            "command": self.command,
            "status": self.status,
            "exit_code": self.run.exit_code if self.done.is_set() else None,
        }
        if self.description:
            value["description"] = self.description
        if self.kill_reason is not None:
            value["kill_reason"] = self.kill_reason
        if with_output:
            value["output"] = self.run.output.text
            value["truncated"] = self.run.output.truncated
            if self.done.is_set() and self.run.network_denied:  # read once the run is over (`ProcessRun`)
                value["network_denied"] = self.run.network_denied
        return value


class JobTable:
    """Background shell processes of one session, ids `job-1`, `job-2`, … in start order.

    Each job is owned by one pump thread; killing is a request that thread carries out, so
    the process is only ever reaped in one place.
    """

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._next = 1
        self._lock = threading.Lock()
        self._closed = False

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        command: str,
        description: str = "",
        max_chars: int = 16000,
        env: Mapping[str, str] | None = None,
        confinement: Confinement | None = None,
    ) -> Job:
        with self._lock:
            if self._closed:
                raise invalid("the session is closed; no new background jobs can start")
            run = ProcessRun(argv, cwd=cwd, max_chars=max_chars, keep="tail", env=env, confinement=confinement)
            job = Job(f"job-{self._next}", command, description, run)
            self._next += 1
            self._jobs[job.job_id] = job
        threading.Thread(target=self._pump, args=(job,), name=f"dshc-{job.job_id}", daemon=True).start()
        return job

    def _pump(self, job: Job) -> None:
        try:
            job.run.pump(lambda: "killed" if job.kill_requested.is_set() else None)
        finally:
            with self._lock:
                job.status = "killed" if job.kill_requested.is_set() else "exited"
            job.done.set()

    def get(self, job_id: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise fail("unknown-job", job_id=job_id)
        return job

    def list(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def kill(self, job_id: str, reason: str | None = None, wait_s: float = 10.0) -> bool:
        """True when this call stopped a running job; False when it had already finished."""
        job = self.get(job_id)
        with self._lock:
            if job.done.is_set() or job.kill_requested.is_set():
                return False
            job.kill_reason = reason or "killed on request"
            job.kill_requested.set()
        job.done.wait(wait_s)
        return True

    def close(self) -> None:
        with self._lock:
            self._closed = True
            jobs = list(self._jobs.values())
        for job in jobs:
            if not job.done.is_set():
                job.kill_reason = job.kill_reason or "session closed"
                job.kill_requested.set()
        for job in jobs:
            job.done.wait(10.0)


class Closable(Protocol):
    """What the session state needs of a persistent shell (`persistent_shell.PersistentShell`, which imports
    this module): that it can be closed when the session ends."""

    def close(self) -> None: ...


@dataclass
class ToolState:
    """Mutable per-session state owned by the runtime and shared by all tool bodies."""

    observed: dict[str, str] = field(default_factory=dict)  # realpath -> sha256 hex at last read/write
    todos: list[dict] = field(default_factory=list)
    goals: dict[str, dict] = field(default_factory=dict)
    plan_mode: bool = False
    final_output: dict | None = None  # what structured_output delivered; once set, the turn is over
    jobs: JobTable = field(default_factory=JobTable)
    shells: dict[str, Closable] = field(default_factory=dict)  # owner id -> PTY shell (PersistentShell)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    _tmpdir: str | None = field(default=None, repr=False, compare=False)

    def private_tmp(self) -> str:
        """The session's own temp dir (TMPDIR of every process), writable in every sandbox mode."""
        with self.lock:
            if self._tmpdir is None or not os.path.isdir(self._tmpdir):
                self._tmpdir = os.path.realpath(tempfile.mkdtemp(prefix="dshc-tmp-"))
            return self._tmpdir

    def close(self) -> None:
        """Kill every background job and persistent shell; safe to call more than once."""
        self.jobs.close()
        with self.lock:
            shells = list(self.shells.values())
            self.shells.clear()
            tmpdir, self._tmpdir = self._tmpdir, None
        for shell in shells:
            shell.close()
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)


@dataclass(frozen=True)
class ToolContext:
    workspace: str
    sandbox: str  # read-only | workspace-write | danger-full-access
    owner: str  # agent id; persistent shells are isolated per owner
    state: ToolState
    abort: threading.Event | Signal  # the pipeline gives its Signal
    timeout_s: float | None = None  # overall body timeout the pipeline asks shells to honour
    interactive: bool = False  # a TTY is attached
    max_output_chars: int = 16000
    writable_roots: tuple[str, ...] = ()  # writable beside the workspace (workspace-write only)
    protected_roots: tuple[str, ...] = ()  # kept read-only under the writable roots (a policy's write deny)
    hidden_roots: tuple[str, ...] = ()  # hidden from processes, found empty (a policy's read deny)
    hidden_env: tuple[str, ...] = ()  # variables removed from processes' environment (a policy's env_read deny)
    # the files a policy's read-deny globs match under a root, found when a command starts: (paths, whether
    # the search looked at every entry); None when no such glob
    hidden_found: Callable[[str], tuple[tuple[str, ...], bool]] | None = None
    network: bool = False  # processes may open sockets beyond the machine's own IPC
    network_allow: tuple[tuple[str, ...], ...] = ()  # with the network on, only these hosts (`common.hosts`)
    network_deny: tuple[str, ...] = ()  # and never these
    sandbox_fallback: bool = False  # the policy opted out of failing closed without an OS sandbox
    sandbox_backend: str = "auto"  # auto | bwrap
    # whether the policy lets this call read a file it comes upon (a search reads every file below its
    # path); None: the policy has no rule on reads. A file refused is not searched, and the result names it
    may_read: Callable[[str], bool] | None = None
    web_provider: str | None = None  # the configured web provider id; None picks the one usable
    # the user-questions channel a plan is reviewed on: plan -> "approved" | "rejected" |
    # "unavailable"; None when the session has no one to ask
    review_plan: Callable[[str], str] | None = None
    # the JSON Schema a workflow or ralph caller gave its child's result; None accepts any object
    output_schema: Mapping[str, Any] | None = None
    # the connections the egress proxy refused during this call (`procs.EgressEvents`), which the pipeline
    # records as `network/denied` events: one list per context, and a context per call
    network_denied: list[dict] = field(default_factory=list)


Body = Callable[[Mapping[str, Any], ToolContext], Any]
