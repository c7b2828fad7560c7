"""Embedding glue: a Program and a Request → the runtime's PipelineContext for one session.

The runtime never imports the compiler; this module hands it the view, the policy as
pre-execute listener and guard, the local tool bodies, and the event log.
"""

from __future__ import annotations

import os
import sys
from _collections_abc import (
    Mapping,
)  # collections.abc's own source, loaded at start-up (collections.abc loads collections)
from _thread import allocate_lock  # threading.Lock itself, without importing threading (~1.5 ms a process)

from ..compiler.facts import SANDBOX_MODES
from ..compiler.policy.hidden_env import hidden_variables, present_names
from ..compiler.policy.protected import hidden_globs, hidden_paths, matching_files, protected_paths
from ..compiler.program import Program
from ..compiler.request import Request

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Callable


def wider_mode(wanted, mode: str) -> str | None:
    """The mode `sandbox_permissions` asks for when it is a known mode wider than `mode`
    (SANDBOX_MODES runs narrowest first; an escalation may only move right)."""
    if (
        isinstance(wanted, str)
        and wanted in SANDBOX_MODES
        and mode in SANDBOX_MODES
        and SANDBOX_MODES.index(wanted) > SANDBOX_MODES.index(mode)
    ):
        return wanted
    return None


def _rules(decision) -> tuple:
    return tuple((rule, str(span) if span else None) for rule, span in decision.deciding)


def _session_reader(log, current: Callable, workspace: str) -> Callable:
    """`current()` with the run's session facts: its log's records, fed to one builder as they are written
    (each call's decision is recorded before the next call is decided)."""
    import threading
    from .session_log import SessionBuilder

    builder, lock, fed = SessionBuilder(workspace), threading.Lock(), [0]

    def deciding() -> Request:
        with lock:
            records = log.records
            for record in records[fed[0] :]:
                builder.feed(record)
            fed[0] = len(records)
            return current().model_copy(update={"session": builder.session()})

    return deciding


def session(
    program: Program,
    request: Request,
    workspace: str,
    log_path: str | None = None,
    approver: Callable | None = None,
    timeout_s: float = 120.0,
    interactive: bool = False,
    calls_digest: str | None = None,
    output_schema: Mapping | None = None,
):
    # the runtime and its tool set load only for a session: decide and explain never run a tool
    from ..runtime.context import PipelineContext
    from ..runtime.deadline import deadline_wrapper
    from ..runtime.tools import IMPLEMENTATIONS, render
    from ..runtime.tools.base import ToolContext, ToolState
    from ..runtime.tools.code import CodeRuntime
    from ..runtime.tools.structured_output import turn_guard
    from ..runtime.types import Abstain, Allow, Ask, Deny, thaw
    from .log_target import open_log

    view = program.view(request)
    policy = program.composition(request).policy
    state = ToolState()
    state.plan_mode = request.plan
    sandbox = policy_mode(policy)
    escalation = Escalation(approver)
    log = open_log(log_path)
    log.append(
        "request/header",
        reason="initial",
        fingerprint=view.fingerprint,
        tools=list(view.names),
        context=request.model_dump(mode="json"),
        workspace=os.path.abspath(workspace),
        calls=calls_digest,
    )

    def current() -> Request:
        # an approved exit_plan_mode turns plan mode off for the calls after it (the view and its
        # fingerprint never depend on plan mode; only decisions do)
        planning = state.plan_mode
        return request if planning == request.plan else request.model_copy(update={"plan": planning})

    def arguments(call):
        return thaw(call.arguments) if isinstance(call.arguments, dict) else {}

    def shell_directory(entry) -> str | None:
        # the persistent shell keeps its `cd`s: `cd ~` then `cat .aws/credentials` reads the home's file
        if entry.definition != "tool-bash-persistent/bash":
            return None
        from ..runtime.tools.persistent_shell import current_directory

        return current_directory(state, request.scope)

    deciding = current
    if program.reads_session(request):  # the policy tests what this run did: the facts of its own records
        deciding = _session_reader(log, current, os.path.abspath(workspace))

    refusals = SandboxRefusals(arguments)

    def policy_listener(call, entry):
        if entry is None:
            # a name on no view: no rule can name it (the DSL refuses unknown names), so the policy
            # has nothing to say and dispatch answers UNKNOWN_TOOL, as the reference does
            return None
        from .call_decision import decide_call  # the one effect decide, the hook and the decision API give

        decided = decide_call(
            program,
            deciding(),
            call.name,
            arguments(call),
            workspace,
            include_guards=False,
            shell_cwd=shell_directory(entry),
        )
        rules = tuple((rule, str(span) if span else None) for rule, span in decided.deciding)
        if decided.invalid is not None:
            return Deny(decided.reason, rules, "INVALID_ARGS")
        if decided.gate == "ready":  # the tool's own answer without its provider, as its body gives it
            from ..runtime.tools.unavailable import unready

            tool = program.catalog.definitions.get(entry.definition)
            error = unready(entry.definition, call.name, f"`{tool.provider}`" if tool else "provider")
            return Deny(
                f"{error.message} ({decided.reason}; decided by {decided.by_text()})", rules, error.code, error.name
            )
        if (
            decided.effect == "ask"
            and decided.sandbox is not None
            and decided.sandbox.escalate_to
            and escalation.approver is not None
        ):  # with no one to ask, the ask is a denial
            escalation.needs(call.id, decided.sandbox.escalate_to)  # what an approval of this call grants
        reason = refusals.note(call, decided)
        if decided.effect == "deny":
            return Deny(f"{reason} (decided by {decided.by_text()})" if decided.deciding else reason, rules)
        return (Ask if decided.effect == "ask" else Allow)(reason=reason, decided_by=rules)

    def policy_guard(call, entry):
        now = deciding()
        denial = program.guard(now, call.name, arguments(call), workspace)
        if not denial:
            return Abstain()
        rules = _rules(denial)
        reason = denial.reason
        if program.reads_session(now):
            from ..compiler.session import session_note

            reason += session_note(program.composition(now).policy, denial.deciding, now.session)
        return Deny(f"{reason} (decided by {', '.join(f'{r} at {at}' if at else r for r, at in rules)})", rules)

    def may_read(path: str) -> bool:
        # a search reads every file below its path: each is a read the policy judges. An ask cannot be put
        # to anyone file by file, so only an allow lets the search open it.
        return program.decide(deciding(), "read", {"file_path": path}, workspace, gates=False).effect == "allow"

    reads_judged = program.names(request, "read")  # a policy silent on reads costs a search nothing
    globs = hidden_globs(policy) if policy is not None else ()

    def hidden_found(root: str):
        return matching_files(root, globs)

    import functools  # a session runs tools: decide and explain, which only describe, never load it

    @functools.lru_cache(maxsize=256)
    def described(tool: str, permissions) -> dict | None:
        return describe_sandbox(program, request, tool, {"sandbox_permissions": permissions})

    def sandbox_of(call):
        # the description depends on the tool and the asked-for escalation only
        wanted = arguments(call).get("sandbox_permissions")
        return described(call.name, wanted if isinstance(wanted, str) else None)

    review = plan_reviewer(approver)

    settings = sandbox_settings(policy)
    if log.path:  # the log the commands are recorded in stays out of their reach (a DSN's: its spool)
        from ..runtime.state_files import kept_paths

        settings["protected_roots"] = (*settings.get("protected_roots", ()), *kept_paths(log.path))

    secret_variables = hidden_variables(policy)

    def tool_context(signal):
        # the variables present when each command starts: one set in dshc's environment since is hidden too
        hidden_env = present_names(secret_variables, os.environ) if secret_variables else ()
        return ToolContext(
            workspace=os.path.abspath(workspace),
            sandbox=escalation.mode(sandbox),
            owner=request.scope,
            hidden_env=hidden_env,
            state=state,
            abort=signal,
            timeout_s=timeout_s,
            interactive=interactive,
            review_plan=review,
            web_provider=os.environ.get("DSHC_WEB_PROVIDER") or None,
            output_schema=output_schema,
            may_read=may_read if reads_judged else None,
            hidden_found=hidden_found if globs else None,
            **settings,
        )

    ctx = PipelineContext(
        view=view,
        log=log,
        implementations=IMPLEMENTATIONS,
        tool_context=tool_context,
        render=render,
        pre_execute=(turn_guard(state), policy_listener),
        approver=escalation.approver,
        guards=(policy_guard,),
        execute_wrappers=(deadline_wrapper(timeout_s), escalation.wrapper),
        timeout_s=timeout_s,
        sandbox_of=sandbox_of,
    )
    if view.sdk is not None:  # code or both mode: run_code's nested calls re-enter this pipeline
        CodeRuntime(ctx, max_parallel=max_parallel_sub_calls(program, request)).install()
    return ctx, state


def plan_reviewer(approver: Callable | None) -> Callable[[str], str] | None:
    """The session's one human channel reviews plans too: only an explicit yes approves
    (`--approve never` and a cancelled prompt keep planning); no channel, no reviewer."""
    if approver is None:
        return None
    from ..runtime.types import FrozenDict, ToolCall

    plan_review = ToolCall("plan-review", "exit_plan_mode", FrozenDict())

    def review(plan: str) -> str:
        outcome = approver(plan_review, f"approve this plan and leave plan mode?\n{plan}\n")
        return {"allowed-once": "approved", "unavailable": "unavailable"}.get(outcome, "rejected")

    return review


def max_parallel_sub_calls(program: Program, request: Request) -> int:
    """The `tools` package's `maxParallelSubCalls` as mounted (the catalog default otherwise)."""
    comp = program.composition(request)
    mounts = [
        m for source in (comp.host_rows, comp.preset) if source for m in source.mounts if m.package.text == "tools"
    ]
    knob = program.catalog.package_by_id["tools"].config["maxParallelSubCalls"].default
    value = next((m.config_value("maxParallelSubCalls") for m in mounts if m.config_value("maxParallelSubCalls")), knob)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def policy_mode(policy) -> str:
    """The sandbox mode a policy declares; with no policy or no `sandbox` line, workspace-write."""
    return policy.sandbox.text if policy and policy.sandbox else "workspace-write"


def sandbox_settings(policy) -> dict:
    """The policy's process-sandbox lines as ToolContext fields; unsaid means network off, no extra roots."""
    if policy is None:
        return {"sandbox_backend": os.environ.get("DSHC_SANDBOX", "auto")}
    return {
        "network": policy.network is not None and policy.network.text == "allow",
        # the hosts it may reach (one tuple per level that lists them) and may not; empty: every host
        "network_allow": tuple(tuple(host.text for host in level) for level in policy.network_allow),
        "network_deny": tuple(host.text for host in policy.network_deny),
        "writable_roots": tuple(root.text for root in policy.writable),
        "sandbox_fallback": policy.fallback is not None and policy.fallback.text == "unsandboxed",
        # a policy's write deny on a literal directory is kept read-only by the sandbox too
        "protected_roots": protected_paths(policy),
        # and a read deny on a literal path is hidden from processes (found empty)
        "hidden_roots": hidden_paths(policy),
        # bubblewrap only when the user asks for it (DSHC_SANDBOX=bwrap)
        "sandbox_backend": os.environ.get("DSHC_SANDBOX", "auto"),
    }


class SandboxRefusals:
    """The calls the sandbox refused in a session, so the retry that asks to leave it (`sandbox_permissions`)
    says which refusal prompted it, in its question and in the log's decision record."""

    KEPT = 256  # refusals remembered (a session may make any number)

    def __init__(self, arguments: Callable) -> None:
        self._arguments = arguments
        self._refused: dict[tuple, tuple[str, str]] = {}

    def note(self, call, decided) -> str:
        """The decision's reason; an escalation's names the refused call of the same arguments before it."""
        verdict = decided.sandbox
        if verdict is None:
            return decided.reason
        from .call_decision import ESCALATION

        key = self._key(call)
        if verdict.refuses != ESCALATION:
            if len(self._refused) >= self.KEPT:
                self._refused.clear()
            self._refused[key] = (call.id, f"the `{verdict.mode}` sandbox refuses {verdict.refuses}")
            return decided.reason
        earlier = self._refused.get(key)
        return (
            decided.reason if earlier is None else f"{decided.reason}; prompted by call `{earlier[0]}` ({earlier[1]})"
        )

    def _key(self, call) -> tuple:
        from ..common import json_io
        from ..compiler.policy.split import CARRIED

        args = {k: v for k, v in self._arguments(call).items() if k not in CARRIED}
        return call.name, json_io.dumps(args, sort_keys=True)


class Escalation:
    """A call carrying `sandbox_permissions` runs in the wider mode only if a human approved that
    very call (ask → allowed-once); allowed by a rule alone, it keeps the policy's mode."""

    def __init__(self, approver: Callable | None) -> None:
        self._approver = approver
        self._approved: set[str] = set()
        self._needed: dict[str, str] = {}  # call id -> the mode the sandbox needs to run it (its ask says so)
        self._lock = allocate_lock()
        import contextvars  # with a session only

        self._current: contextvars.ContextVar = contextvars.ContextVar("dshc_call", default=None)
        self.approver = self._approve if approver is not None else None

    def _approve(self, call, reason: str) -> str:
        outcome = self._approver(call, reason)  # type: ignore[misc]  # `approver` is this only when one was given
        with self._lock:
            if outcome == "allowed-once":
                self._approved.add(call.id)
            else:  # never runs: what it would have needed is forgotten now
                self._needed.pop(call.id, None)
        return outcome

    def needs(self, call_id: str, mode: str) -> None:
        with self._lock:
            self._needed[call_id] = mode

    def wrapper(self, call, signal, proceed):
        # the body runs in this thread, below this frame; tool_context reads the call from here
        token = self._current.set(call)
        try:
            return proceed(signal)
        finally:
            self._current.reset(token)
            with self._lock:
                self._approved.discard(call.id)
                self._needed.pop(call.id, None)

    def mode(self, policy_mode: str) -> str:
        call = self._current.get()
        if call is None or not isinstance(call.arguments, Mapping):
            return policy_mode
        with self._lock:
            approved = call.id in self._approved
            needed = self._needed.get(call.id)
        # an approved call runs in the mode it asked for, or the one its question said it needs
        asked = [
            wide
            for mode in (call.arguments.get("sandbox_permissions"), needed)
            if (wide := wider_mode(mode, policy_mode))
        ]
        return max(asked, key=SANDBOX_MODES.index) if approved and asked else policy_mode


PROCESS_PACKAGES = ("tool-bash", "tool-pwsh", "tool-bash-persistent")
FILE_PACKAGES = ("tool-fs", "tool-str-replace-editor", "tool-fs-search")


def describe_sandbox(program: Program, request: Request, tool: str, arguments: Mapping | None = None) -> dict | None:
    """Which sandbox a call of `tool` would run in under the request's policy, for decide,
    explain and the decision event; None for tools that start no process and touch no file."""
    policy = program.composition(request).policy
    listed = program.listed_definition(request, tool)
    definition = (
        listed
        if listed is not None
        else next((d.definition for d in program.catalog.definitions.values() if d.name == tool), "")
    )
    package = definition.split("/")[0]
    if package not in PROCESS_PACKAGES + FILE_PACKAGES:
        return None
    mode = policy_mode(policy)
    settings = sandbox_settings(policy)
    escalation = wider_mode((arguments or {}).get("sandbox_permissions"), mode)
    if package in FILE_PACKAGES:
        mechanism = "none" if mode == "danger-full-access" else "path checks and workspace-relative opens"
    else:
        mechanism = _process_mechanism(mode, settings)
    return {
        "mode": mode,
        "applies_to": "processes" if package in PROCESS_PACKAGES else "files",
        "mechanism": mechanism,
        "network": "allow" if settings.get("network") else "deny",
        "writable": list(settings.get("writable_roots", ())),
        "read_only": list(settings.get("protected_roots", ())) if mode == "workspace-write" else [],
        # what a read deny names, hidden from processes where it exists (files are the rules' alone)
        "unreadable": list(settings.get("hidden_roots", ()))
        if mode != "danger-full-access" and package in PROCESS_PACKAGES
        else [],
        "unreadable_matching": list(hidden_globs(policy))
        if policy is not None and mode != "danger-full-access" and package in PROCESS_PACKAGES
        else [],
        # the variables a shell line may not read, removed from every process's environment
        "hidden_env": list(hidden_variables(policy))
        if mode != "danger-full-access" and package in PROCESS_PACKAGES
        else [],
        # for processes, wherever they exist and the host can mount (`RUN_LATER`)
        "read_only_where_present": list(_run_later())
        if mode == "workspace-write" and package in PROCESS_PACKAGES
        else [],
        "escalation_if_approved": escalation,
        # with the network on for some hosts: those it is kept to (each level's list must admit one) and
        # those refused (the keys are there only then)
        **(
            {
                "network_allow": [list(level) for level in settings["network_allow"]],
                "network_deny": list(settings["network_deny"]),
            }
            if settings.get("network") and (settings.get("network_allow") or settings.get("network_deny"))
            else {}
        ),
    }


def _run_later() -> tuple[str, ...]:
    from ..runtime.sandbox.files import RUN_LATER  # stdlib only: no planner to load for a description

    return RUN_LATER


def _process_mechanism(mode: str, settings: dict) -> str:
    from ..runtime.sandbox import Confinement, SandboxUnavailable, plan
    from .sandbox_record import reported_probe

    conf = Confinement(
        mode,
        os.getcwd(),
        os.getcwd(),
        network=settings.get("network", False),
        network_allow=settings.get("network_allow", ()),
        network_deny=settings.get("network_deny", ()),
        fallback_unsandboxed=settings.get("sandbox_fallback", False),
        backend=settings.get("sandbox_backend", "auto"),
        protected=tuple(os.path.join(os.getcwd(), path) for path in settings.get("protected_roots", ())),
        hidden=tuple(os.path.join(os.getcwd(), path) for path in settings.get("hidden_roots", ())),
    )
    try:
        return plan(conf, ["true"], -1, found=reported_probe()).mechanism
    except SandboxUnavailable as exc:
        return f"unavailable ({exc.missing}): the call fails closed"


def host_mechanism() -> str:
    """This host's sandbox mechanism, as the enforcement map names it (`compiler.enforcement.MECHANISMS`)."""
    from .sandbox_record import reported_probe

    found = reported_probe()
    if os.environ.get("DSHC_SANDBOX") == "bwrap":
        return "bwrap" if found.bwrap and found.seccomp else "none"
    if found.platform.startswith("linux"):
        if found.landlock_abi < 1 or not found.seccomp:
            return "none"
        return "landlock+mounts" if found.network_namespace else "landlock"
    return "seatbelt" if found.platform == "darwin" and found.sandbox_exec else "none"


def sandbox_text(described: dict | None) -> str:
    if described is None:
        return "sandbox: not applicable (no process, no file access)\n"
    text = (
        f"sandbox: {described['mode']} for {described['applies_to']} via {described['mechanism']}, "
        f"network {'on' if described['network'] == 'allow' else 'off'}"
    )
    text += egress_words(described.get("network_allow", ()), described.get("network_deny", ()))
    if described["writable"]:
        text += ", also writable: " + ", ".join(described["writable"])
    if described.get("read_only"):
        text += ", kept read-only: " + ", ".join(described["read_only"])
    if described.get("read_only_where_present"):
        text += ", and where present " + ", ".join(described["read_only_where_present"])
    if described.get("unreadable") or described.get("unreadable_matching"):
        text += ", unreadable: " + ", ".join(
            [
                *described.get("unreadable", ()),
                *(
                    ["files matching " + ", ".join(described["unreadable_matching"]) + " (found when a command starts)"]
                    if described.get("unreadable_matching")
                    else []
                ),
            ]
        )
    if described.get("hidden_env"):
        text += ", environment without " + ", ".join(described["hidden_env"])
    if described["escalation_if_approved"]:
        text += f"; {described['escalation_if_approved']} if this call is approved once"
    return text + "\n"


def egress_words(allow, deny) -> str:
    """A policy's host lists after "network on": ` for A, B only, never C`."""
    return "".join(" for " + ", ".join(level) + " only" for level in allow) + (
        ", never " + ", ".join(deny) if deny else ""
    )


def terminal_approver(call, reason: str) -> str:
    """Ask on the terminal; anything but an explicit yes is a rejection."""
    try:
        with open("/dev/tty", "r+") as tty:
            tty.write(f"\nallow `{call.name}` once? {reason} [y/N] ")
            tty.flush()
            answer = tty.readline().strip().lower()
    except OSError:
        return "unavailable"
    return "allowed-once" if answer in ("y", "yes") else "rejected"


def pick_approver(mode: str | None) -> Callable | None:
    if mode == "once":
        return lambda call, reason: "allowed-once"
    if mode == "never":
        return lambda call, reason: "rejected"
    return terminal_approver if sys.stdin.isatty() else None
