"""Pipeline(stages).run(call, ctx) → CallOutcome: one record per stage, in DEFAULT_STAGES order."""

from __future__ import annotations

from dataclasses import dataclass

from .stages import AFTER_DISPATCH, BEFORE_DISPATCH, DEFAULT_STAGES, DISPATCH
from .types import CallState, ToolCall, ToolResult


@dataclass(frozen=True)
class CallOutcome:
    result: ToolResult
    contexts: tuple[str, ...]
    state: CallState


class Pipeline:
    def __init__(self, stages=DEFAULT_STAGES):
        self.stages = tuple(stages)
        names = [name for name, _ in self.stages]
        self._before = tuple(s for s in self.stages if s[0] in {n for n, _ in BEFORE_DISPATCH})
        self._dispatch = tuple(s for s in self.stages if s[0] in {n for n, _ in DISPATCH})
        self._after = tuple(s for s in self.stages if s[0] in {n for n, _ in AFTER_DISPATCH})
        if len(names) != len(set(names)):
            raise ValueError("a stage is listed twice")

    @staticmethod
    def _run(stages, state: CallState, ctx) -> CallState:
        for _, stage in stages:
            state = stage(state, ctx)
        return state

    def before_dispatch(self, call: ToolCall, ctx) -> CallState:
        return self._run(self._before, CallState(call), ctx)

    def dispatch(self, state: CallState, ctx) -> CallState:
        return self._run(self._dispatch, state, ctx)

    def after_dispatch(self, state: CallState, ctx) -> CallOutcome:
        state = self._run(self._after, state, ctx)
        assert state.result is not None  # after `execute`, every call has its result
        return CallOutcome(state.result, state.contexts, state)

    def run(self, call: ToolCall, ctx) -> CallOutcome:
        return self.after_dispatch(self.dispatch(self.before_dispatch(call, ctx), ctx), ctx)
