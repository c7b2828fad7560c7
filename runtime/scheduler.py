"""A batch of calls from one assistant message → results committed in model order.

Only calls whose view entry says `parallel` and whose arguments are valid for it overlap, in a rolling pool (default 10; 1 is
serial); every other call is a barrier. Pre-dispatch stages and commits run in model order;
only bodies overlap. On abort, unstarted calls get a recorded call and an
ABORTED_BEFORE_DISPATCH result.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from .arguments import problem as argument_problem
from .pipeline import CallOutcome, Pipeline
from .stages.common import error_result
from .types import CallState, ToolCall, thaw


def execution_class(call: ToolCall, view) -> str:
    """Parallel only when the view entry the call resolves to says so and the arguments are valid
    for it (SPEC §5: a classifier given invalid arguments means exclusive); anything unsure is exclusive."""
    for entry in view.tools:
        if entry.name == call.name:
            if entry.execution != "parallel":
                return "exclusive"
            return "parallel" if argument_problem(entry.parameters_json, thaw(call.arguments)) is None else "exclusive"
    return "exclusive"


def groups(calls, view):
    """Consecutive parallel calls form one group; each exclusive call is a group of its own."""
    current: list = []
    for call in calls:
        if execution_class(call, view) == "parallel":
            current.append(call)
            continue
        if current:
            yield current
            current = []
        yield [call]
    if current:
        yield current


def run_batch(calls, ctx, pipeline: Pipeline | None = None, pool_size: int = 10) -> tuple[list[CallOutcome], tuple]:
    """Run one batch; returns the outcomes in model order and the contexts to inject after it (FIFO)."""
    pipeline = pipeline or Pipeline()
    outcomes: list[CallOutcome] = []
    with ThreadPoolExecutor(max_workers=max(1, pool_size), thread_name_prefix="dshc-tool") as pool:
        for group in groups(calls, ctx.view):
            if ctx.signal.is_set():
                outcomes.extend(_aborted(pipeline, call, ctx) for call in group)
                continue
            states = [pipeline.before_dispatch(call, ctx) for call in group]  # model order
            if len(states) == 1:
                dispatched = [pipeline.dispatch(states[0], ctx)]
            else:
                futures = [pool.submit(pipeline.dispatch, state, ctx) for state in states]
                dispatched = [future.result() for future in futures]
            outcomes.extend(pipeline.after_dispatch(state, ctx) for state in dispatched)  # commit in model order
    contexts = tuple(c for outcome in outcomes for c in outcome.contexts)
    return outcomes, contexts


def _aborted(pipeline: Pipeline, call: ToolCall, ctx) -> CallOutcome:
    """A call that never started: recorded, then answered ABORTED_BEFORE_DISPATCH."""
    state = CallState(call)
    state = pipeline.stages[0][1](state, ctx)  # the tool/call record is kept even for skipped calls
    state = replace(
        state,
        result=error_result(state, "aborted before dispatch", "ABORTED_BEFORE_DISPATCH", "AbortError"),
        final=True,
    )
    return pipeline.after_dispatch(state, ctx)
