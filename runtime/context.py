"""Everything the stages read: the view, the hooks, the tools and the log of one run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .events import EventLog
from .signals import Signal


@dataclass
class PipelineContext:
    view: Any  # dshc.compiler.view.ToolView
    log: EventLog
    implementations: dict  # definition id -> body(args, tool_context)
    tool_context: Callable[[Signal], Any]  # signal -> dshc.runtime.tools.base.ToolContext
    render: Callable[[str, Any, Any], str] = lambda definition, args, value: str(value)
    pre_execute: tuple = ()  # listener(call, entry) -> Allow | Ask | Deny | None (next)
    approver: Callable | None = None  # (call, reason) -> "allowed-once" | "rejected" | "cancelled" | "unavailable"
    guards: tuple = ()  # guard(call, entry) -> Deny | Abstain
    execute_wrappers: tuple = ()  # wrapper(call, signal, next) -> ToolResult; may only swap the signal
    post_execute: tuple = ()  # listener(call, result) -> Accept | Block | None
    finalizers: dict = field(default_factory=dict)  # definition id -> (args, content) -> content | None
    observers: tuple = ()  # observer(call, result); read-only, failures contained
    signal: Signal = field(default_factory=Signal)  # the caller's abort
    timeout_s: float | None = 120.0
    metrics: dict = field(default_factory=dict)  # call id -> seconds spent in the body
    sandbox_of: Callable | None = None  # call -> which sandbox it would run in, for the decision record
    live_parent: Callable[[str], bool] | None = None  # a bound code runtime: is this run_code call live?
