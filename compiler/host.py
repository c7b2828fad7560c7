"""Embedding glue: a Program and a Request → the runtime's PipelineContext for one session.

The runtime never imports the compiler; this module hands it the view, the policy as
pre-execute listener and guard, the local tool bodies, and the event log.
"""
from __future__ import annotations

import os
import sys
from typing import Callable

from ..runtime.context import PipelineContext
from ..runtime.events import EventLog
from ..runtime.deadline import deadline_wrapper
from ..runtime.tools import IMPLEMENTATIONS, render
from ..runtime.tools.base import ToolContext, ToolState
from ..runtime.types import Abstain, Allow, Ask, Deny, thaw
from .program import Program
from .request import Request


def runtime_effect(effect: str) -> str:
    """What the runtime does with a decision: `conditional` (unresolved at call time) is a deny."""
    return "deny" if effect == "conditional" else effect


def _rules(decision) -> tuple:
    return tuple((rule, str(span) if span else None) for rule, span in decision.deciding)


def session(program: Program, request: Request, workspace: str, log_path: str | None = None,
            approver: Callable | None = None, timeout_s: float = 120.0, interactive: bool = False,
            calls_digest: str | None = None):
    view = program.view(request)
    policy = program.composition(request).policy
    state = ToolState()
    state.plan_mode = request.plan
    sandbox = policy.sandbox.text if policy and policy.sandbox else "workspace-write"
    log = EventLog(log_path)
    log.append("request/header", reason="initial", fingerprint=view.fingerprint, tools=list(view.names),
               context=request.model_dump(mode="json"), workspace=os.path.abspath(workspace), calls=calls_digest)

    def arguments(call):
        return thaw(call.arguments) if isinstance(call.arguments, dict) else {}

    def policy_listener(call, entry):
        decision = program.decide(request, call.name, arguments(call), workspace, include_guards=False)
        kind = {"allow": Allow, "ask": Ask, "deny": Deny}[runtime_effect(decision.effect)]
        return kind(reason=decision.reason, decided_by=_rules(decision))

    def policy_guard(call, entry):
        denial = program.guard(request, call.name, arguments(call), workspace)
        return Deny(denial.reason, _rules(denial)) if denial else Abstain()

    def tool_context(signal):
        return ToolContext(workspace=os.path.abspath(workspace), sandbox=sandbox, owner=request.scope, state=state,
                           abort=signal, timeout_s=timeout_s, interactive=interactive)

    ctx = PipelineContext(view=view, log=log, implementations=IMPLEMENTATIONS, tool_context=tool_context,
                          render=render, pre_execute=(policy_listener,), approver=approver, guards=(policy_guard,),
                          execute_wrappers=(deadline_wrapper(timeout_s),), timeout_s=timeout_s)
    return ctx, state


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
