"""The shipped deadline policy: (seconds, a call's dispatch) → its result, or a recorded timeout.

The body runs on its own thread, so a body that ignores the abort signal still ends the call
on time (TOOL_TIMEOUT, the body abandoned) and later calls still run. Semantics of a timeout:
a body that returned reports what it did — a write that finished is reported done, even past
the deadline; only a body that did not return is a timeout, and then its effects are unknown.
"""

from __future__ import annotations

import threading

from .signals import Signal
from .types import ToolResult
from .watchdog import WATCHDOG

# How long a body gets, once its deadline fired, to notice and clean up (kill its process tree).
GRACE_S = 2.0
_POLL_S = 0.05


def deadline_wrapper(seconds: float, grace_s: float = GRACE_S):
    def wrapper(call, signal: Signal, proceed) -> ToolResult:
        deadline = Signal()
        WATCHDOG.arm(seconds, deadline)
        outcome: dict = {}
        done = threading.Event()

        def body() -> None:
            try:
                outcome["result"] = proceed(deadline)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
                outcome["raised"] = exc
            finally:
                done.set()

        threading.Thread(target=body, name=f"dshc-body-{call.id}", daemon=True).start()
        while not done.wait(_POLL_S):
            if deadline.is_set() or signal.is_set():
                done.wait(grace_s)
                break
        if "raised" in outcome:
            raise outcome["raised"]
        result = outcome.get("result")
        if result is not None and not (result.is_error and deadline.is_set() and not signal.is_set()):
            return result  # finished (even late): the result says what was done
        if signal.is_set():
            return _error(call, "AbortError", "ABORTED", f"`{call.name}` was aborted and did not stop in time")
        detail = (
            "it stopped when told to"
            if result is not None
            else "its body did not stop and was abandoned; what it did is unknown"
        )
        return _error(call, "ToolTimeoutError", "TOOL_TIMEOUT", f"`{call.name}` timed out after {seconds:g}s; {detail}")

    return wrapper


def _error(call, name: str, code: str, message: str) -> ToolResult:
    return ToolResult(
        call.id, call.name, True, f"Error: {message}", None, {"name": name, "code": code, "message": message}
    )
